package chaingen

import (
	"bytes"
	"fmt"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// Mempool helpers: spending outputs that are not mined yet (chains of
// unconfirmed txs) and replacing a tx under BIP125, for tests that drive a
// node's mempool.
//
// The wallet only learns of a tx's outputs when a block holding it is added.
// So an unconfirmed output is spent through Coins and Spend, never through
// CreatePayment, and a parent must be mined no later than its children
// (AddBlock(parent, child) or parent first): mining the parent alone hands
// its change back to the wallet although a child in the mempool spends it.

// Coin is an output the generator's keys can spend, mined or not.
type Coin struct {
	OutPoint wire.OutPoint
	Value    int64
	PkScript []byte
}

// Coins returns the outputs of tx that pay to wallet scripts, in output
// order (e.g. the change of an unconfirmed payment).
func (g *Generator) Coins(tx *wire.MsgTx) []Coin {
	txid := tx.TxHash()
	var out []Coin
	for i, o := range tx.TxOut {
		if g.reg.lookup(o.PkScript) != nil {
			out = append(out, Coin{OutPoint: wire.OutPoint{Hash: txid, Index: uint32(i)}, Value: o.Value, PkScript: o.PkScript})
		}
	}
	return out
}

// Prevouts returns what each input of tx spends, looked up in the given
// unconfirmed txs and in g's chain (spent or not).
func (g *Generator) Prevouts(tx *wire.MsgTx, unconfirmed ...*wire.MsgTx) ([]Coin, error) {
	want := make(map[chainhash.Hash]bool, len(tx.TxIn))
	for _, in := range tx.TxIn {
		want[in.PreviousOutPoint.Hash] = true
	}
	found := make(map[chainhash.Hash]*wire.MsgTx, len(want))
	for _, u := range unconfirmed {
		if h := u.TxHash(); want[h] {
			found[h] = u
		}
	}
	for h := len(g.blocks) - 1; h > 0 && len(found) < len(want); h-- {
		for _, btx := range g.blocks[h].Transactions {
			if txid := btx.TxHash(); want[txid] && found[txid] == nil {
				found[txid] = btx
			}
		}
	}
	out := make([]Coin, len(tx.TxIn))
	for i, in := range tx.TxIn {
		op := in.PreviousOutPoint
		prev := found[op.Hash]
		if prev == nil || int(op.Index) >= len(prev.TxOut) {
			return nil, fmt.Errorf("chaingen: input %d spends %v, which is neither in the chain nor in the given txs", i, op)
		}
		o := prev.TxOut[op.Index]
		out[i] = Coin{OutPoint: op, Value: o.Value, PkScript: o.PkScript}
	}
	return out, nil
}

// Spend returns a standard signed tx spending exactly ins (wallet outputs,
// mined or not) to the outputs to, with change above the dust limit to the
// wallet's change script and a fee of feeRate sat/vB. Every input signals
// BIP125 replaceability. Mined inputs are taken out of the wallet, like
// CreatePayment's; the tx's own outputs are not added (see above).
func (g *Generator) Spend(ins []Coin, to []Output, feeRate int64) (*wire.MsgTx, error) {
	us, err := g.coinUtxos(ins)
	if err != nil {
		return nil, err
	}
	outs, err := g.txOuts(to)
	if err != nil {
		return nil, err
	}
	change, err := g.reg.get(paymentChange.kind, paymentChange.index)
	if err != nil {
		return nil, err
	}
	if feeRate < 1 {
		return nil, fmt.Errorf("chaingen: fee rate %d < 1 sat/vB", feeRate)
	}
	tx, _, err := buildTx(us, outs, change, feeRate)
	if err != nil {
		return nil, err
	}
	for _, c := range ins {
		g.wallet.remove(c.OutPoint)
	}
	return tx, nil
}

// Replace returns a BIP125 replacement of tx: the same inputs (prevs, as
// Prevouts returns them) paying to (tx's outputs without its change when
// to is nil), with change to the wallet at feeRate sat/vB, which must be
// higher than tx's own rate for a node to accept it.
func (g *Generator) Replace(tx *wire.MsgTx, prevs []Coin, to []Output, feeRate int64) (*wire.MsgTx, error) {
	if len(prevs) != len(tx.TxIn) {
		return nil, fmt.Errorf("chaingen: %d prevouts for %d inputs", len(prevs), len(tx.TxIn))
	}
	for i, in := range tx.TxIn {
		if prevs[i].OutPoint != in.PreviousOutPoint {
			return nil, fmt.Errorf("chaingen: prevout %d is %v, input spends %v", i, prevs[i].OutPoint, in.PreviousOutPoint)
		}
	}
	if to == nil {
		change, err := g.reg.get(paymentChange.kind, paymentChange.index)
		if err != nil {
			return nil, err
		}
		for _, o := range tx.TxOut {
			if !bytes.Equal(o.PkScript, change.pkScript) {
				to = append(to, Output{Script: o.PkScript, Value: o.Value})
			}
		}
	}
	return g.Spend(prevs, to, feeRate)
}

// SpendEach returns one tx per coin, each paying the coin's value minus a
// fee of feeRate sat/vB to the script dests[i % len(dests)]: many
// independent txs at once, signed in parallel (a mempool filler for
// benchmarks).
func (g *Generator) SpendEach(coins []Coin, dests [][]byte, feeRate int64) ([]*wire.MsgTx, error) {
	us, err := g.coinUtxos(coins)
	if err != nil {
		return nil, err
	}
	if feeRate < 1 {
		return nil, fmt.Errorf("chaingen: fee rate %d < 1 sat/vB", feeRate)
	}
	if len(dests) == 0 {
		return nil, fmt.Errorf("chaingen: no destination scripts")
	}
	txs := make([]*wire.MsgTx, len(coins))
	errs := make([]error, len(coins))
	parallel(len(coins), func(i int) {
		ins := us[i : i+1]
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: ins[0].op, Sequence: txSequence})
		tx.AddTxOut(&wire.TxOut{PkScript: dests[i%len(dests)]})
		fee := feeRate * estimateVSize(tx, ins)
		if tx.TxOut[0].Value = ins[0].value - fee; tx.TxOut[0].Value < dustLimit {
			errs[i] = fmt.Errorf("%w: coin %v worth %d cannot pay fee %d", errInsufficient, ins[0].op, ins[0].value, fee)
			return
		}
		errs[i] = signTx(tx, ins)
		txs[i] = tx
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, c := range coins {
		g.wallet.remove(c.OutPoint)
	}
	return txs, nil
}

// coinUtxos converts coins into signable wallet outputs.
func (g *Generator) coinUtxos(coins []Coin) ([]*utxo, error) {
	if len(coins) == 0 {
		return nil, fmt.Errorf("chaingen: no coins to spend")
	}
	us := make([]*utxo, len(coins))
	for i, c := range coins {
		si := g.reg.lookup(c.PkScript)
		if si == nil {
			return nil, fmt.Errorf("chaingen: coin %v does not pay to a wallet script", c.OutPoint)
		}
		if si.ref.kind == HashLock {
			return nil, fmt.Errorf("chaingen: coin %v is a non-standard hash lock", c.OutPoint)
		}
		us[i] = &utxo{op: c.OutPoint, value: c.Value, info: si}
	}
	return us, nil
}

// txOuts converts payment destinations into outputs.
func (g *Generator) txOuts(to []Output) ([]*wire.TxOut, error) {
	outs := make([]*wire.TxOut, 0, len(to))
	for _, o := range to {
		script := o.Script
		if script == nil {
			a, err := decodeAddress(o.Address, g.params)
			if err != nil {
				return nil, err
			}
			if script, err = txscript.PayToAddrScript(a); err != nil {
				return nil, err
			}
		}
		outs = append(outs, &wire.TxOut{Value: o.Value, PkScript: script})
	}
	return outs, nil
}
