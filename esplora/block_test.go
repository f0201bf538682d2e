package esplora_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"testing"
)

type esploraBlock struct {
	ID                string  `json:"id"`
	Height            int     `json:"height"`
	Version           int32   `json:"version"`
	Timestamp         int64   `json:"timestamp"`
	TxCount           int     `json:"tx_count"`
	Size              int     `json:"size"`
	Weight            int     `json:"weight"`
	MerkleRoot        string  `json:"merkle_root"`
	Previousblockhash *string `json:"previousblockhash"`
	Mediantime        int64   `json:"mediantime"`
	Nonce             uint32  `json:"nonce"`
	Bits              uint32  `json:"bits"`
	Difficulty        float64 `json:"difficulty"`
}

// checkBlock compares a block answer with the raw block.
func checkBlock(t *testing.T, f *fixture, got esploraBlock, h int) {
	t.Helper()
	b := f.Block(h)
	weight := 0
	for _, tx := range b.Transactions {
		weight += tx.SerializeSizeStripped()*3 + tx.SerializeSize()
	}
	weight += (b.SerializeSizeStripped() - sumStripped(f, h)) * 4
	var times []int64
	for i := max(0, h-10); i <= h; i++ {
		times = append(times, f.Block(i).Header.Timestamp.Unix())
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	prevOK := h == 0 && got.Previousblockhash == nil ||
		h > 0 && got.Previousblockhash != nil && *got.Previousblockhash == b.Header.PrevBlock.String()
	if got.ID != b.BlockHash().String() || got.Height != h || got.Version != b.Header.Version ||
		got.Timestamp != b.Header.Timestamp.Unix() || got.TxCount != len(b.Transactions) ||
		got.Size != len(f.Raw[h]) || got.Weight != weight || got.MerkleRoot != b.Header.MerkleRoot.String() ||
		!prevOK || got.Mediantime != times[len(times)/2] || got.Nonce != b.Header.Nonce || got.Bits != b.Header.Bits ||
		got.Difficulty <= 0 {
		t.Fatalf("block %d: %+v, want weight %d mediantime %d", h, got, weight, times[len(times)/2])
	}
}

// sumStripped is the stripped size of a block's txs (the rest of the
// stripped block is its header and tx count).
func sumStripped(f *fixture, h int) int {
	n := 0
	for _, tx := range f.Block(h).Transactions {
		n += tx.SerializeSizeStripped()
	}
	return n
}

func TestBlocks(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tip := f.TipHeight()
	if code, body := f.get(t, "/api/blocks/tip/height"); code != 200 || body != strconv.Itoa(tip) {
		t.Fatalf("tip height: %d %s", code, body)
	}
	if code, body := f.get(t, "/api/blocks/tip/hash"); code != 200 || body != f.BlockHash(tip) {
		t.Fatalf("tip hash: %d %s", code, body)
	}
	for _, h := range []int{0, 1, 5, 60, tip} {
		hash := f.BlockHash(h)
		var got esploraBlock
		f.getJSON(t, "/api/block/"+hash, &got)
		checkBlock(t, f, got, h)
		if code, body := f.get(t, "/api/block-height/"+strconv.Itoa(h)); code != 200 || body != hash {
			t.Fatalf("block-height %d: %d %s", h, code, body)
		}
		b := f.Block(h)
		var hdr bytes.Buffer
		if err := b.Header.Serialize(&hdr); err != nil {
			t.Fatal(err)
		}
		if code, body := f.get(t, "/api/block/"+hash+"/header"); code != 200 || body != hex.EncodeToString(hdr.Bytes()) {
			t.Fatalf("header %d: %d %s", h, code, body)
		}
		if code, body := f.get(t, "/api/block/"+hash+"/raw"); code != 200 || body != string(f.Raw[h]) {
			t.Fatalf("raw block %d: %d", h, code)
		}
		var ids []string
		f.getJSON(t, "/api/block/"+hash+"/txids", &ids)
		if len(ids) != len(b.Transactions) {
			t.Fatalf("txids of %d: %d", h, len(ids))
		}
		for i, tx := range b.Transactions {
			if ids[i] != tx.TxHash().String() {
				t.Fatalf("txids of %d: %v", h, ids)
			}
			if code, body := f.get(t, fmt.Sprintf("/api/block/%s/txid/%d", hash, i)); code != 200 || body != ids[i] {
				t.Fatalf("txid %d of %d: %d %s", i, h, code, body)
			}
		}
		f.wantError(t, "GET", fmt.Sprintf("/api/block/%s/txid/%d", hash, len(ids)), "", 404, "tx index out of range")
		var txs []esploraTx
		f.getJSON(t, "/api/block/"+hash+"/txs", &txs)
		if len(txs) != min(25, len(b.Transactions)) {
			t.Fatalf("txs of %d: %d", h, len(txs))
		}
		for i := range txs {
			checkTx(t, f, &txs[i], b.Transactions[i], f.Tx(ids[i]).Prevouts, h)
		}
		f.wantError(t, "GET", "/api/block/"+hash+"/txs/25", "", 404, "start index out of range")
		f.wantError(t, "GET", "/api/block/"+hash+"/txs/3", "", 400, "start index must be a multiple of 25")
		var st struct {
			InBestChain bool    `json:"in_best_chain"`
			Height      *int    `json:"height"`
			NextBest    *string `json:"next_best"`
		}
		f.getJSON(t, "/api/block/"+hash+"/status", &st)
		nextOK := h == tip && st.NextBest == nil || h < tip && st.NextBest != nil && *st.NextBest == f.BlockHash(h+1)
		if !st.InBestChain || st.Height == nil || *st.Height != h || !nextOK {
			t.Fatalf("status of %d: %+v", h, st)
		}
	}
	unknown := "00000000000000000000000000000000000000000000000000000000000000aa"
	if code, body := f.get(t, "/api/block/"+unknown+"/status"); code != 200 || body != `{"in_best_chain":false,"height":null,"next_best":null}` {
		t.Errorf("status of an unknown block: %d %s", code, body)
	}
	for _, sub := range []string{"", "/header", "/raw", "/txids", "/txs", "/txid/0"} {
		f.wantError(t, "GET", "/api/block/"+unknown+sub, "", 404, "Block not found")
		f.wantError(t, "GET", "/api/block/nothex"+sub, "", 400, "Invalid hex string")
	}
	f.wantError(t, "GET", "/api/block-height/"+strconv.Itoa(tip+1), "", 404, "Block not found")
	f.wantError(t, "GET", "/api/block-height/x", "", 400, "Invalid number")
	f.wantError(t, "GET", "/api/block-height/-1", "", 400, "Invalid number")
}

// TestBlockLists pages /blocks from the tip and from a height, down to
// genesis.
func TestBlockLists(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tip := f.TipHeight()
	for _, c := range []struct {
		path string
		from int
	}{{"/api/blocks", tip}, {"/api/blocks/", tip}, {"/api/blocks/x", tip}, {"/api/blocks/30", 30}, {"/api/blocks/5", 5}, {"/api/blocks/0", 0}} {
		var got []esploraBlock
		f.getJSON(t, c.path, &got)
		want := min(10, c.from+1)
		if len(got) != want {
			t.Fatalf("%s: %d blocks, want %d", c.path, len(got), want)
		}
		for i, b := range got {
			checkBlock(t, f, b, c.from-i)
		}
	}
	f.wantError(t, "GET", "/api/blocks/"+strconv.Itoa(tip+1), "", 404, "Block not found")
	if code, _ := f.get(t, "/api/blocks/tip/other"); code != http.StatusNotFound {
		t.Errorf("/blocks/tip/other: %d", code)
	}
}
