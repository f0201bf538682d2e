package zec

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// recordedBlock is what the tests read of a zcashd/zebrad getblock
// verbosity 2 answer.
type recordedBlock struct {
	Hash             string `json:"hash"`
	Size             int    `json:"size"`
	Version          uint32 `json:"version"`
	Prev             string `json:"previousblockhash"`
	MerkleRoot       string `json:"merkleroot"`
	BlockCommitments string `json:"blockcommitments"`
	Time             uint32 `json:"time"`
	Bits             string `json:"bits"`
	Nonce            string `json:"nonce"`
	Solution         string `json:"solution"`
	Tx               []struct {
		Hex             string `json:"hex"`
		Txid            string `json:"txid"`
		Version         int32  `json:"version"`
		ValueBalanceZat int64  `json:"valueBalanceZat"`
		Orchard         *struct {
			ValueBalanceZat int64 `json:"valueBalanceZat"`
		} `json:"orchard"`
		Vjoinsplit []struct {
			VpubOldZat int64 `json:"vpub_oldZat"`
			VpubNewZat int64 `json:"vpub_newZat"`
		} `json:"vjoinsplit"`
		Vout []struct {
			ValueZat     uint64 `json:"valueZat"`
			ScriptPubKey struct {
				Hex       string   `json:"hex"`
				Addresses []string `json:"addresses"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
	} `json:"tx"`
}

func reversedHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("hash %q: %v", s, err)
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return b
}

// serialize rebuilds the raw block from the answer's header fields and
// tx hexes, in the wire layout (hashes in internal byte order).
func (rb *recordedBlock) serialize(t *testing.T) []byte {
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, rb.Version)
	buf.Write(reversedHex(t, rb.Prev))
	buf.Write(reversedHex(t, rb.MerkleRoot))
	buf.Write(reversedHex(t, rb.BlockCommitments))
	_ = binary.Write(&buf, binary.LittleEndian, rb.Time)
	bits, err := strconv.ParseUint(rb.Bits, 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	_ = binary.Write(&buf, binary.LittleEndian, uint32(bits))
	buf.Write(reversedHex(t, rb.Nonce))
	sol, err := hex.DecodeString(rb.Solution)
	if err != nil {
		t.Fatal(err)
	}
	_ = wire.WriteVarInt(&buf, 0, uint64(len(sol)))
	buf.Write(sol)
	_ = wire.WriteVarInt(&buf, 0, uint64(len(rb.Tx)))
	for _, tx := range rb.Tx {
		b, err := hex.DecodeString(tx.Hex)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	return buf.Bytes()
}

// TestRealBlocksZcashRecordedShielded checks mainnet block 2,222,000 (a v4
// coinbase and a v5 tx taking 5000 zatoshi out of Sapling) against zebrad's
// recorded getblock verbosity 2 answer: block hash, txids, output values
// and addresses, and the value balance zcashd's fields give.
func TestRealBlocksZcashRecordedShielded(t *testing.T) {
	var rb recordedBlock
	btctest.ReadJSON(t, "zebrad-getblock-verbosity2-mainnet-2222000.json", &rb)
	raw := rb.serialize(t)
	p := mainParser()
	blk, err := p.ParseBlock(raw)
	if err != nil {
		t.Fatal(err)
	}
	if blk.Hash.String() != rb.Hash || blk.Size != rb.Size || blk.MerkleRoot != btctest.MerkleRoot(blk.Txs) || len(blk.Txs) != len(rb.Tx) {
		t.Fatalf("block %s of %d bytes, recorded %s of %d", blk.Hash, blk.Size, rb.Hash, rb.Size)
	}
	shielded := 0
	for i, rt := range rb.Tx {
		tx := &blk.Txs[i]
		want := rt.ValueBalanceZat
		if rt.Orchard != nil {
			want += rt.Orchard.ValueBalanceZat
		}
		for _, js := range rt.Vjoinsplit {
			want += js.VpubNewZat - js.VpubOldZat
		}
		if tx.Txid.String() != rt.Txid || tx.Version != rt.Version || tx.ValueBalance != want {
			t.Errorf("tx %d: %s v%d balance %d, recorded %s v%d balance %d", i, tx.Txid, tx.Version, tx.ValueBalance, rt.Txid, rt.Version, want)
		}
		if want != 0 {
			shielded++
		}
		if len(tx.Vout) != len(rt.Vout) {
			t.Fatalf("tx %d: %d outputs, recorded %d", i, len(tx.Vout), len(rt.Vout))
		}
		for n, ro := range rt.Vout {
			o := tx.Vout[n]
			addrs, ok := p.OutputAddresses(o.Script)
			if hex.EncodeToString(o.Script) != ro.ScriptPubKey.Hex || o.Value != ro.ValueZat ||
				!ok || len(ro.ScriptPubKey.Addresses) != 1 || addrs[0] != ro.ScriptPubKey.Addresses[0] {
				t.Errorf("tx %d out %d: %v %d, recorded %v %d", i, n, addrs, o.Value, ro.ScriptPubKey.Addresses, ro.ValueZat)
			}
		}
	}
	if shielded == 0 {
		t.Error("the block has no tx with a value balance")
	}
}
