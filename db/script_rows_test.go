package db

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// checkScriptRows checks the rows Electrum reads against the rest of the
// index: addressBalance keys that begin with their descriptor's script
// hash, and a blockTxids row for every height row (all of them, not only
// the window) naming the block's txs in block order.
func checkScriptRows(t *testing.T, d *DB, c *synthChain) {
	t.Helper()
	n := 0
	err := d.iterate(CFAddressBalance, nil, nil, func(k, _ []byte) (bool, error) {
		n++
		desc, err := unpackBalanceKey(k)
		if err == nil && !bytes.Equal(balanceKey(desc), k) {
			t.Errorf("addressBalance key %x is not its descriptor's", k)
		}
		return err == nil, err
	})
	if err != nil || n == 0 {
		t.Fatalf("%d addressBalance rows: %v", n, err)
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
			if err != nil || ta == nil || ta.Height != h || ta.Index != uint32(i) || len(ta.Inputs) != len(blk.Txs[i].Vin) {
				t.Fatalf("txAddresses of %d:%d: %+v %v", h, i, ta, err)
			}
			for j, vin := range blk.Txs[i].Vin {
				if ta.Coinbase {
					break
				}
				prev, err := ReadTxOutputs(d, vin.PrevTxid)
				if err != nil || prev == nil || ta.Prevouts[j].Txid != vin.PrevTxid ||
					ta.Prevouts[j].Height != prev.Height || ta.Prevouts[j].Index != prev.Index || ta.Prevouts[j].Coinbase != prev.Coinbase ||
					!bytes.Equal(ta.Inputs[j].Desc, prev.Outputs[vin.PrevVout].Desc) || ta.Inputs[j].Value != prev.Outputs[vin.PrevVout].Value {
					t.Fatalf("input %d of %d:%d: %+v from %+v, want the output %s:%d, %+v %v", j, h, i, ta.Inputs[j], ta.Prevouts[j], vin.PrevTxid, vin.PrevVout, prev, err)
				}
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
	for _, start := range []uint32{0, 1, tip.Height / 2, tip.Height} {
		if start > tip.Height {
			continue
		}
		for _, n := range []int{1, 2, int(tip.Height-start) + 1, int(tip.Height-start) + 5} {
			hs, err := ReadBlockHeaders(d, start, n)
			if err != nil || len(hs) != min(n, int(tip.Height-start)+1) {
				t.Fatalf("ReadBlockHeaders(%d, %d): %d headers, %v", start, n, len(hs), err)
			}
			for i, h := range hs {
				if !bytes.Equal(h, c.blocks[start+uint32(i)].Header) {
					t.Fatalf("ReadBlockHeaders(%d, %d)[%d] is not block %d's header", start, n, i, start+uint32(i))
				}
			}
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
				sh := ScriptHash(sha256.Sum256(desc))
				got, err := ReadScriptByHash(b.db, sh)
				if err != nil || !bytes.Equal(got, desc) {
					t.Fatalf("script hash of %x: %x %v", desc, got, err)
				}
				// A hash sharing the key's prefix is another script's.
				sh[31] ^= 1
				if got, err := ReadScriptByHash(b.db, sh); got != nil || err != nil {
					t.Fatalf("hash %x sharing a prefix resolved to %x %v", sh, got, err)
				}
			}
		}
	}
	if got, err := ReadScriptByHash(b.db, ScriptHash{1}); got != nil || err != nil {
		t.Fatalf("unknown script hash: %x %v", got, err)
	}
}
