package silentpayments

import (
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/internal/bip352"
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
	ref := newIndex(t, 10)
	connect(t, ref, c.Main)
	for _, opts := range []db.BulkOptions{{RoundBytes: 64 << 10, CacheBytes: 1}, {RoundBytes: 1 << 30, CacheBytes: 1 << 30}} {
		x := newIndex(t, 10)
		l, err := x.NewBulkLoader(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range c.Main[:len(c.Main)-2] {
			if err := l.ConnectBlock(b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Finish(); err != nil {
			t.Fatal(err)
		}
		connect(t, x, c.Main[len(c.Main)-2:])
		requireIdentical(t, x, ref)
	}
}
