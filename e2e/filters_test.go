package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// prodFilterConfig is Blockbook's production block filter setting
// (configs/coins/bitcoin.json).
var prodFilterConfig = map[string]any{
	"block_golomb_filter_p": 20, "block_filter_scripts": "taproot-noordinals", "block_filter_use_zeroed_key": true,
}

const filterGoldenDir = "testdata/block-filters"

// Block filters on the real stack (btcd, the demo chain with P2TR outputs
// and spends, RocksDB): golden answers of /api/v2/block-filters/, every
// stored filter checked against the scripts of its block computed from the
// raw blocks alone, the bulk loader writing the same index as block-by-block
// connects, and a restart with other filter settings refused.
func TestE2EBlockFilters(t *testing.T) {
	node := startNode(t)
	g := demoChain(t)
	submit(t, g, node, 1)
	cfg := writeConfig(t, node, prodFilterConfig)
	dirA, dirB := t.TempDir(), t.TempDir()
	inst := startInProcess(t, cfg, dirA, nil)
	tipH, tipHash := g.Tip()
	waitTip(t, inst.base, tipH, tipHash.String(), inst.logs)

	want := expectedTaprootScripts(t, g.Blocks())
	checkStoredFilters(t, inst.base, g.Blocks(), want)
	checkFilterGoldens(t, inst.base, g, want)

	// The bulk loader writes the same filters (and everything else).
	bulk := startInProcess(t, cfg, dirB, func(o *app.Options) { o.BulkThreshold = 1 })
	waitTip(t, bulk.base, tipH, tipHash.String(), bulk.logs)
	if !strings.Contains(bulk.logs.String(), bulkSyncStarted) {
		t.Fatalf("second instance did not bulk load\n%s", tail(bulk.logs.String(), 20))
	}
	inst.stop(t)
	bulk.stop(t)
	compareIndexes(t, dirA, dirB)

	// Other filter settings on the same datadir: refused, naming the keys.
	other := writeConfig(t, node, map[string]any{"block_golomb_filter_p": 19, "block_filter_scripts": "taproot-noordinals", "block_filter_use_zeroed_key": true})
	o := &app.Options{BlockchainCfg: other, DataDir: dirA, Public: "none", Internal: "none", Workers: 1,
		DBCache: 32 << 20, DBMaxOpenFiles: 256, Rollback: -1, SyncMemoryMB: 64, LogFormat: "text"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := app.Run(ctx, o, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "block_golomb_filter_p=20") || !strings.Contains(err.Error(), "block_golomb_filter_p=19") || !strings.Contains(err.Error(), "reindex") {
		t.Fatalf("restart with block_golomb_filter_p 19 on an index built with 20: %v", err)
	}
}

// expectedTaprootScripts replays the raw blocks (btcd's types only) and
// returns, per height, the distinct P2TR scripts the block's txs spend or
// pay, without inscription reveals and the txs they spend
// (taproot-noordinals).
func expectedTaprootScripts(t *testing.T, blocks []*wire.MsgBlock) [][][]byte {
	t.Helper()
	prev := map[wire.OutPoint][]byte{}
	isP2TR := func(s []byte) bool { return len(s) == 34 && s[0] == 0x51 && s[1] == 0x20 }
	envelope := []byte{0x00, 0x63, 0x03, 'o', 'r', 'd', 0x01}
	out := make([][][]byte, len(blocks))
	for h, b := range blocks {
		perTx := make([][][]byte, len(b.Transactions))
		excluded := map[[32]byte]bool{}
		for i, tx := range b.Transactions {
			inscribed := false
			for _, in := range tx.TxIn {
				if s, ok := prev[in.PreviousOutPoint]; ok && isP2TR(s) {
					perTx[i] = append(perTx[i], s)
				}
				inscribed = inscribed || len(in.Witness) > 2 && bytes.Contains(in.Witness[1], envelope)
			}
			for n, o := range tx.TxOut {
				prev[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o.PkScript
				if isP2TR(o.PkScript) {
					perTx[i] = append(perTx[i], o.PkScript)
				}
			}
			if inscribed && len(perTx[i]) > 0 {
				excluded[tx.TxHash()] = true
				for _, in := range tx.TxIn {
					excluded[in.PreviousOutPoint.Hash] = true
				}
			}
		}
		seen := map[string]bool{}
		for i, tx := range b.Transactions {
			if excluded[tx.TxHash()] {
				continue
			}
			for _, s := range perTx[i] {
				if !seen[string(s)] {
					seen[string(s)] = true
					out[h] = append(out[h], s)
				}
			}
		}
	}
	return out
}

type blockFiltersAnswer struct {
	P            uint8  `json:"P"`
	M            uint64 `json:"M"`
	ZeroedKey    bool   `json:"zeroedKey"`
	BlockFilters map[string]struct {
		BlockHash string `json:"blockHash"`
		Filter    string `json:"filter"`
	} `json:"blockFilters"`
}

// checkStoredFilters fetches every block's filter and requires it to hold
// exactly the expected scripts: N equal to their number, each one matching
// (zeroed key), and no filter where no script qualifies.
func checkStoredFilters(t *testing.T, base string, blocks []*wire.MsgBlock, want [][][]byte) {
	t.Helper()
	var ans blockFiltersAnswer
	getJSON(t, fmt.Sprintf("%s/api/v2/block-filters/?scriptType=taproot-noordinals&from=0&to=%d", base, len(blocks)-1), 200, &ans)
	if ans.P != 20 || ans.M != 1<<20 || !ans.ZeroedKey || len(ans.BlockFilters) != len(blocks) {
		t.Fatalf("answer P %d M %d zeroedKey %v with %d blocks", ans.P, ans.M, ans.ZeroedKey, len(ans.BlockFilters))
	}
	var zeroKey [gcs.KeySize]byte
	withFilter, scripts := 0, 0
	for h, b := range blocks {
		e := ans.BlockFilters[fmt.Sprint(h)]
		if e.BlockHash != b.BlockHash().String() {
			t.Fatalf("height %d: blockHash %q, want %s", h, e.BlockHash, b.BlockHash())
		}
		if len(want[h]) == 0 {
			if e.Filter != "" {
				t.Fatalf("height %d: filter %s for a block without taproot scripts", h, e.Filter)
			}
			continue
		}
		raw, err := hex.DecodeString(e.Filter)
		if err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		f, err := gcs.FromNBytes(ans.P, ans.M, raw)
		if err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if int(f.N()) != len(want[h]) {
			t.Fatalf("height %d: N %d, want %d unique taproot scripts", h, f.N(), len(want[h]))
		}
		if ok, err := f.MatchAny(zeroKey, want[h]); err != nil || !ok {
			t.Fatalf("height %d: MatchAny %v %v", h, ok, err)
		}
		for _, s := range want[h] {
			if ok, err := f.Match(zeroKey, s); err != nil || !ok {
				t.Fatalf("height %d: script %x does not match (%v)", h, s, err)
			}
		}
		withFilter++
		scripts += len(want[h])
	}
	if withFilter < 10 {
		t.Fatalf("only %d blocks with taproot scripts: the demo chain does not exercise filters", withFilter)
	}
	t.Logf("%d of %d blocks have a filter, %d taproot scripts in all", withFilter, len(blocks), scripts)
}

// checkFilterGoldens compares the answers with the golden files of
// e2e/testdata/block-filters (rewritten with -update). They are not in
// the typings' check: blockbook-api.d.ts has no type for this endpoint.
func checkFilterGoldens(t *testing.T, base string, g *chaingen.Generator, want [][][]byte) {
	t.Helper()
	tip := g.Height()
	spend := g.Ledger().Txs[notableTxs(t, g)["spend-witness_v1_taproot"]].Height
	empty := 1
	for empty < len(want) && len(want[empty]) > 0 {
		empty++
	}
	if len(want[spend]) == 0 || empty == len(want) {
		t.Fatalf("the demo chain has no taproot script at the first taproot spend (%d) or no block without one", spend)
	}
	q := "/api/v2/block-filters/?scriptType=taproot-noordinals&"
	reqs := []struct {
		name, path string
		code       int
	}{
		{"last-5", q + "lastN=5", 200},
		{"taproot-spend", fmt.Sprintf("%sfrom=%d&to=%d", q, spend-1, spend+1), 200},
		{"beyond-tip", fmt.Sprintf("%sfrom=%d&to=%d", q, tip-1, tip+2), 200},
		{"no-taproot-scripts", fmt.Sprintf("%sfrom=%d&to=%d", q, empty, empty), 200},
		{"lastN-over-from-to", q + "lastN=1&from=1&to=2", 200},
		{"error-script-type", "/api/v2/block-filters/?scriptType=taproot&lastN=1", 400},
		{"error-no-script-type", "/api/v2/block-filters/?lastN=1", 400},
		{"error-missing-parameters", q, 400},
		{"error-bad-numbers", q + "lastN=abc&from=x&to=1.5", 400},
		{"error-from-after-to", q + "from=20&to=10", 400},
		{"error-from-without-to", q + "from=20", 400},
		{"error-too-many", q + "lastN=10001", 400},
	}
	gs := newGoldenSet(t, filterGoldenDir, "TestE2EBlockFilters")
	for _, r := range reqs {
		got := fetchGolden(t, base+r.path, r.code)
		gs.check(r.name, got)
	}
	gs.finish()
}
