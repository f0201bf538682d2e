package db

import (
	"bytes"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
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
	nrows := 0
	for h := uint32(0); h <= tip.Height; h++ {
		nrows += (len(c.blocks[h].Txs) + txidsPerRow - 1) / txidsPerRow
	}
	if rows := countRows(t, d, CFBlockTxids); rows != nrows {
		t.Errorf("%d blockTxids rows, want %d (%d txids per row)", rows, nrows, txidsPerRow)
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
			at, ok, err := ReadTxidAt(d, h, uint32(i))
			if err != nil || !ok || at != txids[i] {
				t.Fatalf("ReadTxidAt(%d, %d) = %s %v %v", h, i, at, ok, err)
			}
			ta, err := ReadTxAddresses(d, txids[i])
			if err != nil || ta == nil || ta.Height != h || ta.Index != uint32(i) {
				t.Fatalf("txAddresses of %d:%d: %+v %v", h, i, ta, err)
			}
		}
		if _, ok, err := ReadTxidAt(d, h, uint32(len(txids))); ok || err != nil {
			t.Fatalf("ReadTxidAt past block %d's end: %v %v", h, ok, err)
		}
		meta, err := ReadBlockMeta(d, h)
		if err != nil || meta == nil || !bytes.Equal(meta.Header, blk.Header) || len(meta.Header) != 80 {
			t.Fatalf("block %d header: %+v %v", h, meta, err)
		}
	}
	checkSpendRows(t, d, c.blocks[:tip.Height+1])
}

// checkSpendRows checks ReadSpends of every tx of blocks against the
// inputs of blocks: exactly the outputs they spend, each with its spender.
func checkSpendRows(t *testing.T, d *DB, blocks []*bchain.Block) {
	t.Helper()
	want := map[bchain.Hash]map[uint32]Spend{}
	for _, blk := range blocks {
		for i, tx := range blk.Txs {
			if tx.IsCoinbase() {
				continue
			}
			for j, in := range tx.Vin {
				if want[in.PrevTxid] == nil {
					want[in.PrevTxid] = map[uint32]Spend{}
				}
				want[in.PrevTxid][in.PrevVout] = Spend{Txid: tx.Txid, Index: uint32(i), Vin: uint32(j), Height: blk.Height}
			}
		}
	}
	n := 0
	for _, blk := range blocks {
		for _, tx := range blk.Txs {
			got, err := ReadSpends(d, tx.Txid)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want[tx.Txid]) {
				t.Fatalf("tx %s: %d spends, want %d", tx.Txid, len(got), len(want[tx.Txid]))
			}
			for vout, s := range got {
				if w := want[tx.Txid][vout]; *s != w {
					t.Fatalf("spend of %s:%d: %+v, want %+v", tx.Txid, vout, *s, w)
				}
				n++
			}
		}
	}
	if rows := countRows(t, d, CFSpends); rows != n {
		t.Errorf("%d spends rows, %d found by ReadSpends", rows, n)
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
