package mempool

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// checkResolved compares a mempool tx with the chaingen tx it came from:
// every prevout known with the right descriptor and value, outputs
// classified, and the fee.
func checkResolved(t *testing.T, s *stack, got *Tx, tx *wire.MsgTx, unconfirmed ...*wire.MsgTx) {
	t.Helper()
	prevs, err := s.g.Prevouts(tx, unconfirmed...)
	if err != nil {
		t.Fatal(err)
	}
	var in, out int64
	for i, p := range prevs {
		want := s.be.Utxo.OutputAddrDesc(p.PkScript)
		if gp := got.Prevouts[i]; !gp.Known || gp.Value != uint64(p.Value) || !bytes.Equal(gp.Desc, want) {
			t.Errorf("%s input %d: prevout %+v, want %x worth %d", got.Txid, i, gp, want, p.Value)
		}
		in += p.Value
	}
	for i, o := range tx.TxOut {
		if !bytes.Equal(got.OutDescs[i], s.be.Utxo.OutputAddrDesc(o.PkScript)) {
			t.Errorf("%s output %d: desc %x", got.Txid, i, got.OutDescs[i])
		}
		out += o.Value
	}
	if fee, ok := got.Fee(); !ok || fee != uint64(in-out) {
		t.Errorf("%s: fee %d %v, want %d", got.Txid, fee, ok, in-out)
	}
}

// A tx the node announces is in the mempool at once (no resync can run:
// the interval is an hour and no block comes), resolved from the index,
// filed under its input and output addresses, its input marked spent.
func TestNotifiedTx(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	m := s.run(s.newMempool(nil, Config{}), nil)
	m.waitInSync(t)
	s.warmNotifications(m)

	dest, _ := s.g.Address(chaingen.P2TR, 3)
	tx, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 123_456}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	txid := s.send(tx)
	m.waitAnnounced(t, txid)
	got, ok := m.Tx(txid)
	if !ok {
		t.Fatal("announced but not in the mempool")
	}
	checkResolved(t, s, got, tx)
	if ann, n := m.announcedTx(txid); ann != got || n != 1 {
		t.Errorf("announced %d times", n)
	}
	if idx := addrIndexes(m.Mempool, s.desc(dest), txid); !slices.Equal(idx, []int32{0}) {
		t.Errorf("destination indexes %v, want [0]", idx)
	}
	if idx := addrIndexes(m.Mempool, got.Prevouts[0].Desc, txid); len(idx) == 0 || idx[0] != ^int32(0) {
		t.Errorf("input address indexes %v, want ^0 first", idx)
	}
	in := tx.TxIn[0].PreviousOutPoint
	if sp, vin, ok := m.SpentBy(Outpoint{txHash(&wire.MsgTx{}), 0}); ok {
		t.Errorf("an unrelated outpoint is spent by %s:%d", sp, vin)
	}
	op := Outpoint{Vout: in.Index}
	copy(op.Txid[:], reversed(in.Hash[:]))
	if sp, vin, ok := m.SpentBy(op); !ok || sp != txid || vin != 0 {
		t.Errorf("SpentBy(%v) = %s %d %v", op, sp, vin, ok)
	}
	if got.FirstSeen == 0 || m.Status().Size < 2 {
		t.Errorf("first seen %d, status %+v", got.FirstSeen, m.Status())
	}
}

func reversed(b []byte) []byte {
	out := slices.Clone(b)
	slices.Reverse(out)
	return out
}

// reorderNode lists the node's mempool with some txids moved to the front,
// so that with one worker a child is fetched before its parent. It hides
// RawTxs, so loads fetch tx by tx.
type reorderNode struct {
	Node
	first []bchain.Hash
}

func (r reorderNode) MempoolTxids(ctx context.Context) ([]bchain.Hash, error) {
	ids, err := r.Node.MempoolTxids(ctx)
	if err != nil {
		return nil, err
	}
	ids = slices.DeleteFunc(ids, func(h bchain.Hash) bool { return slices.Contains(r.first, h) })
	return append(slices.Clone(r.first), ids...), nil
}

// reorderBatchNode is reorderNode with batched fetches.
type reorderBatchNode struct {
	reorderNode
	batch BatchFetcher
}

func (r reorderBatchNode) RawTxs(ctx context.Context, ids []bchain.Hash) ([][]byte, error) {
	return r.batch.RawTxs(ctx, ids)
}

// Chains of unconfirmed txs: each child resolves its inputs from its
// parent in the mempool, when announced one by one and when loaded
// together with the children fetched first.
func TestUnconfirmedChain(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	m := s.run(s.newMempool(nil, Config{}), nil)
	m.waitInSync(t)
	s.warmNotifications(m)

	dest, _ := s.g.Address(chaingen.P2SHP2WPKH, 4)
	parent, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 2_000_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.g.Spend(s.g.Coins(parent)[1:], []chaingen.Output{{Address: dest, Value: 300_000}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := s.g.Spend(s.g.Coins(child)[1:], []chaingen.Output{{Address: dest, Value: 40_000}}, 7)
	if err != nil {
		t.Fatal(err)
	}
	chain := []*wire.MsgTx{parent, child, grandchild}
	var ids []bchain.Hash
	for _, tx := range chain {
		ids = append(ids, s.send(tx))
	}
	m.waitAnnounced(t, ids...)
	for i, tx := range chain {
		got, _ := m.announcedTx(ids[i])
		checkResolved(t, s, got, tx, chain...)
	}
	destDesc := s.desc(dest)
	if idx := addrIndexes(m.Mempool, destDesc, ids[1]); !slices.Equal(idx, []int32{0}) {
		t.Errorf("child on the destination: %v", idx)
	}

	// A fresh load with the grandchild, then the child, fetched first.
	for _, batch := range []bool{false, true} {
		var node Node = reorderNode{Node: s.btc, first: []bchain.Hash{ids[2], ids[1]}}
		if batch {
			node = reorderBatchNode{reorderNode: node.(reorderNode), batch: s.btc}
		}
		fresh := s.run(s.newMempool(node, Config{Workers: 1}), noNotifier{})
		fresh.waitInSync(t)
		for i, tx := range chain {
			got, n := fresh.announcedTx(ids[i])
			if got == nil || n != 1 {
				t.Fatalf("batch=%v: tx %d announced %d times", batch, i, n)
			}
			// Resolved when announced, not later.
			checkResolved(t, s, got, tx, chain...)
			if cur, _ := fresh.Tx(ids[i]); cur != got {
				t.Errorf("batch=%v: tx %d was republished after its announcement", batch, i)
			}
		}
		fresh.mu.RLock()
		checkPool(t, fresh.pool)
		fresh.mu.RUnlock()
	}
}

// noNotifier delivers nothing: the mempool follows by resyncs only.
type noNotifier struct{}

func (noNotifier) Run(ctx context.Context, _ func(bchain.Hash)) error { <-ctx.Done(); return nil }

// A block mined through the sync worker removes its txs and, as btcd does,
// the txs double-spending its inputs with their descendants.
func TestConfirmationAndConflict(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{noSyncer: true})
	m := s.run(s.newMempool(nil, Config{}), nil)
	s.startSyncer(m.OnBlock)
	m.waitInSync(t)
	s.warmNotifications(m)

	dest, _ := s.g.Address(chaingen.P2PKH, 5)
	paid, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 700_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	loser, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 800_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	loserChild, err := s.g.Spend(s.g.Coins(loser)[1:], []chaingen.Output{{Address: dest, Value: 1000_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	paidID, loserID, childID := s.send(paid), s.send(loser), s.send(loserChild)
	m.waitAnnounced(t, paidID, loserID, childID)
	prevs, err := s.g.Prevouts(loser)
	if err != nil {
		t.Fatal(err)
	}
	winner, err := s.g.Replace(loser, prevs, nil, 3) // mined directly, never in the mempool
	if err != nil {
		t.Fatal(err)
	}
	s.mine(paid, winner)
	waitUntil(t, "the block's txs and conflicts leave the mempool", func() bool {
		_, a := m.Tx(paidID)
		_, b := m.Tx(loserID)
		_, c := m.Tx(childID)
		return !a && !b && !c
	})
	s.waitIndexed()
	for _, id := range []bchain.Hash{paidID, loserID, childID} {
		if idx := addrIndexes(m.Mempool, s.desc(dest), id); idx != nil {
			t.Errorf("%s still listed for the destination", id)
		}
	}
	for _, tx := range []*wire.MsgTx{paid, loser} {
		op := tx.TxIn[0].PreviousOutPoint
		var h bchain.Hash
		copy(h[:], reversed(op.Hash[:]))
		if sp, _, ok := m.SpentBy(Outpoint{h, op.Index}); ok {
			t.Errorf("input of %s still spent by mempool tx %s", tx.TxHash(), sp)
		}
	}
	m.mu.RLock()
	checkPool(t, m.pool)
	m.mu.RUnlock()
}

// A BIP125 replacement evicts the original and its child; the outpoint
// then points at the replacement and the original's destination is empty.
func TestReplacement(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	m := s.run(s.newMempool(nil, Config{}), nil)
	m.waitInSync(t)
	s.warmNotifications(m)

	oldDest, _ := s.g.Address(chaingen.P2WPKH, 50)
	newDest, _ := s.g.Address(chaingen.P2TR, 51)
	orig, err := s.g.CreatePayment([]chaingen.Output{{Address: oldDest, Value: 600_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.g.Spend(s.g.Coins(orig)[1:], []chaingen.Output{{Address: oldDest, Value: 10_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	origID, childID := s.send(orig), s.send(child)
	m.waitAnnounced(t, origID, childID)
	prevs, err := s.g.Prevouts(orig)
	if err != nil {
		t.Fatal(err)
	}
	repl, err := s.g.Replace(orig, prevs, []chaingen.Output{{Address: newDest, Value: 590_000}}, 25)
	if err != nil {
		t.Fatal(err)
	}
	replID := s.send(repl)
	m.waitAnnounced(t, replID)
	check := func(when string) {
		t.Helper()
		if _, ok := m.Tx(origID); ok {
			t.Errorf("%s: the replaced tx is still there", when)
		}
		if _, ok := m.Tx(childID); ok {
			t.Errorf("%s: the replaced tx's child is still there", when)
		}
		got, ok := m.Tx(replID)
		if !ok {
			t.Fatalf("%s: the replacement is missing", when)
		}
		checkResolved(t, s, got, repl)
		for i, in := range repl.TxIn {
			var h bchain.Hash
			copy(h[:], reversed(in.PreviousOutPoint.Hash[:]))
			if sp, vin, ok := m.SpentBy(Outpoint{h, in.PreviousOutPoint.Index}); !ok || sp != replID || vin != uint32(i) {
				t.Errorf("%s: input %d spent by %s:%d %v", when, i, sp, vin, ok)
			}
		}
		if n := len(m.AddrTxs(s.desc(oldDest))); n != 0 {
			t.Errorf("%s: the old destination still has %d mempool txs", when, n)
		}
		if idx := addrIndexes(m.Mempool, s.desc(newDest), replID); !slices.Equal(idx, []int32{0}) {
			t.Errorf("%s: new destination indexes %v", when, idx)
		}
		m.mu.RLock()
		checkPool(t, m.pool)
		m.mu.RUnlock()
	}
	check("after the notification")
	// A full resync agrees.
	last := m.Status().LastSync
	m.OnBlock(syncer.BlockEvent{})
	waitUntil(t, "a resync", func() bool { return m.Status().LastSync.After(last) })
	check("after a resync")
}
