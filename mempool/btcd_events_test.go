package mempool

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// A reorg puts the txs of the orphaned block back into btcd's mempool; the
// resync after the sync worker's events brings them back into ours.
func TestReorgReturnsTxs(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noSyncer: true})
	m := s.run(s.newMempool(nil, Config{}), nil)
	s.startSyncer(m.OnBlock)
	m.waitInSync(t)

	dest, _ := s.g.Address(chaingen.P2WPKH, 60)
	tx, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 250_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	txid := s.send(tx)
	waitUntil(t, "the tx enters the mempool", func() bool { _, ok := m.Tx(txid); return ok })
	forkAt := s.g.Height()
	s.mine(tx)
	waitUntil(t, "the mined tx leaves the mempool", func() bool { _, ok := m.Tx(txid); return !ok })

	branch, err := s.g.Fork(forkAt, "competing")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := branch.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := branch.Submit(s.ctx, s.node, forkAt+1); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the orphaned tx returns to the mempool", func() bool { _, ok := m.Tx(txid); return ok })
	got, _ := m.Tx(txid)
	checkResolved(t, s, got, tx)
	if idx := addrIndexes(m.Mempool, s.desc(dest), txid); len(idx) != 1 || idx[0] != 0 {
		t.Errorf("destination indexes %v", idx)
	}
	_, bh := branch.Tip()
	tip, _, _ := s.index.Tip()
	if tip.Hash.String() != bh.String() {
		t.Errorf("index tip %s, want the branch tip %s", tip.Hash, bh)
	}
}

// btcd forgets its mempool when it restarts: the resync removes what
// vanished. While the node is down nothing panics, the status says the
// mempool is not in sync, and reads keep working; once it is back the
// resync recovers and new txs arrive again.
func TestNodeRestart(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	m := s.run(s.newMempool(nil, Config{}), nil)
	m.waitInSync(t)
	dest, _ := s.g.Address(chaingen.P2TR, 70)
	tx, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 90_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	txid := s.send(tx)
	m.OnBlock(syncer.BlockEvent{}) // a resync adds it whether or not the notification came
	waitUntil(t, "the tx enters the mempool", func() bool { _, ok := m.Tx(txid); return ok })

	if err := s.node.Stop(); err != nil {
		t.Fatal(err)
	}
	m.OnBlock(syncer.BlockEvent{})
	waitUntil(t, "a failed resync shows in the status", func() bool { return !m.Status().InSync })
	if _, ok := m.Tx(txid); !ok || len(m.AddrTxs(s.desc(dest))) != 1 {
		t.Error("the mempool lost its txs while the node was down")
	}

	if err := s.node.Restart(s.ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the resync succeeds again", func() bool { return m.Status().InSync })
	waitUntil(t, "the vanished tx is removed", func() bool { _, ok := m.Tx(txid); return !ok })
	if n := len(m.AddrTxs(s.desc(dest))); n != 0 {
		t.Errorf("%d txs still listed for the destination", n)
	}
	// The generator spent tx's inputs; pay from other coins.
	tx2, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 91_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	txid2 := s.send(tx2)
	m.OnBlock(syncer.BlockEvent{})
	waitUntil(t, "a new tx arrives after the restart", func() bool { _, ok := m.Tx(txid2); return ok })
	got, _ := m.Tx(txid2)
	checkResolved(t, s, got, tx2)
	if st := m.Status(); !st.InSync || st.Size != 1 {
		t.Errorf("status %+v", st)
	}
}

// A load held half-way (fetched, not yet added) keeps neither OnBlock nor
// tx notifications nor block removals waiting.
func TestHeldLoadDoesNotBlock(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	dest, _ := s.g.Address(chaingen.P2WPKH, 80)
	var preloaded []bchain.Hash
	for i := range 5 {
		tx, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 10_000 + int64(i)}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		preloaded = append(preloaded, s.send(tx))
	}
	mp := s.newMempool(nil, Config{})
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	mp.hooks.beforeApply = func() {
		once.Do(func() {
			close(reached)
			<-release
		})
	}
	m := s.run(mp, nil)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	select {
	case <-reached:
	case <-time.After(guard):
		t.Fatal("the load never reached the gate")
	}
	returned := make(chan struct{})
	go func() {
		m.OnBlock(syncer.BlockEvent{HasTip: true})
		m.OnBlock(syncer.BlockEvent{Disconnected: true})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(guard):
		t.Fatal("OnBlock blocked behind the held load")
	}
	// Notifications are handled while the load waits.
	s.warmNotifications(m)
	tx, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 33_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	txid := s.send(tx)
	m.waitAnnounced(t, txid)
	// So are blocks: mining the tx removes it while the load still waits.
	b := s.mine(tx)
	m.OnBlock(syncer.BlockEvent{HasTip: true, Connected: s.parsedBlock(b, s.g.Height())})
	waitUntil(t, "the mined tx leaves the mempool", func() bool { _, ok := m.Tx(txid); return !ok })
	if m.Status().InSync {
		t.Fatal("in sync before the initial load finished")
	}
	close(release)
	m.waitInSync(t)
	for _, h := range preloaded {
		if _, ok := m.Tx(h); !ok {
			t.Errorf("preloaded tx %s missing after the load", h)
		}
	}
	if _, ok := m.Tx(txid); ok {
		t.Error("the held load brought back a tx mined meanwhile")
	}
}

// A tx spending an output of a block the index has not reached stays
// unresolved (btcd without a tx index cannot describe confirmed txs) and
// is resolved after the block event that brings the index there; the
// unresolved version, already published, is left as it was.
func TestUnresolvedUntilIndexed(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noSyncer: true})
	m := s.run(s.newMempool(nil, Config{}), nil)
	type resolvedNote struct {
		txid  bchain.Hash
		descs []bchain.AddrDesc
	}
	resolved := make(chan resolvedNote, 4)
	m.OnResolved(func(tx *Tx, descs []bchain.AddrDesc) { resolved <- resolvedNote{tx.Txid, descs} })
	s.startSyncer(m.OnBlock)
	m.waitInSync(t)
	s.warmNotifications(m)

	src, _ := s.g.Address(chaingen.P2WPKH, 91)
	dest, _ := s.g.Address(chaingen.P2PKH, 90)
	funding, err := s.g.CreatePayment([]chaingen.Output{{Address: src, Value: 3_000_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.syncStop() // the index stays behind the next block
	s.syncStop = nil
	fb := s.mine(funding) // mined directly: never in a mempool
	coin := s.g.Coins(funding)[:1]
	if coin[0].Value != 3_000_000 {
		t.Fatalf("first wallet output of the funding tx: %+v", coin)
	}
	spend, err := s.g.Spend(coin, []chaingen.Output{{Address: dest, Value: 1_000_000}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	spendID := s.send(spend)
	m.waitAnnounced(t, spendID)
	early, _ := m.Tx(spendID)
	if early.Prevouts[0].Known {
		t.Fatal("resolved although neither the index nor btcd knows the parent")
	}
	if _, ok := early.Fee(); ok {
		t.Fatal("a fee without known inputs")
	}
	if n := len(m.AddrTxs(s.desc(src))); n != 0 { // the input is not known yet
		t.Fatalf("%d txs for the source before resolution", n)
	}

	s.startSyncer(m.OnBlock) // the index connects the block, then the mempool resyncs
	waitUntil(t, "the input is resolved", func() bool {
		tx, ok := m.Tx(spendID)
		return ok && tx.Prevouts[0].Known
	})
	late, _ := m.Tx(spendID)
	checkResolved(t, s, late, spend, fb.Transactions[1:]...)
	if early.Prevouts[0].Known || early == late {
		t.Error("the published tx was modified instead of replaced")
	}
	if idx := addrIndexes(m.Mempool, s.desc(src), spendID); len(idx) != 1 || idx[0] != ^int32(0) {
		t.Errorf("source indexes %v, want the input", idx)
	}
	if _, n := m.announcedTx(spendID); n != 1 {
		t.Errorf("announced %d times", n)
	}
	// The source was not among the addresses the tx was announced with:
	// its resolution is announced on its own.
	select {
	case r := <-resolved:
		if r.txid != spendID || len(r.descs) != 1 || !bytes.Equal(r.descs[0], s.desc(src)) {
			t.Errorf("resolved announcement %v %x, want %s with the source", r.txid, r.descs, spendID)
		}
	case <-time.After(guard):
		t.Error("the late resolution of the input was not announced")
	}
	m.mu.RLock()
	checkPool(t, m.pool)
	m.mu.RUnlock()
}

// Without an index, prevouts come from the node (here btcd with a tx
// index, which describes confirmed txs).
func TestPrevoutsFromNode(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{txIndex: true, noSyncer: true})
	mp := New(nil, s.btc, s.be.Utxo, Config{Workers: 2, ResyncInterval: time.Hour, Log: s.log})
	m := s.run(mp, nil)
	m.waitInSync(t)
	dest, _ := s.g.Address(chaingen.P2WSHMultisig, 3)
	tx, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 77_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	txid := s.send(tx)
	m.OnBlock(syncer.BlockEvent{})
	waitUntil(t, "the tx enters the mempool", func() bool { _, ok := m.Tx(txid); return ok })
	got, _ := m.Tx(txid)
	checkResolved(t, s, got, tx)
	if !bytes.Equal(got.OutDescs[0], s.desc(dest)) {
		t.Errorf("output desc %x", got.OutDescs[0])
	}
}
