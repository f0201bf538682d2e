package db

import (
	"bytes"
	"testing"
)

// checkScriptRows checks the version 3 rows against the rest of the index:
// one scriptHashes row per addressBalance row (and no other), and a
// blockTxids row for every height row (all of them, not only the window)
// naming the block's txs in block order.
func checkScriptRows(t *testing.T, d *DB, c *synthChain) {
	t.Helper()
	want := map[string]string{}
	err := d.iterate(CFAddressBalance, nil, nil, func(k, _ []byte) (bool, error) {
		want[string(scriptHashKey(k))] = string(k)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = d.iterate(CFScriptHashes, nil, nil, func(k, v []byte) (bool, error) {
		n++
		if want[string(k)] != string(v) {
			t.Errorf("scriptHashes row %x → %x has no balance row", k, v)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want) || n == 0 {
		t.Errorf("%d scriptHashes rows for %d balance rows", n, len(want))
	}
	tip, ok, err := ReadTip(d)
	if err != nil || !ok {
		t.Fatalf("tip: %v %v", ok, err)
	}
	if rows := countRows(t, d, CFBlockTxids); rows != int(tip.Height)+1 {
		t.Errorf("%d blockTxids rows for %d blocks", rows, tip.Height+1)
	}
	for h := uint32(0); h <= tip.Height; h++ {
		txids, err := ReadBlockTxids(d, h)
		if err != nil {
			t.Fatal(err)
		}
		blk := c.blocks[h]
		if len(txids) != len(blk.Txs) {
			t.Fatalf("block %d: %d txids, want %d", h, len(txids), len(blk.Txs))
		}
		for i := range txids {
			if txids[i] != blk.Txs[i].Txid {
				t.Fatalf("block %d pos %d: %s, want %s", h, i, txids[i], blk.Txs[i].Txid)
			}
		}
		meta, err := ReadBlockMeta(d, h)
		if err != nil || meta == nil || !bytes.Equal(meta.Header, blk.Header) || len(meta.Header) != 80 {
			t.Fatalf("block %d header: %+v %v", h, meta, err)
		}
	}
}

// The rows hold through per-block connects, disconnects deeper than the
// window and bulk loads; ReadScriptByHash finds exactly the descriptors
// with a balance.
func TestScriptRowsFollowTheChain(t *testing.T) {
	chain := newSynthChain(11)
	for i := 0; i < 60; i++ {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 5, FilterParams{})
	connectAll(t, x, chain.blocks)
	checkScriptRows(t, x.db, chain)
	for i := 0; i < 25; i++ {
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	short := &synthChain{blocks: chain.blocks[:35]}
	checkScriptRows(t, x.db, short)

	b := newTestIndex(t, openTestDB(t), 5, FilterParams{})
	bulkConnect(t, b, chain.blocks, BulkOptions{RoundBytes: 8 << 10, CacheBytes: 1})
	checkScriptRows(t, b.db, chain)

	// Every descriptor of the chain resolves while it has a balance.
	for _, blk := range chain.blocks {
		for _, tx := range blk.Txs {
			for _, o := range tx.Vout {
				desc := testClassifier{}.OutputAddrDesc(o.Script)
				if desc == nil {
					continue
				}
				got, err := ReadScriptByHash(b.db, ScriptHash(scriptHashKey(desc)))
				if err != nil || !bytes.Equal(got, desc) {
					t.Fatalf("script hash of %x: %x %v", desc, got, err)
				}
			}
		}
	}
	if got, err := ReadScriptByHash(b.db, ScriptHash{1}); got != nil || err != nil {
		t.Fatalf("unknown script hash: %x %v", got, err)
	}
}
