package mempool

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// Unit tests of the pool's bookkeeping: after every add, remove, replace
// and late resolution, byAddr, spends, unresolved and waiting must equal
// what the txs themselves say (checkPool recomputes them from scratch).

// synth builds a mempool tx spending ins and paying to outs (one value and
// descriptor per output); prevouts are resolved when known is set.
type synthIn struct {
	op    Outpoint
	desc  string
	value uint64
	known bool
}

func synthTx(id uint64, firstSeen int64, ins []synthIn, outs ...string) *Tx {
	var txid bchain.Hash
	binary.BigEndian.PutUint64(txid[24:], id)
	tx := &bchain.Tx{Txid: txid, Version: 2}
	t := &Tx{Tx: tx, FirstSeen: firstSeen}
	for _, in := range ins {
		tx.Vin = append(tx.Vin, bchain.Vin{PrevTxid: in.op.Txid, PrevVout: in.op.Vout})
		p := Prevout{Known: in.known}
		if in.known {
			p.Desc, p.Value = descOf(in.desc), in.value
		}
		t.Prevouts = append(t.Prevouts, p)
	}
	for i, d := range outs {
		tx.Vout = append(tx.Vout, bchain.Vout{Value: uint64(1000 * (i + 1)), Script: descOf(d)})
		t.OutDescs = append(t.OutDescs, descOf(d))
	}
	return t
}

func descOf(s string) bchain.AddrDesc {
	if s == "" {
		return nil
	}
	return bchain.AddrDesc(s)
}

func hashOf(id uint64) bchain.Hash {
	var h bchain.Hash
	binary.BigEndian.PutUint64(h[24:], id)
	return h
}

// checkPool verifies every derived index against the txs.
func checkPool(t *testing.T, p *pool) {
	t.Helper()
	wantAddr := map[string]map[bchain.Hash]bool{}
	wantSpends := map[Outpoint]spender{}
	wantUnresolved := map[bchain.Hash]bool{}
	for h, e := range p.txs {
		if e.tx.Txid != h {
			t.Fatalf("tx %s filed under %s", e.tx.Txid, h)
		}
		for _, d := range descs(e.tx) {
			if wantAddr[string(d)] == nil {
				wantAddr[string(d)] = map[bchain.Hash]bool{}
			}
			wantAddr[string(d)][h] = true
		}
		for i, in := range e.tx.Vin {
			op := Outpoint{in.PrevTxid, in.PrevVout}
			if s, dup := wantSpends[op]; dup {
				t.Fatalf("%v spent by both %s and %s", op, s.txid, h)
			}
			wantSpends[op] = spender{h, uint32(i)}
			if !e.tx.Prevouts[i].Known {
				wantUnresolved[h] = true
				if _, inPool := p.txs[in.PrevTxid]; !inPool && !slices.Contains(p.waiting[in.PrevTxid], h) {
					t.Fatalf("%s waits for %s but is not filed under it", h, in.PrevTxid)
				}
			}
		}
	}
	if len(p.byAddr) != len(wantAddr) {
		t.Fatalf("byAddr has %d descriptors, want %d", len(p.byAddr), len(wantAddr))
	}
	for d, want := range wantAddr {
		s := p.byAddr[d]
		if s == nil || len(s.ids) != len(want) {
			t.Fatalf("byAddr[%x] = %v, want %d txs", d, s, len(want))
		}
		for i, h := range s.ids {
			if !want[h] {
				t.Fatalf("byAddr[%x] holds %s", d, h)
			}
			if s.pos != nil && s.pos[h] != i {
				t.Fatalf("byAddr[%x] position index is stale for %s", d, h)
			}
		}
		if s.pos != nil && len(s.pos) != len(s.ids) {
			t.Fatalf("byAddr[%x] position index has %d entries for %d txs", d, len(s.pos), len(s.ids))
		}
	}
	if len(p.byHash) != len(wantAddr) {
		t.Fatalf("byHash has %d script hashes, want %d", len(p.byHash), len(wantAddr))
	}
	for d := range wantAddr {
		if got, ok := p.byHash[sha256.Sum256([]byte(d))]; !ok || got != d {
			t.Fatalf("byHash misses %x", d)
		}
	}
	if len(p.spends) != len(wantSpends) {
		t.Fatalf("spends has %d outpoints, want %d", len(p.spends), len(wantSpends))
	}
	for op, s := range wantSpends {
		if p.spends[op] != s {
			t.Fatalf("spends[%v] = %v, want %v", op, p.spends[op], s)
		}
	}
	if len(p.unresolved) != len(wantUnresolved) {
		t.Fatalf("unresolved has %d txs, want %d", len(p.unresolved), len(wantUnresolved))
	}
	for h := range wantUnresolved {
		if _, ok := p.unresolved[h]; !ok {
			t.Fatalf("%s is not marked unresolved", h)
		}
	}
	for parent, w := range p.waiting {
		if len(w) == 0 {
			t.Fatalf("empty waiting list for %s", parent)
		}
		for _, c := range w {
			if !wantUnresolved[c] {
				t.Fatalf("waiting[%s] holds %s, which is not unresolved", parent, c)
			}
		}
	}
}

func TestPoolAddRemoveReplace(t *testing.T) {
	p := newPool()
	now := time.Now()
	conf := Outpoint{hashOf(900), 0}
	parent := synthTx(1, 10, []synthIn{{op: conf, desc: "alice", value: 50_000, known: true}}, "bob", "alice")
	child := synthTx(2, 11, []synthIn{{op: Outpoint{parent.Txid, 1}, desc: "alice", value: 2000, known: true}}, "carol")
	grandchild := synthTx(3, 12, []synthIn{{op: Outpoint{child.Txid, 0}, desc: "carol", value: 1000, known: true}}, "dave")
	for i, tx := range []*Tx{parent, child, grandchild} {
		if w := p.insert(tx, uint64(i+1)); len(w) != 0 {
			t.Fatalf("waiters %v", w)
		}
		checkPool(t, p)
	}
	if s := p.byAddr["alice"]; len(s.ids) != 2 {
		t.Fatalf("alice touched by %d txs, want parent (in and out) and child", len(s.ids))
	}
	// A replacement of the parent (same input) evicts the whole chain.
	repl := synthTx(4, 13, []synthIn{{op: conf, desc: "alice", value: 50_000, known: true}}, "erin")
	if c := p.conflicts(repl); !slices.Equal(c, []bchain.Hash{parent.Txid}) {
		t.Fatalf("conflicts %v", c)
	}
	gone := p.removeTree(parent.Txid, 7, now)
	if len(gone) != 3 {
		t.Fatalf("removed %d txs, want the chain of 3", len(gone))
	}
	p.insert(repl, 8)
	checkPool(t, p)
	if s := p.spends[conf]; s.txid != repl.Txid {
		t.Fatalf("outpoint spent by %s, want the replacement", s.txid)
	}
	for _, d := range []string{"bob", "carol", "dave"} {
		if p.byAddr[d] != nil {
			t.Fatalf("%s still indexed after its txs were replaced", d)
		}
	}
	for _, tx := range []*Tx{parent, child, grandchild} {
		if g, ok := p.gone[tx.Txid]; !ok || g.at != 7 {
			t.Fatalf("%s not remembered as gone", tx.Txid)
		}
	}
	p.remove(repl.Txid, 9, now)
	checkPool(t, p)
	if len(p.txs)+len(p.byAddr)+len(p.spends)+len(p.unresolved)+len(p.waiting) != 0 {
		t.Fatalf("pool not empty: %+v", p)
	}
	p.pruneGone(now.Add(goneKeep+time.Second), goneKeep)
	if len(p.gone) != 0 {
		t.Fatalf("%d gone records survive pruning", len(p.gone))
	}
}

// A child that arrives before its parent waits for it; when the parent
// comes, the child is handed back for resolution, and update files the
// child under the newly known input descriptor.
func TestPoolLateResolution(t *testing.T) {
	p := newPool()
	parent := synthTx(1, 10, []synthIn{{op: Outpoint{hashOf(900), 0}, desc: "alice", value: 9000, known: true}}, "bob", "carol")
	child := synthTx(2, 10, []synthIn{{op: Outpoint{parent.Txid, 0}}, {op: Outpoint{parent.Txid, 1}}}, "dave")
	p.insert(child, 1)
	checkPool(t, p)
	if !slices.Equal(p.waiting[parent.Txid], []bchain.Hash{child.Txid}) {
		t.Fatalf("waiting %v", p.waiting)
	}
	if w := p.insert(parent, 2); !slices.Equal(w, []bchain.Hash{child.Txid}) {
		t.Fatalf("waiters %v", w)
	}
	checkPool(t, p)
	resolved := *child
	resolved.Prevouts = []Prevout{{Desc: descOf("bob"), Value: 1000, Known: true}, {Desc: descOf("carol"), Value: 2000, Known: true}}
	p.update(child, &resolved)
	checkPool(t, p)
	if child.Prevouts[0].Known {
		t.Fatal("update modified the published tx")
	}
	if s := p.byAddr["bob"]; s == nil || !slices.Contains(s.ids, child.Txid) {
		t.Fatal("the child is not filed under its resolved input")
	}
	// A still-unresolved tx removed before its parent arrives leaves no
	// waiting entry behind.
	orphan := synthTx(3, 10, []synthIn{{op: Outpoint{hashOf(77), 0}}, {op: Outpoint{hashOf(78), 3}}}, "erin")
	p.insert(orphan, 3)
	checkPool(t, p)
	p.remove(orphan.Txid, 4, time.Now())
	checkPool(t, p)
	if len(p.waiting) != 0 || len(p.unresolved) != 0 {
		t.Fatalf("leftovers: waiting %v unresolved %v", p.waiting, p.unresolved)
	}
}

// A busy descriptor gets a position index; adds and removes keep it exact
// through growth and shrinking.
func TestAddrSetBusy(t *testing.T) {
	p := newPool()
	now := time.Now()
	var ids []bchain.Hash
	for i := range 200 {
		tx := synthTx(uint64(i+1), 1, []synthIn{{op: Outpoint{hashOf(uint64(10_000 + i)), 0}, desc: "hot", value: 5000, known: true}}, fmt.Sprintf("out%d", i))
		p.insert(tx, uint64(i))
		ids = append(ids, tx.Txid)
	}
	checkPool(t, p)
	if p.byAddr["hot"].pos == nil {
		t.Fatal("no position index for 200 txs")
	}
	for i, h := range ids {
		if i%3 != 1 {
			p.remove(h, uint64(1000+i), now)
		}
	}
	checkPool(t, p)
	for i, h := range ids {
		if i%3 == 1 {
			p.remove(h, uint64(2000+i), now)
			checkPool(t, p)
		}
	}
	if len(p.byAddr) != 0 {
		t.Fatalf("byAddr left with %d descriptors", len(p.byAddr))
	}
}

// TestPoolRandomOps drives the pool with a deterministic random mix of
// chains, double spends, removals and late resolutions, checking every
// index after every step, then empties it.
func TestPoolRandomOps(t *testing.T) {
	p := newPool()
	now := time.Now()
	r := uint64(0x9e3779b97f4a7c15)
	rnd := func(n int) int {
		r ^= r << 13
		r ^= r >> 7
		r ^= r << 17
		return int(r % uint64(n))
	}
	descNames := []string{"a", "b", "c", "d", "e", "f", "g", ""}
	var universe []*Tx // every tx created, in or out of the pool
	next := uint64(1)
	clock := uint64(0)
	for step := range 3000 {
		clock++
		switch op := rnd(10); {
		case op < 6: // a new tx spending confirmed outputs and/or pool outputs
			var ins []synthIn
			for range 1 + rnd(3) {
				if len(universe) > 0 && rnd(2) == 0 {
					par := universe[rnd(len(universe))]
					vout := uint32(rnd(len(par.Vout) + 1)) // sometimes out of range
					known := rnd(4) != 0
					in := synthIn{op: Outpoint{par.Txid, vout}, known: known}
					if known {
						in.desc, in.value = descNames[rnd(len(descNames))], 1000
					}
					ins = append(ins, in)
				} else {
					ins = append(ins, synthIn{op: Outpoint{hashOf(1 << 40), uint32(rnd(50))}, desc: descNames[rnd(len(descNames))], value: 7, known: true})
				}
			}
			var outs []string
			for range 1 + rnd(3) {
				outs = append(outs, descNames[rnd(len(descNames))])
			}
			tx := synthTx(next, int64(step), ins, outs...)
			next++
			dup := false
			for i := range ins {
				for j := range i {
					dup = dup || ins[i].op == ins[j].op
				}
			}
			if dup {
				continue
			}
			universe = append(universe, tx)
			for _, c := range p.conflicts(tx) {
				p.removeTree(c, clock, now)
			}
			checkPool(t, p)
			p.insert(tx, clock)
		case op < 8 && len(p.txs) > 0: // remove a random pool tx, alone or with descendants
			var h bchain.Hash
			for h = range p.txs {
				break
			}
			if rnd(2) == 0 {
				p.remove(h, clock, now)
			} else {
				p.removeTree(h, clock, now)
			}
		case len(p.unresolved) > 0: // resolve one unknown prevout
			var h bchain.Hash
			for h = range p.unresolved {
				break
			}
			old := p.txs[h].tx
			nt := *old
			nt.Prevouts = slices.Clone(old.Prevouts)
			for i := range nt.Prevouts {
				if !nt.Prevouts[i].Known {
					nt.Prevouts[i] = Prevout{Desc: descOf(descNames[rnd(len(descNames))]), Value: 3, Known: true}
					break
				}
			}
			p.update(old, &nt)
		}
		checkPool(t, p)
	}
	t.Logf("%d txs in the pool, %d descriptors, %d unresolved", len(p.txs), len(p.byAddr), len(p.unresolved))
	for len(p.txs) > 0 {
		for h := range p.txs {
			p.removeTree(h, clock, now)
			break
		}
		checkPool(t, p)
	}
	if len(p.byAddr)+len(p.spends)+len(p.unresolved)+len(p.waiting) != 0 {
		t.Fatalf("empty pool keeps index entries: %d %d %d %d", len(p.byAddr), len(p.spends), len(p.unresolved), len(p.waiting))
	}
}
