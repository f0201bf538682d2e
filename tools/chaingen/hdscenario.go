package chaingen

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/wire/v2"
)

// HDWallet pays to and spends from HD accounts: funding comes from the
// generator's wallet, spends sign with the accounts' derived keys. It tracks
// the accounts' unspent outputs as it creates txs (mined or not).
type HDWallet struct {
	g     *Generator
	coins map[wire.OutPoint]*utxo
	where map[wire.OutPoint]hdRef
}

// hdRef locates an account output.
type hdRef struct {
	acct          *HDAccount
	change, index uint32
}

// NewHDWallet returns an empty HD wallet over g.
func (g *Generator) NewHDWallet() *HDWallet {
	return &HDWallet{g: g, coins: map[wire.OutPoint]*utxo{}, where: map[wire.OutPoint]hdRef{}}
}

// hdFeeRate is the fee rate of the HD txs (sat/vB).
const hdFeeRate = 2

// HDOut is an output of an HD tx: to an account address (Acct set) or to a
// plain script.
type HDOut struct {
	Acct          *HDAccount
	Change, Index uint32
	Script        []byte
	Value         int64
}

func (w *HDWallet) txOut(o HDOut) (*wire.TxOut, error) {
	if o.Acct == nil {
		return &wire.TxOut{Value: o.Value, PkScript: o.Script}, nil
	}
	pk, err := o.Acct.PkScript(o.Change, o.Index)
	if err != nil {
		return nil, err
	}
	return &wire.TxOut{Value: o.Value, PkScript: pk}, nil
}

// track records the account outputs a new tx creates and forgets the ones
// it spends.
func (w *HDWallet) track(tx *wire.MsgTx, outs []HDOut) {
	for _, in := range tx.TxIn {
		delete(w.coins, in.PreviousOutPoint)
		delete(w.where, in.PreviousOutPoint)
	}
	txid := tx.TxHash()
	for i, o := range tx.TxOut {
		for _, want := range outs {
			if want.Acct == nil {
				continue
			}
			si, err := want.Acct.script(want.Change, want.Index)
			if err == nil && string(si.pkScript) == string(o.PkScript) {
				op := wire.OutPoint{Hash: txid, Index: uint32(i)}
				w.coins[op] = &utxo{op: op, value: o.Value, info: si}
				w.where[op] = hdRef{want.Acct, want.Change, want.Index}
				break
			}
		}
	}
}

// Fund returns a tx paying the outputs from the generator's wallet (which
// keeps the change), like CreatePayment.
func (w *HDWallet) Fund(outs ...HDOut) (*wire.MsgTx, error) {
	var to []Output
	for _, o := range outs {
		t, err := w.txOut(o)
		if err != nil {
			return nil, err
		}
		to = append(to, Output{Script: t.PkScript, Value: t.Value})
	}
	tx, err := w.g.CreatePayment(to, hdFeeRate)
	if err != nil {
		return nil, err
	}
	w.track(tx, outs)
	return tx, nil
}

// Spend returns a tx spending every tracked output of the account
// addresses from (each [change, index]) to outs, with change above the dust
// limit to change (an account address).
func (w *HDWallet) Spend(a *HDAccount, from [][2]uint32, change [2]uint32, outs ...HDOut) (*wire.MsgTx, error) {
	var ins []*utxo
	for _, f := range from {
		for _, op := range sortedOutpoints(w.coins) {
			if r := w.where[op]; r.acct == a && r.change == f[0] && r.index == f[1] {
				ins = append(ins, w.coins[op])
			}
		}
	}
	if len(ins) == 0 {
		return nil, fmt.Errorf("chaingen: account %d'/%d' has no coins at %v", a.Purpose, a.Index, from)
	}
	txOuts := make([]*wire.TxOut, 0, len(outs))
	for _, o := range outs {
		t, err := w.txOut(o)
		if err != nil {
			return nil, err
		}
		txOuts = append(txOuts, t)
	}
	ch, err := a.script(change[0], change[1])
	if err != nil {
		return nil, err
	}
	tx, _, err := buildTx(ins, txOuts, ch, hdFeeRate)
	if err != nil {
		return nil, err
	}
	w.track(tx, append(outs, HDOut{Acct: a, Change: change[0], Index: change[1]}))
	return tx, nil
}

// sortedOutpoints returns the keys of coins in a fixed order.
func sortedOutpoints(coins map[wire.OutPoint]*utxo) []wire.OutPoint {
	var out []wire.OutPoint
	for op := range coins {
		out = append(out, op)
	}
	sortOutpoints(out)
	return out
}

// HDScenario appends four blocks in which each account (purpose 44, 49,
// 84 or 86) is paid, spends to outside addresses and moves coins between
// its own addresses: receive addresses 0, 1, 3 and 23 (gaps of 1 and 19
// unused addresses) and 44 (20 unused before it: beyond a gap limit of 20),
// change addresses 0-2; an address paid twice; a tx spending an output of
// the same block; multi-input and partly internal spends. It returns one
// unmined tx per account for the mempool: a payment to receive address 1
// for even account positions, a spend from change address 1 (back to
// change address 0) for odd ones.
func (g *Generator) HDScenario(accts []*HDAccount) (pending []*wire.MsgTx, err error) {
	w := g.NewHDWallet()
	outside, err := g.PkScript(P2WPKH, 40)
	if err != nil {
		return nil, err
	}
	ext := func(v int64) HDOut { return HDOut{Script: outside, Value: v} }
	r := func(a *HDAccount, i uint32, v int64) HDOut { return HDOut{Acct: a, Change: 0, Index: i, Value: v} }
	type step func(a *HDAccount, base int64) (*wire.MsgTx, error)
	blocks := [][]step{
		{
			func(a *HDAccount, b int64) (*wire.MsgTx, error) { return w.Fund(r(a, 0, 10*b)) },
			func(a *HDAccount, b int64) (*wire.MsgTx, error) { return w.Fund(r(a, 1, 5*b)) },
			func(a *HDAccount, b int64) (*wire.MsgTx, error) { return w.Fund(r(a, 3, 5*b/2)) },
			func(a *HDAccount, b int64) (*wire.MsgTx, error) {
				return w.Spend(a, [][2]uint32{{0, 0}}, [2]uint32{1, 0}, ext(3*b))
			},
		},
		{
			func(a *HDAccount, b int64) (*wire.MsgTx, error) {
				return w.Spend(a, [][2]uint32{{0, 1}}, [2]uint32{1, 1}, r(a, 23, 2*b))
			},
			func(a *HDAccount, b int64) (*wire.MsgTx, error) { return w.Fund(r(a, 44, b)) },
		},
		{
			func(a *HDAccount, b int64) (*wire.MsgTx, error) {
				return w.Spend(a, [][2]uint32{{1, 0}, {0, 3}}, [2]uint32{1, 2}, ext(4*b))
			},
		},
		{
			func(a *HDAccount, b int64) (*wire.MsgTx, error) { return w.Fund(r(a, 0, b/2)) },
			func(a *HDAccount, b int64) (*wire.MsgTx, error) {
				return w.Spend(a, [][2]uint32{{0, 23}}, [2]uint32{1, 2}, ext(b/2), r(a, 1, b/2))
			},
		},
	}
	for _, steps := range blocks {
		var txs []*wire.MsgTx
		for i, a := range accts {
			for _, st := range steps {
				tx, err := st(a, int64(i+1)*1_000_000)
				if err != nil {
					return nil, fmt.Errorf("chaingen: HD scenario at height %d: %w", g.Height()+1, err)
				}
				txs = append(txs, tx)
			}
		}
		if _, err := g.AddBlock(txs...); err != nil {
			return nil, err
		}
	}
	for i, a := range accts {
		b := int64(i+1) * 1_000_000
		var tx *wire.MsgTx
		if i%2 == 0 {
			tx, err = w.Fund(r(a, 1, b/4))
		} else {
			tx, err = w.Spend(a, [][2]uint32{{1, 1}}, [2]uint32{1, 0}, ext(b/10))
		}
		if err != nil {
			return nil, err
		}
		pending = append(pending, tx)
	}
	return pending, nil
}

func sortOutpoints(ops []wire.OutPoint) {
	slices.SortFunc(ops, func(a, b wire.OutPoint) int {
		if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
}
