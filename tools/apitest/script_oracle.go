package apitest

import (
	"bytes"

	"github.com/btcsuite/btcd/wire/v2"
)

// Oracle of the by-script queries, replayed from the raw chain with btcd's
// types: which confirmed txs touch a descriptor, where, and which of its
// outputs are unspent. group maps an output script to the descriptor it
// is filed under (the coin parser's OutputAddrDesc: it is the parser's
// rule, not the index's code, that decides it).

// ScriptTxRef is a confirmed tx of a descriptor's history.
type ScriptTxRef struct {
	Txid        string
	Height, Pos int
	// Funded and Spent count the outputs paying the descriptor and the
	// inputs spending from it; the sums are their values.
	Funded, Spent       int
	FundedSum, SpentSum int64
}

// ScriptOut is an unspent output of a descriptor.
type ScriptOut struct {
	Txid   string
	Vout   int
	Height int
	Value  int64
}

// ScriptLedger returns desc's confirmed history in chain order and its
// unspent outputs in chain order (height, position, vout).
func (c *Chain) ScriptLedger(group func([]byte) []byte, desc []byte) ([]ScriptTxRef, []ScriptOut) {
	type out struct {
		ScriptOut
		mine bool
	}
	outs := map[wire.OutPoint]*out{}
	var order []wire.OutPoint
	var hist []ScriptTxRef
	for h, b := range c.Gen.Blocks() {
		for pos, tx := range b.Transactions {
			ref := ScriptTxRef{Txid: tx.TxHash().String(), Height: h, Pos: pos}
			if pos > 0 {
				for _, in := range tx.TxIn {
					prev := outs[in.PreviousOutPoint]
					if prev != nil && prev.mine {
						ref.Spent++
						ref.SpentSum += prev.Value
					}
					delete(outs, in.PreviousOutPoint)
				}
			}
			for i, o := range tx.TxOut {
				op := wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}
				d := group(o.PkScript)
				mine := len(d) > 0 && bytes.Equal(d, desc)
				outs[op] = &out{ScriptOut{Txid: ref.Txid, Vout: i, Height: h, Value: o.Value}, mine}
				if mine {
					ref.Funded++
					ref.FundedSum += o.Value
					order = append(order, op)
				}
			}
			if ref.Funded+ref.Spent > 0 {
				hist = append(hist, ref)
			}
		}
	}
	var utxos []ScriptOut
	for _, op := range order {
		if o := outs[op]; o != nil {
			utxos = append(utxos, o.ScriptOut)
		}
	}
	return hist, utxos
}

// Descs lists every distinct descriptor the confirmed outputs are filed
// under, in order of first appearance.
func (c *Chain) Descs(group func([]byte) []byte) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	for _, b := range c.Gen.Blocks() {
		for _, tx := range b.Transactions {
			for _, o := range tx.TxOut {
				if d := group(o.PkScript); len(d) > 0 && !seen[string(d)] {
					seen[string(d)] = true
					out = append(out, d)
				}
			}
		}
	}
	return out
}
