package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// manyPending is the length of the chain of pending rune txs: answers
// that decoded them per request refused (400) to decode more than 2,000.
const manyPending = 2100

// manyRunes is a chain of pending txs, each spending its parent's change
// (the rest of a rune's premine) and giving 1 unit of the rune to x.
type manyRunes struct {
	t       *testing.T
	base    string
	x       string
	rid     string
	premine uint64
	chain   []*wire.MsgTx
	blocks  int32 // blocks added to the main chain
}

func (m *manyRunes) address(query string) api.Address {
	m.t.Helper()
	var a api.Address
	getJSON(m.t, m.base+"/api/v2/address/"+m.x+"?runes=true&details=basic"+query, 200, &a)
	return a
}

// amountOf is the amount of m's rune in bs, "" when absent.
func (m *manyRunes) amountOf(bs []api.RuneBalance) string {
	for _, b := range bs {
		if b.ID == m.rid {
			return b.Amount
		}
	}
	return ""
}

// pendingMany etches a rune (its premine to the generator's change), mines
// it, then sends the chain of manyPending txs to the node's mempool and
// checks the runes=true answers: the address's pending delta, its rune
// history, the deepest child's runes (each child's input holds what its
// pending parent left it). Then half the chain is mined: the block
// extends the tip the pending txs were decoded against.
func pendingMany(t *testing.T, c *runesChain, node *regtest.Node, inst *instance) *manyRunes {
	g := c.g
	m := &manyRunes{t: t, base: inst.base, premine: 1_000_000}
	var err error
	if m.x, err = g.Address(chaingen.P2WPKH, 310); err != nil {
		t.Fatal(err)
	}
	xs, _ := g.PkScript(chaingen.P2WPKH, 310)
	fs, _ := g.PkScript(chaingen.P2WPKH, 311)
	fund, err := g.CreatePayment([]chaingen.Output{{Script: fs, Value: 3_000_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	premine := runestone.U64(m.premine)
	etch := c.spend([]chaingen.Coin{coin(fund, 0)}, stone(&runestone.Runestone{Etching: &runestone.Etching{Premine: &premine}}))
	from := g.Height() + 1
	c.mine(fund, etch)
	id := runestone.RuneID{Block: uint64(g.Height()), Tx: 2}
	m.rid = id.String()
	submit(t, g, node, from)
	h, hash := g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)

	prev, vout, change := etch, uint32(1), uint32(2)
	for range manyPending {
		tx := c.spend([]chaingen.Coin{coin(prev, vout)}, chaingen.Output{Script: xs, Value: 600},
			stone(&runestone.Runestone{Edicts: []runestone.Edict{{ID: id, Amount: runestone.U64(1), Output: 0}}, Pointer: &change}))
		m.chain = append(m.chain, tx)
		prev, vout = tx, change
	}
	start := time.Now()
	for _, tx := range m.chain {
		if _, err := node.SendRawTransaction(t.Context(), tx); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d pending rune txs sent in %v", manyPending, time.Since(start).Round(time.Millisecond))
	waitAddress(t, inst.base, m.x, func(a *api.Address) bool { return a.UnconfirmedTxs == manyPending })
	t.Logf("the mempool follower has them after %v", time.Since(start).Round(time.Millisecond))
	m.check(manyPending, 0)

	// the deepest child: its input holds what its pending ancestors left
	last := m.chain[manyPending-1]
	var tx api.Tx
	getJSON(t, inst.base+"/api/v2/tx/"+last.TxHash().String()+"?runes=true", 200, &tx)
	left := func(n int) string { return strconv.FormatUint(m.premine-uint64(n), 10) }
	if tx.BlockHeight != -1 || len(tx.Vin) != 1 || len(tx.Vout) != 3 || m.amountOf(tx.Vin[0].Runes) != left(manyPending-1) ||
		m.amountOf(tx.Vout[0].Runes) != "1" || m.amountOf(tx.Vout[2].Runes) != left(manyPending) {
		t.Errorf("the deepest pending tx: %+v", tx)
	}
	// a to-height leaves the mempool out, as unconfirmedBalance does
	a := m.address("&to=" + strconv.Itoa(int(h)))
	if a.UnconfirmedTxs != 0 || a.UnconfirmedRunes == nil || len(*a.UnconfirmedRunes) != 0 || a.UnconfirmedBalance.String() != "0" {
		t.Errorf("%s with toHeight: unconfirmed %d txs, runes %v, balance %v", m.x, a.UnconfirmedTxs, a.UnconfirmedRunes, a.UnconfirmedBalance)
	}

	// a block confirms the first half: the rest stays pending on top of it
	half := manyPending / 2
	from = g.Height() + 1
	c.mine(m.chain[:half]...)
	submit(t, g, node, from)
	h, hash = g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	waitAddress(t, inst.base, m.x, func(a *api.Address) bool { return a.UnconfirmedTxs == manyPending-half })
	m.check(manyPending-half, half)
	m.blocks = 2
	return m
}

// check compares x's runes=true answers with pending txs pending and
// confirmed ones confirmed, and times the address answer.
func (m *manyRunes) check(pending, confirmed int) {
	t := m.t
	t.Helper()
	start := time.Now()
	a := m.address("")
	took := time.Since(start)
	want := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	if a.UnconfirmedTxs != pending || a.UnconfirmedRunes == nil || m.amountOf(*a.UnconfirmedRunes) != want(pending) ||
		a.Runes == nil || m.amountOf(*a.Runes) != want(confirmed) {
		t.Errorf("%s: %d pending txs, runes %v, unconfirmedRunes %v; want %d pending, %d confirmed", m.x,
			a.UnconfirmedTxs, a.Runes, a.UnconfirmedRunes, pending, confirmed)
	}
	var h api.RuneHistory
	getJSON(t, m.base+"/api/v2/rune-history/"+m.x+"?pageSize=10", 200, &h)
	// page 1 lists every pending tx, then the page's confirmed ones
	if h.UnconfirmedTxs != pending || h.Txs != confirmed || len(h.Txids) != pending+min(confirmed, 10) {
		t.Errorf("rune history of %s: %d pending, %d confirmed, %d txids", m.x, h.UnconfirmedTxs, h.Txs, len(h.Txids))
	}
	t.Logf("address answer with %d pending rune txs: %v", pending, took.Round(time.Millisecond))
}

// afterReorg: the reorg took away the etching's block and the block of
// the confirmed half, and btcd keeps none of the chain (it does not take
// the etching back into its mempool, so the rest of the chain goes too):
// the pending txs that were decoded, and cached, before the reorg leave
// every answer with the mempool.
func (m *manyRunes) afterReorg(t *testing.T) {
	t.Helper()
	m.t = t
	waitAddress(t, m.base, m.x, func(a *api.Address) bool { return a.UnconfirmedTxs == 0 && a.Txs == 0 })
	a := m.address("")
	if a.Runes == nil || len(*a.Runes) != 0 || a.UnconfirmedRunes == nil || len(*a.UnconfirmedRunes) != 0 {
		t.Errorf("%s after the reorg: runes %v, unconfirmedRunes %v, want none", m.x, a.Runes, a.UnconfirmedRunes)
	}
	var h api.RuneHistory
	getJSON(t, m.base+"/api/v2/rune-history/"+m.x, 200, &h)
	if h.UnconfirmedTxs != 0 || h.Txs != 0 {
		t.Errorf("rune history of %s after the reorg: %d pending, %d confirmed", m.x, h.UnconfirmedTxs, h.Txs)
	}
	var tx api.Tx // the deepest child is gone from the mempool and the chain
	getJSON(t, m.base+"/api/v2/tx/"+m.chain[manyPending-1].TxHash().String()+"?runes=true", 400, &tx)
}
