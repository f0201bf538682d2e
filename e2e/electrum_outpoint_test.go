package e2e

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// outpointFlow follows Electrum outpoint subscriptions (electrum-protocol
// PR #2) through a CPFP pair's life on btcd, inside TestElectrumE2E: a
// 1 sat/vB parent paying an output that a 41 sat/vB child spends, both
// broadcast, the child replaced (RBF), the parent and the replacement
// mined in the block of that test's payment, and reorged away with it. The same pair checks mempool.get_fee_histogram against the
// projected blocks: the parent is binned at the package's rate.
type outpointFlow struct {
	t    *testing.T
	c    *electrumClient
	pair []*wire.MsgTx
	// ops are the outpoints followed: the output the child spends, the
	// replaced child's output, and the confirmed output the parent spends.
	ops [3]wire.OutPoint
	// told is the status each was last notified (by key).
	told map[string]string
}

// startOutpointFlow subscribes to the outpoints before the pair exists,
// broadcasts the pair and checks each notification and the histogram.
func startOutpointFlow(t *testing.T, addr string, g *chaingen.Generator, node *regtest.Node) *outpointFlow {
	t.Helper()
	start := time.Now()
	f := &outpointFlow{t: t, c: dialElectrum(t, addr), told: map[string]string{}}
	f.c.ok("server.version", "e2e-outpoints", "1.6")
	if feat := f.c.ok("server.features"); !strings.Contains(string(feat), `"method_flavours":{"blockchain.outpoint.subscribe":{"requires_spk_hint":false}}`) {
		t.Fatalf("1.6 features: %s", feat)
	}
	old := dialElectrum(t, addr)
	old.ok("server.version", "e2e-old", "1.4")
	if feat := old.ok("server.features"); strings.Contains(string(feat), "method_flavours") {
		t.Errorf("1.4 features: %s", feat)
	}
	if _, e := old.try("blockchain.outpoint.get_status", strings.Repeat("00", 32), 0); !strings.Contains(string(e), "-32601") {
		t.Errorf("1.4 client: outpoint method answered %s", e)
	}
	p, err := g.Address(chaingen.P2WPKH, 9201)
	if err != nil {
		t.Fatal(err)
	}
	const paid = 400_000
	parent, err := g.CreatePayment([]chaingen.Output{{Address: p, Value: paid}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var coin []chaingen.Coin
	for _, cn := range g.Coins(parent) {
		if cn.Value == paid {
			coin = append(coin, cn)
		}
	}
	q, err := g.Address(chaingen.P2WPKH, 9202)
	if err != nil || len(coin) != 1 {
		t.Fatalf("the parent's output: %v %v", coin, err)
	}
	child, err := g.Spend(coin, []chaingen.Output{{Address: q, Value: paid / 2}}, 41)
	if err != nil {
		t.Fatal(err)
	}
	prevs, err := g.Prevouts(parent)
	if err != nil {
		t.Fatal(err)
	}
	f.pair = []*wire.MsgTx{parent, child}
	f.ops = [3]wire.OutPoint{coin[0].OutPoint, {Hash: child.TxHash(), Index: 0}, prevs[0].OutPoint}
	for i, op := range f.ops {
		want := "{}"
		if i == 2 {
			want = fmt.Sprintf(`{"height":%d}`, f.confirmedHeight(op))
		}
		if st := f.c.ok("blockchain.outpoint.subscribe", op.Hash.String(), op.Index); string(st) != want {
			t.Fatalf("subscribe %v: %s, want %s", op, st, want)
		}
	}
	pid, cid := parent.TxHash().String(), child.TxHash().String()
	h0 := f.confirmedHeight(f.ops[2])
	if _, err := node.SendRawTransaction(t.Context(), parent); err != nil {
		t.Fatal(err)
	}
	f.waitNote(0, `{"height":0}`)
	f.waitNote(2, fmt.Sprintf(`{"height":%d,"spender_txhash":"%s","spender_height":0}`, h0, pid))
	if _, err := node.SendRawTransaction(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	f.waitNote(0, fmt.Sprintf(`{"height":0,"spender_txhash":"%s","spender_height":-1}`, cid))
	f.waitNote(1, `{"height":-1}`)
	f.checkHistogram(prevs, coin[0].Value)
	// RBF: a replacement spends the same output and is notified at once;
	// the replaced child's output stays pending until the next block.
	child2, err := g.Replace(child, coin, nil, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.SendRawTransaction(t.Context(), child2); err != nil {
		t.Fatal(err)
	}
	f.waitNote(0, fmt.Sprintf(`{"height":0,"spender_txhash":"%s","spender_height":-1}`, child2.TxHash()))
	f.pair[1] = child2
	// Bad input next to the subscriptions: clear errors, the session goes on.
	for _, bad := range [][]any{{"xyz", 0}, {parent.TxHash().String(), -1}, {parent.TxHash().String(), "0"}, {7, 0}} {
		if _, e := f.c.try("blockchain.outpoint.get_status", bad...); !strings.Contains(string(e), `"code":`) {
			t.Errorf("get_status %v: %s", bad, e)
		}
	}
	t.Logf("outpoints and histogram before the block: %v", time.Since(start).Round(time.Millisecond))
	return f
}

// confirmedHeight is the height at which the index has the output's tx.
func (f *outpointFlow) confirmedHeight(op wire.OutPoint) int64 {
	var st struct{ Height int64 }
	f.c.decode(f.c.ok("blockchain.outpoint.get_status", op.Hash.String(), op.Index), &st)
	return st.Height
}

// waitNote waits for outpoint i's status notification with want.
func (f *outpointFlow) waitNote(i int, want string) {
	f.t.Helper()
	op := f.ops[i]
	key := fmt.Sprintf(`["%s",%d]`, op.Hash, op.Index)
	f.c.waitNote("blockchain.outpoint.subscribe", func(n electrumNote) bool {
		return len(n.Params) == 2 && string(n.Params[0]) == key && string(n.Params[1]) == want
	})
	f.told[key] = want
}

// checkHistogram waits until the histogram shows the pair (the mempool
// holds nothing else) in one bin at the package's rate: 1 sat/vB would
// be the parent's own.
func (f *outpointFlow) checkHistogram(prevs []chaingen.Coin, coinValue int64) {
	f.t.Helper()
	parent, child := f.pair[0], f.pair[1]
	var in int64
	for _, p := range prevs {
		in += p.Value
	}
	fee := in - outSum(parent) + coinValue - outSum(child)
	weight := parent.SerializeSizeStripped()*3 + parent.SerializeSize() + child.SerializeSizeStripped()*3 + child.SerializeSize()
	rate := float64(fee) / (float64(weight) / 4)
	want := [][2]float64{{float64(int(rate*10)) / 10, float64(vsize(parent) + vsize(child))}}
	deadline := time.Now().Add(waitFor)
	var got [][2]float64
	for {
		f.c.decode(f.c.ok("mempool.get_fee_histogram"), &got)
		if reflect.DeepEqual(got, want) {
			break
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("fee histogram %v, want %v (the pair at its package rate)", got, want)
		}
		time.Sleep(100 * time.Millisecond) // until the projection has the pair
	}
	if want[0][0] < 10 {
		f.t.Fatalf("package rate %v: not a CPFP package", want)
	}
}

func outSum(tx *wire.MsgTx) int64 {
	var s int64
	for _, o := range tx.TxOut {
		s += o.Value
	}
	return s
}

// confirmed checks the notifications of the pair's block at height h.
func (f *outpointFlow) confirmed(h int32) {
	f.t.Helper()
	pid, cid := f.pair[0].TxHash().String(), f.pair[1].TxHash().String()
	f.waitNote(0, fmt.Sprintf(`{"height":%d,"spender_txhash":"%s","spender_height":%d}`, h, cid, h))
	f.waitNote(1, `{}`) // the replaced child is gone
	f.waitNote(2, fmt.Sprintf(`{"height":%d,"spender_txhash":"%s","spender_height":%d}`, f.confirmedHeight(f.ops[2]), pid, h))
}

// reorged waits until each outpoint's last notification is its status
// now, which no longer has the pair confirmed (btcd takes the pair back
// into its mempool, or drops it).
func (f *outpointFlow) reorged(minedAt int32) {
	f.t.Helper()
	deadline := time.Now().Add(waitFor)
	last := f.told
	for {
		done := true
		for _, op := range f.ops {
			st := string(f.c.ok("blockchain.outpoint.get_status", op.Hash.String(), op.Index))
			key := fmt.Sprintf(`["%s",%d]`, op.Hash, op.Index)
			for _, n := range f.c.notes {
				if n.Method == "blockchain.outpoint.subscribe" && len(n.Params) == 2 && string(n.Params[0]) == key {
					last[key] = string(n.Params[1])
				}
			}
			mined := strings.Contains(st, fmt.Sprintf(`:%d,`, minedAt)) || strings.Contains(st, fmt.Sprintf(`:%d}`, minedAt))
			if last[key] != st || mined {
				done = false
			}
		}
		if done {
			f.t.Logf("outpoints after the reorg: %v", last)
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("outpoint notifications after the reorg %v", last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
