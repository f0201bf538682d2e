package scalegen

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// TestBlocksDecodeAndLink checks what the indexer relies on: every block
// decodes with btcd's wire code, hashes to its index record, links to its
// parent, meets the regtest target and commits to its txs' merkle root;
// every input spends an output created earlier.
func TestBlocksDecodeAndLink(t *testing.T) {
	dir := t.TempDir()
	st, err := Generate(dir, Options{Txs: 3000, MaxBlockTxs: 50, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if int(s.Tip())+1 != st.Blocks {
		t.Fatalf("index has %d blocks, stats %d", s.Tip()+1, st.Blocks)
	}
	seen := map[wire.OutPoint]bool{}
	txs := 0
	prev := chainhash.Hash{}
	for h := int32(0); h <= s.Tip(); h++ {
		b := readBlock(t, s, h)
		hash := b.BlockHash()
		if hash != chainhash.Hash(s.recs[h].hash) || (h > 0 && b.Header.PrevBlock != prev) {
			t.Fatalf("block %d: hash %s or parent %s wrong", h, hash, b.Header.PrevBlock)
		}
		if h == 0 && hash != *chaincfg.RegressionNetParams.GenesisHash {
			t.Fatal("block 0 is not the regtest genesis")
		}
		if h > 0 && hash[31] >= 0x7f {
			t.Fatalf("block %d above the regtest target", h)
		}
		var ids [][32]byte
		for i, tx := range b.Transactions {
			id := tx.TxHash()
			ids = append(ids, id)
			for _, in := range tx.TxIn {
				if i > 0 && !seen[in.PreviousOutPoint] {
					t.Fatalf("block %d tx %s spends unknown or spent %v", h, id, in.PreviousOutPoint)
				}
				delete(seen, in.PreviousOutPoint)
			}
			for v := range tx.TxOut {
				seen[wire.OutPoint{Hash: id, Index: uint32(v)}] = true
			}
		}
		if h > 0 && merkleRoot(ids) != b.Header.MerkleRoot {
			t.Fatalf("block %d: merkle root", h)
		}
		txs += len(b.Transactions)
		prev = hash
	}
	if txs != st.Txs {
		t.Fatalf("%d txs in blocks, stats %d", txs, st.Txs)
	}
}

// readBlock reads and decodes the block at height h with btcd's wire code.
func readBlock(t *testing.T, s *Server, h int32) *wire.MsgBlock {
	t.Helper()
	raw, err := s.block(h)
	if err != nil {
		t.Fatal(err)
	}
	var b wire.MsgBlock
	if err := b.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatalf("block %d: %v", h, err)
	}
	return &b
}
