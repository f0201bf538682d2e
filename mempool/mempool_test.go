package mempool

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/syncer"
)

// Tests of the Mempool's rules on top of the pool, without a node: which
// of two conflicting observations wins, what a connected block removes, and
// the shapes of the read methods.

func offlineMempool(t *testing.T, cfg Config) *Mempool {
	t.Helper()
	cfg.Log = discardLog()
	return New(nil, nil, btc.NewParser(&chaincfg.RegressionNetParams), cfg)
}

func TestApplyObservationOrder(t *testing.T) {
	ctx := context.Background()
	m := offlineMempool(t, Config{})
	var announced []bchain.Hash
	m.OnTx(func(tx *Tx) { announced = append(announced, tx.Txid) })
	conf := Outpoint{hashOf(900), 0}
	a := synthTx(1, 10, []synthIn{{op: conf, desc: "alice", value: 9000, known: true}}, "bob")
	aChild := synthTx(2, 10, []synthIn{{op: Outpoint{a.Txid, 0}, desc: "bob", value: 1000, known: true}}, "carol")
	b := synthTx(3, 11, []synthIn{{op: conf, desc: "alice", value: 9000, known: true}}, "dave") // double-spends a

	staleB, obsA := m.tick(), m.tick()
	if got := m.apply(ctx, []*Tx{a, aChild}, []uint64{obsA, obsA}); len(got) != 2 {
		t.Fatalf("added %d", len(got))
	}
	// b was observed before a: it is stale and must not evict a.
	if got := m.apply(ctx, []*Tx{b}, []uint64{staleB}); len(got) != 0 {
		t.Fatal("a stale double spend replaced a newer tx")
	}
	// Observed after a, b replaces a and a's child.
	obsB := m.tick()
	if got := m.apply(ctx, []*Tx{b}, []uint64{obsB}); len(got) != 1 {
		t.Fatal("the replacement was not added")
	}
	if _, ok := m.Tx(a.Txid); ok {
		t.Fatal("the replaced tx is still there")
	}
	if _, ok := m.Tx(aChild.Txid); ok {
		t.Fatal("the replaced tx's child is still there")
	}
	if txid, vin, ok := m.SpentBy(conf); !ok || txid != b.Txid || vin != 0 {
		t.Fatalf("SpentBy = %s %d %v, want the replacement", txid, vin, ok)
	}
	// a was removed after obsB: an observation of a from before the
	// removal must not bring it back, a later one may (and replaces b, as
	// the node would say).
	if got := m.apply(ctx, []*Tx{a}, []uint64{obsB}); len(got) != 0 {
		t.Fatal("a tx came back from information older than its removal")
	}
	if got := m.apply(ctx, []*Tx{a}, []uint64{m.tick()}); len(got) != 1 {
		t.Fatal("a tx observed after its removal was refused")
	}
	// Within one apply, the later of two conflicting txs wins.
	c := synthTx(4, 12, []synthIn{{op: Outpoint{hashOf(901), 0}, desc: "x", value: 5, known: true}}, "y")
	d := synthTx(5, 12, []synthIn{{op: Outpoint{hashOf(901), 0}, desc: "x", value: 5, known: true}}, "z")
	obs := m.tick()
	m.apply(ctx, []*Tx{c, d}, []uint64{obs, obs})
	if _, ok := m.Tx(d.Txid); !ok {
		t.Fatal("the later of two conflicting announcements lost")
	}
	want := []bchain.Hash{a.Txid, aChild.Txid, b.Txid, a.Txid, c.Txid, d.Txid}
	if !slices.Equal(announced, want) {
		t.Fatalf("announced %v, want %v", announced, want)
	}
	m.mu.RLock()
	checkPool(t, m.pool)
	m.mu.RUnlock()
	if n := len(m.AddrTxs(descOf("carol"))); n != 0 {
		t.Fatalf("carol has %d mempool txs after the child was evicted", n)
	}
}

// A connected block removes its own txs (not their children) and the pool
// txs that double-spend its inputs, with their descendants.
func TestBlockConnectedRemovesConfirmedAndConflicts(t *testing.T) {
	ctx := context.Background()
	m := offlineMempool(t, Config{})
	in1, in2 := Outpoint{hashOf(900), 0}, Outpoint{hashOf(900), 1}
	mined := synthTx(1, 1, []synthIn{{op: in1, desc: "a", value: 100, known: true}}, "b")
	minedChild := synthTx(2, 1, []synthIn{{op: Outpoint{mined.Txid, 0}, desc: "b", value: 1000, known: true}}, "c")
	loser := synthTx(3, 1, []synthIn{{op: in2, desc: "a", value: 100, known: true}}, "d")
	loserChild := synthTx(4, 1, []synthIn{{op: Outpoint{loser.Txid, 0}, desc: "d", value: 1000, known: true}}, "e")
	bystander := synthTx(5, 1, []synthIn{{op: Outpoint{hashOf(901), 0}, desc: "f", value: 100, known: true}}, "g")
	obs := m.tick()
	m.apply(ctx, []*Tx{mined, minedChild, loser, loserChild, bystander}, []uint64{obs, obs, obs, obs, obs})

	winner := synthTx(6, 1, []synthIn{{op: in2, desc: "a", value: 100, known: true}}, "h") // spends loser's input
	notPooled := synthTx(7, 1, []synthIn{{op: Outpoint{hashOf(902), 0}, desc: "i", value: 1, known: true}}, "j")
	blk := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 5}, Txs: []bchain.Tx{
		{Txid: hashOf(999), Vin: []bchain.Vin{{Coinbase: true}}, Vout: []bchain.Vout{{Value: 50}}},
		*mined.Tx, *winner.Tx, *notPooled.Tx,
	}}
	m.blockConnected(blk)
	for _, c := range []struct {
		tx   *Tx
		want bool
	}{{mined, false}, {minedChild, true}, {loser, false}, {loserChild, false}, {bystander, true}} {
		if _, ok := m.Tx(c.tx.Txid); ok != c.want {
			t.Errorf("tx %d present = %v, want %v", c.tx.Txid[31], ok, c.want)
		}
	}
	if _, _, ok := m.SpentBy(in1); ok {
		t.Error("the confirmed tx's input is still marked spent by the mempool")
	}
	// The block's txs count as gone: a listing from before the block must
	// not add one of them.
	if got := m.apply(ctx, []*Tx{notPooled, winner}, []uint64{obs, obs}); len(got) != 0 {
		t.Errorf("re-added %d block txs from stale information", len(got))
	}
	m.mu.RLock()
	checkPool(t, m.pool)
	m.mu.RUnlock()
	if st := m.Status(); st.Size != 2 || st.InSync {
		t.Errorf("status %+v", st)
	}
}

func TestAddrTxsOrderAndIndexes(t *testing.T) {
	ctx := context.Background()
	m := offlineMempool(t, Config{})
	old := synthTx(1, 100, []synthIn{{op: Outpoint{hashOf(900), 0}, desc: "x", value: 5000, known: true}, {op: Outpoint{hashOf(900), 1}, desc: "y", value: 1, known: true}}, "z", "x")
	newer := synthTx(2, 200, []synthIn{{op: Outpoint{hashOf(901), 0}, desc: "y", value: 10, known: true}}, "x")
	tie := synthTx(0x100, 200, []synthIn{{op: Outpoint{hashOf(902), 0}, desc: "x", value: 10, known: true}, {op: Outpoint{hashOf(902), 1}, desc: "x", value: 10, known: true}}, "w")
	m.apply(ctx, []*Tx{old, newer, tie}, []uint64{1, 2, 3})
	got := m.AddrTxs(descOf("x"))
	want := []AddrTx{
		{Txid: newer.Txid, FirstSeen: 200, Indexes: []int32{0}},
		{Txid: tie.Txid, FirstSeen: 200, Indexes: []int32{^0, ^1}},
		{Txid: old.Txid, FirstSeen: 100, Indexes: []int32{^0, 1}},
	}
	if len(got) != len(want) {
		t.Fatalf("AddrTxs = %+v", got)
	}
	for i := range want {
		if got[i].Txid != want[i].Txid || got[i].FirstSeen != want[i].FirstSeen || !slices.Equal(got[i].Indexes, want[i].Indexes) {
			t.Errorf("AddrTxs[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(m.AddrTxs(descOf("nobody"))) != 0 {
		t.Error("an unknown descriptor has mempool txs")
	}
	if fee, ok := old.Fee(); !ok || fee != 5001-3000 {
		t.Errorf("fee %d %v", fee, ok)
	}
}

// Filters are built over the scripts a tx spends and pays, keyed by the
// txid; FilterEntries selects by FirstSeen.
func TestFilters(t *testing.T) {
	ctx := context.Background()
	params := db.FilterParams{P: 19}
	m := offlineMempool(t, Config{Filter: params})
	p2tr := "\x51\x20" + string(make([]byte, 32))
	a := synthTx(1, 100, []synthIn{{op: Outpoint{hashOf(900), 0}, desc: p2tr, value: 5000, known: true}}, "\x00\x14"+string(make([]byte, 20)))
	b := synthTx(2, 200, []synthIn{{op: Outpoint{hashOf(901), 0}}}, "")
	for _, tx := range []*Tx{a, b} {
		tx.Filter = m.filter(tx)
	}
	want := db.NewFilterBuilder(params, a.Txid)
	want.Add(a.Tx, a.Prevouts[0].Desc, a.OutDescs[0])
	wf, err := want.Filter()
	if err != nil || len(wf) == 0 || string(a.Filter) != string(wf) {
		t.Fatalf("filter %x, want %x (%v)", a.Filter, wf, err)
	}
	if b.Filter != nil {
		t.Fatalf("a tx without scripts got filter %x", b.Filter)
	}
	m.apply(ctx, []*Tx{a, b}, []uint64{1, 2})
	if got := m.FilterEntries(0); len(got) != 1 || string(got[a.Txid]) != string(wf) {
		t.Errorf("FilterEntries(0) = %x", got)
	}
	if got := m.FilterEntries(101); len(got) != 0 {
		t.Errorf("FilterEntries(101) = %x", got)
	}
	if off := offlineMempool(t, Config{}); off.filter(a) != nil {
		t.Error("a filter with filters off")
	}
}

// OnBlock only queues: with nobody handling events it still returns, and
// beyond maxQueuedBlocks it drops events (the resync covers them).
func TestOnBlockQueues(t *testing.T) {
	m := offlineMempool(t, Config{})
	blk := &bchain.Block{}
	for range maxQueuedBlocks + 5 {
		m.OnBlock(syncer.BlockEvent{Connected: blk, HasTip: true})
	}
	m.OnBlock(syncer.BlockEvent{Disconnected: true})
	m.emu.Lock()
	defer m.emu.Unlock()
	if len(m.events) != maxQueuedBlocks || !m.eventsDropped {
		t.Fatalf("%d events queued, dropped=%v", len(m.events), m.eventsDropped)
	}
}

func TestRunTwice(t *testing.T) {
	m := offlineMempool(t, Config{})
	m.running.Store(true)
	if err := m.Run(context.Background(), nil); !errors.Is(err, ErrRunning) {
		t.Fatalf("Run = %v", err)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Blocks remember their txs that were not in the pool for a few blocks
// only, however many blocks a catch-up connects.
func TestMinedTxsForgotten(t *testing.T) {
	m := offlineMempool(t, Config{})
	first := synthTx(1, 1, []synthIn{{op: Outpoint{hashOf(900), 0}, desc: "a", value: 5, known: true}}, "b")
	obs := m.tick()
	for h := range minedKeep + 4 {
		tx := synthTx(uint64(100+h), 1, []synthIn{{op: Outpoint{hashOf(uint64(1000 + h)), 0}}}, "c")
		txs := []bchain.Tx{{Txid: hashOf(999), Vin: []bchain.Vin{{Coinbase: true}}}, *tx.Tx}
		if h == 0 {
			txs = append(txs, *first.Tx)
		}
		m.blockConnected(&bchain.Block{Txs: txs})
	}
	m.mu.RLock()
	mined, gone := len(m.pool.mined), len(m.pool.gone)
	m.mu.RUnlock()
	if mined != minedKeep || gone != 0 {
		t.Fatalf("%d blocks and %d gone txs remembered", mined, gone)
	}
	// The first block is forgotten: its tx is no longer refused.
	if got := m.apply(context.Background(), []*Tx{first}, []uint64{obs}); len(got) != 1 {
		t.Fatal("a tx of a forgotten block was refused")
	}
	last := synthTx(uint64(100+minedKeep+3), 1, nil, "c")
	if got := m.apply(context.Background(), []*Tx{last}, []uint64{obs}); len(got) != 0 {
		t.Fatal("a tx of a recent block was added from information older than the block")
	}
}
