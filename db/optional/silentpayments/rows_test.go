package silentpayments

import (
	"bytes"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/internal/bip352"
	"github.com/openexplorer/blockbook/tools/optindex"
	"github.com/openexplorer/blockbook/tools/spchain"
)

// The index holds exactly the oracle's rows: the payments' txs have one,
// the txs BIP352 skips (no eligible input; a witness v2 input) none.
func TestRowsMatchOracle(t *testing.T) {
	c := spChains(t)
	x := newIndex(t, 300)
	connect(t, x, c.Main)
	want, got := oracleRows(t, c.MainRaw), storedRows(t, x)
	if !slices.EqualFunc(got, want, func(a, b Row) bool {
		return a.Height == b.Height && a.Index == b.Index && a.Tweak == b.Tweak && slices.Equal(a.Outputs, b.Outputs)
	}) {
		t.Fatalf("%d rows, oracle %d", len(got), len(want))
	}
	has := map[[2]uint32]bool{}
	for _, r := range got {
		has[[2]uint32{r.Height, r.Index}] = true
	}
	for _, txid := range c.SP.Eligible {
		if h, i := position(t, c, txid); !has[[2]uint32{h, i}] {
			t.Errorf("eligible tx %s has no row", txid)
		}
	}
	for _, txid := range c.SP.Ineligible {
		if h, i := position(t, c, txid); has[[2]uint32{h, i}] {
			t.Errorf("tx %s that BIP352 skips has a row", txid)
		}
	}
	if len(got) <= len(c.SP.Eligible) {
		t.Fatalf("%d rows: the demo part has none", len(got))
	}
}

// scanBlock runs the receiver's scanner over every tweak of the block
// against the block's taproot outputs (as a light wallet matches a block's
// filter) and returns the keys found.
func scanBlock(t *testing.T, c *spchain.Chain, x *db.UtxoIndex, height uint32) map[[32]byte]bool {
	t.Helper()
	s, err := bip352.NewScanner(c.Receiver.ScanKey(), c.Receiver.SpendPub(), c.Receiver.Labels)
	if err != nil {
		t.Fatal(err)
	}
	var keys [][32]byte
	for _, tx := range c.Main[height].Txs {
		for _, o := range tx.Vout {
			if bip352.IsP2TR(o.Script) {
				keys = append(keys, [32]byte(o.Script[2:]))
			}
		}
	}
	tweaks, err := BlockTweaks(x.DB(), height)
	if err != nil {
		t.Fatal(err)
	}
	found := map[[32]byte]bool{}
	for _, tw := range tweaks {
		ms, err := s.Scan(tw.Tweak[:], slices.Clone(keys))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			found[m.Output] = true
		}
	}
	return found
}

// A scanner that knows only the scan and spend keys finds, from the
// tweaks, exactly the payments (labeled ones included), and not the one
// of the tx BIP352 skips.
func TestScannerFindsPayments(t *testing.T) {
	c := spChains(t)
	x := newIndex(t, 300)
	connect(t, x, c.Main)
	found := scanBlock(t, c, x, uint32(c.SP.PayHeight))
	want := map[[32]byte]bool{}
	labeled := 0
	for _, p := range c.SP.Payments {
		want[p.Key] = true
		if p.Label != nil {
			labeled++
		}
	}
	if len(found) != len(want) || labeled == 0 {
		t.Fatalf("found %d payments, want %d (%d labeled)", len(found), len(want), labeled)
	}
	for k := range want {
		if !found[k] {
			t.Errorf("payment %x not found", k)
		}
	}
	if found[c.SP.Skipped.Key] {
		t.Error("found the payment of the tx with a witness v2 input")
	}
}

// tweakAt is the tweak of a tx of the chain, read at x's tip.
func tweakAt(t *testing.T, c *spchain.Chain, x *db.UtxoIndex, txid [32]byte) Tweak {
	t.Helper()
	h, i := position(t, c, txid)
	tweaks, err := BlockTweaks(x.DB(), h)
	if err != nil {
		t.Fatal(err)
	}
	for _, tw := range tweaks {
		if tw.Index == i {
			return tw
		}
	}
	t.Fatalf("no tweak for %x", txid)
	return Tweak{}
}

// The cut-through values follow the spends: the tx whose one payment is
// spent has no live output, the two-payment tx drops to its smaller one;
// a reorg that drops the spending block restores both, and disconnecting
// is byte-exact (with and without the window refill).
func TestCutThroughFollowsSpendsAndReorgs(t *testing.T) {
	c := spChains(t)
	p2pkh, pair := c.SP.Eligible[0], c.SP.Eligible[4]
	for _, keep := range []int{3, 300} {
		x := newIndex(t, keep)
		connect(t, x, c.Main[:c.SP.PayHeight+1])
		before := newIndex(t, keep)
		connect(t, before, c.Main[:c.SP.PayHeight+1])
		if tw := tweakAt(t, c, x, p2pkh); !tw.Live || tw.Unspent != 100_000_000 {
			t.Fatalf("before the spend: %+v", tw)
		}
		connect(t, x, c.Main[c.SP.PayHeight+1:])
		if tw := tweakAt(t, c, x, p2pkh); tw.Live || tw.Unspent != 0 || tw.Highest != 100_000_000 {
			t.Fatalf("spent payment: %+v", tw)
		}
		if tw := tweakAt(t, c, x, pair); !tw.Live || tw.Unspent != 200_000_000 || tw.Highest != 300_000_000 {
			t.Fatalf("half-spent pair: %+v", tw)
		}
		if _, _, err := x.DisconnectTip(c.Refill); err != nil {
			t.Fatal(err)
		}
		requireIdentical(t, x, before)
		connect(t, x, c.Fork[c.SP.PayHeight+1:])
		if tw := tweakAt(t, c, x, pair); !tw.Live || tw.Unspent != 300_000_000 {
			t.Fatalf("after the reorg: %+v", tw)
		}
		fresh := newIndex(t, keep)
		connect(t, fresh, c.Fork)
		requireIdentical(t, x, fresh)
	}
}

// A bulk load writes the rows per-block connects write.
func TestBulkEqualsPerBlock(t *testing.T) {
	c := spChains(t)
	optindex.RequireBulkEqualsPerBlock(t, Index{}, c.Main, len(c.Main)-2)
}

// recorder keeps the rows a connect puts, in order.
type recorder struct{ keys, vals [][]byte }

func (r *recorder) Put(_ db.CF, k, v []byte) { r.keys, r.vals = append(r.keys, k), append(r.vals, v) }
func (r *recorder) Delete(db.CF, []byte)     {}

// A block large enough to compute its tweaks on several goroutines gives
// the rows, in the same order, that computing them one by one gives.
func TestParallelConnectEqualsSequential(t *testing.T) {
	c := spChains(t)
	scripts := map[wire.OutPoint][]byte{}
	for _, mb := range c.MainRaw {
		for _, tx := range mb.Transactions {
			for n, o := range tx.TxOut {
				scripts[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o.PkScript
			}
		}
	}
	pay := c.Main[c.SP.PayHeight]
	raw := c.MainRaw[c.SP.PayHeight]
	blk := &bchain.Block{Txs: pay.Txs[:1]}
	ib := &db.IndexedBlock{Height: 7, Txs: make([]db.IndexedTx, 1)}
	for len(blk.Txs) < 4*parallelMin {
		for i := 1; i < len(pay.Txs); i++ {
			blk.Txs = append(blk.Txs, pay.Txs[i])
			var itx db.IndexedTx
			for _, in := range raw.Transactions[i].TxIn {
				itx.Inputs = append(itx.Inputs, db.IndexedInput{TxAddr: db.TxAddr{Desc: scripts[in.PreviousOutPoint]}})
			}
			ib.Txs = append(ib.Txs, itx)
		}
	}
	var got recorder
	if err := (Index{}).ConnectBlock(&got, &db.OptionalBlock{Block: blk, Indexed: ib}); err != nil {
		t.Fatal(err)
	}
	var want recorder
	for i := range blk.Txs {
		if r, ok := TxRow(&blk.Txs[i], ib.Txs[i].Inputs); ok {
			r.Height, r.Index = 7, uint32(i)
			want.Put(db.CFSilentPayments, rowKey(7, uint32(i)), packValue(&r))
		}
	}
	if len(want.keys) < parallelMin || !slices.EqualFunc(got.keys, want.keys, bytes.Equal) || !slices.EqualFunc(got.vals, want.vals, bytes.Equal) {
		t.Fatalf("%d rows in parallel, %d one by one", len(got.keys), len(want.keys))
	}
}
