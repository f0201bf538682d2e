package chaingen

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// utxo is a wallet-owned unspent output.
type utxo struct {
	op       wire.OutPoint
	value    int64
	info     *scriptInfo
	height   int32
	coinbase bool
}

// wallet tracks the generator's own unspent outputs. Spendable outputs live
// in a slice so random selection and removal are O(1); the order is a pure
// function of the operations applied, which keeps generation deterministic.
type wallet struct {
	maturity int32
	pool     []*utxo
	pos      map[wire.OutPoint]int
	pending  []*utxo // immature coinbase outputs, ascending height
}

func newWallet(maturity uint16) *wallet {
	return &wallet{maturity: int32(maturity), pos: make(map[wire.OutPoint]int)}
}

func (w *wallet) add(u *utxo) {
	if u.coinbase {
		w.pending = append(w.pending, u)
		return
	}
	w.push(u)
}

func (w *wallet) push(u *utxo) {
	if _, ok := w.pos[u.op]; ok {
		return
	}
	w.pos[u.op] = len(w.pool)
	w.pool = append(w.pool, u)
}

// mature moves coinbase outputs spendable in a block at height into the pool.
func (w *wallet) mature(height int32) {
	n := 0
	for n < len(w.pending) && height-w.pending[n].height >= w.maturity {
		w.push(w.pending[n])
		n++
	}
	w.pending = w.pending[n:]
}

// remove deletes op from the wallet and returns it, or nil if not owned.
func (w *wallet) remove(op wire.OutPoint) *utxo {
	i, ok := w.pos[op]
	if !ok {
		for j, u := range w.pending { // only reachable for foreign (invalid) spends
			if u.op == op {
				w.pending = append(w.pending[:j:j], w.pending[j+1:]...)
				return u
			}
		}
		return nil
	}
	u := w.pool[i]
	last := len(w.pool) - 1
	w.pool[i] = w.pool[last]
	w.pos[w.pool[i].op] = i
	w.pool[last] = nil
	w.pool = w.pool[:last]
	delete(w.pos, op)
	return u
}

// take removes and returns the pool entry at index i.
func (w *wallet) take(i int) *utxo { return w.remove(w.pool[i].op) }

// takeFunding removes and returns the oldest mature coinbase output or,
// if none is left, the largest output; nil if the pool is empty.
func (w *wallet) takeFunding() *utxo {
	best := -1
	for i, u := range w.pool {
		if best < 0 {
			best = i
			continue
		}
		b := w.pool[best]
		switch {
		case u.coinbase != b.coinbase:
			if u.coinbase {
				best = i
			}
		case u.coinbase && u.height < b.height, !u.coinbase && u.value > b.value:
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return w.take(best)
}

// applyTx removes spent wallet outputs and adds the tx's outputs paying to
// scripts in reg.
func (w *wallet) applyTx(reg *registry, tx *wire.MsgTx, txid chainhash.Hash, height int32, coinbase bool) {
	if !coinbase {
		for _, in := range tx.TxIn {
			w.remove(in.PreviousOutPoint)
		}
	}
	for i, out := range tx.TxOut {
		if si := reg.lookup(out.PkScript); si != nil {
			w.add(&utxo{op: wire.OutPoint{Hash: txid, Index: uint32(i)}, value: out.Value,
				info: si, height: height, coinbase: coinbase})
		}
	}
}

// largestFirst returns the pool entries accepted by keep, largest value
// first (ties broken by outpoint so the order is deterministic).
func (w *wallet) largestFirst(keep func(*utxo) bool) []*utxo {
	var out []*utxo
	for _, u := range w.pool {
		if keep(u) {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *utxo) int {
		if c := cmp.Compare(b.value, a.value); c != 0 {
			return c
		}
		if c := bytes.Compare(a.op.Hash[:], b.op.Hash[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.op.Index, b.op.Index)
	})
	return out
}

func sumValues(us []*utxo) int64 {
	var s int64
	for _, u := range us {
		s += u.value
	}
	return s
}
