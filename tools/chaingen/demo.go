package chaingen

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// DemoSpec sizes a demo chain.
type DemoSpec struct {
	// Blocks is the number of blocks Demo appends.
	Blocks int
	// TxsPerBlock is the number of random payments per block once the
	// wallet has mature coins (scripted txs come on top).
	TxsPerBlock int
}

// DefaultDemo is a ~240 block chain with about 400 transactions: 110
// coinbase-only blocks, then the scripted showcase and 3 payments a block.
func DefaultDemo() DemoSpec { return DemoSpec{Blocks: 240, TxsPerBlock: 3} }

// BenchSpec returns a spec for a chain of the given number of blocks
// (starting from genesis) with roughly totalTxs non-coinbase transactions.
func BenchSpec(params *chaincfg.Params, blocks, totalTxs int) DemoSpec {
	spending := blocks - int(scriptStart(params)) + 1
	per := 0
	if spending > 0 {
		per = max(0, (totalTxs-scriptTxs+spending-1)/spending)
	}
	return DemoSpec{Blocks: blocks, TxsPerBlock: per}
}

// scriptStart is the first height whose block can spend enough mature
// coinbases (one per block) to run the scripted steps.
func scriptStart(params *chaincfg.Params) int32 { return int32(params.CoinbaseMaturity) + 11 }

// Demo appends spec.Blocks blocks: coinbase-only blocks until coinbases
// mature, then three blocks of scripted transactions covering every script
// kind, OP_RETURN payloads, a >=100-input and a >=250-output tx and an
// in-block chain of dependent txs, and TxsPerBlock random payments in every
// block from the first scripted one on.
func (g *Generator) Demo(spec DemoSpec) error {
	start := g.Height() + 1
	end := start + int32(spec.Blocks) - 1
	first := max(start, scriptStart(g.params))
	if end < first+int32(len(demoSteps))-1 {
		return fmt.Errorf("chaingen: demo needs blocks up to height %d, spec ends at %d",
			first+int32(len(demoSteps))-1, end)
	}
	var d demoState
	for h := start; h <= end; h++ {
		b := g.newBlock()
		if step := int(h - first); step >= 0 && step < len(demoSteps) {
			if err := demoSteps[step](g, b, &d); err != nil {
				return fmt.Errorf("chaingen: demo step %d at height %d: %w", step, h, err)
			}
		}
		if h >= first {
			if err := g.fill(b, spec.TxsPerBlock); err != nil {
				return err
			}
		}
		if err := g.finish(b); err != nil {
			return err
		}
	}
	return nil
}

// Extend appends the given number of blocks with txsPerBlock random
// payments each (fewer while the wallet has no mature coins).
func (g *Generator) Extend(blocks, txsPerBlock int) error {
	for range blocks {
		b := g.newBlock()
		if err := g.fill(b, txsPerBlock); err != nil {
			return err
		}
		if err := g.finish(b); err != nil {
			return err
		}
	}
	return nil
}

// demoState carries outputs reserved by one scripted step for a later one.
type demoState struct {
	everyKind []*utxo // one output of every ScriptKind
	fanout    []*utxo // outputs of the many-output tx, for the many-input tx
}

// scriptTxs is the number of txs the scripted steps add.
const scriptTxs = 10

// DemoIndex is the wallet index whose script of every kind receives an
// output in the demo and spends it again a block later, so
// Address(kind, DemoIndex) is a ready-made address with both directions.
const DemoIndex = 7

const (
	fanoutOutputs  = 260
	consolidateIns = 120
	coin1          = 100_000_000
)

var (
	// OPReturnText is the UTF-8 payload of the demo's text OP_RETURN output.
	OPReturnText = []byte("chaingen: Grüße, 世界! ✓")
	// OPReturnBinary is the payload of the demo's binary (invalid UTF-8) OP_RETURN output.
	OPReturnBinary = []byte{0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28, 0x01, 0x02, 0xde, 0xad, 0xbe, 0xef}
)

var demoSteps = []func(*Generator, *blockBuilder, *demoState) error{
	demoFund, demoSpend, demoConsolidate,
}

func (g *Generator) script(ref scriptRef) (*scriptInfo, error) { return g.reg.get(ref.kind, ref.index) }

// pay is a shorthand for an output to a wallet script.
func (g *Generator) pay(kind ScriptKind, index uint64, value int64) (*wire.TxOut, error) {
	si, err := g.reg.get(kind, index)
	if err != nil {
		return nil, err
	}
	return &wire.TxOut{Value: value, PkScript: si.pkScript}, nil
}

// spendFunding stages a tx spending the wallet's oldest mature coinbase (see
// takeFunding) to outs with change to a cold address of kind change.
func (g *Generator) spendFunding(b *blockBuilder, outs []*wire.TxOut, change ScriptKind, feeRate int64) (*wire.MsgTx, error) {
	u := g.wallet.takeFunding()
	if u == nil {
		return nil, errInsufficient
	}
	return g.spend(b, []*utxo{u}, outs, change, feeRate)
}

func (g *Generator) spend(b *blockBuilder, ins []*utxo, outs []*wire.TxOut, change ScriptKind, feeRate int64) (*wire.MsgTx, error) {
	var ch *scriptInfo
	if change != 0 {
		var err error
		if ch, err = g.script(b.rng.coldRef(change)); err != nil {
			return nil, err
		}
	}
	tx, _, err := buildTx(ins, outs, ch, feeRate)
	if err != nil {
		return nil, err
	}
	g.stage(b, tx)
	return tx, nil
}

// reserve removes the tx's outputs [from, to) from the wallet pool so the
// random filler cannot spend them before a later scripted step does.
func (g *Generator) reserve(tx *wire.MsgTx, from, to int) []*utxo {
	txid := tx.TxHash()
	var out []*utxo
	for i := from; i < to; i++ {
		if u := g.wallet.remove(wire.OutPoint{Hash: txid, Index: uint32(i)}); u != nil {
			out = append(out, u)
		}
	}
	return out
}

// demoFund: a 260-output fan-out to reused hot addresses of every kind, one
// output of every kind to DemoIndex, and text and binary OP_RETURNs.
func demoFund(g *Generator, b *blockBuilder, d *demoState) error {
	outs := make([]*wire.TxOut, 0, fanoutOutputs)
	for j := range fanoutOutputs {
		kind := AllKinds[j%len(AllKinds)]
		o, err := g.pay(kind, uint64(1+j%hotMultisig), 1_000_000+int64(j)*1000)
		if err != nil {
			return err
		}
		outs = append(outs, o)
	}
	fan, err := g.spendFunding(b, outs, P2WPKH, 2)
	if err != nil {
		return err
	}
	d.fanout = g.reserve(fan, 0, consolidateIns)

	outs = outs[:0]
	for _, kind := range AllKinds {
		o, err := g.pay(kind, DemoIndex, coin1)
		if err != nil {
			return err
		}
		outs = append(outs, o)
	}
	every, err := g.spendFunding(b, outs, P2TR, 3)
	if err != nil {
		return err
	}
	d.everyKind = g.reserve(every, 0, len(AllKinds))

	for _, data := range [][]byte{OPReturnText, OPReturnBinary} {
		script, err := txscript.NullDataScript(data)
		if err != nil {
			return err
		}
		o, err := g.pay(P2WPKH, 3, coin1/2)
		if err != nil {
			return err
		}
		if _, err := g.spendFunding(b, []*wire.TxOut{{PkScript: script}, o}, P2PKH, 1); err != nil {
			return err
		}
	}
	return nil
}

// demoSpend: one tx spending an output of every kind, and a chain A->B->C
// of txs that each spend their parent's output within the same block.
func demoSpend(g *Generator, b *blockBuilder, d *demoState) error {
	o, err := g.pay(P2WPKH, DemoIndex, 5*coin1)
	if err != nil {
		return err
	}
	if _, err := g.spend(b, d.everyKind, []*wire.TxOut{o}, P2TR, 4); err != nil {
		return err
	}

	hops := []struct {
		kind  ScriptKind
		value int64
	}{{P2WPKH, 10 * coin1}, {P2TR, 5 * coin1}, {P2PKH, coin1}}
	var parent []*utxo
	for i, hop := range hops {
		o, err := g.pay(hop.kind, uint64(4+i), hop.value)
		if err != nil {
			return err
		}
		var tx *wire.MsgTx
		if parent == nil {
			tx, err = g.spendFunding(b, []*wire.TxOut{o}, P2PKH, 5)
		} else {
			tx, err = g.spend(b, parent, []*wire.TxOut{o}, P2WPKH, 5)
		}
		if err != nil {
			return err
		}
		parent = g.reserve(tx, 0, 1)
	}
	g.wallet.push(parent[0]) // the last hop's output is ordinary spendable money
	return nil
}

// demoConsolidate: a 120-input tx sweeping the reserved fan-out outputs, and
// a tx paying one address twice with change back to that same address.
func demoConsolidate(g *Generator, b *blockBuilder, d *demoState) error {
	o, err := g.pay(P2WPKH, 1, sumValues(d.fanout)-200_000)
	if err != nil {
		return err
	}
	if _, err := g.spend(b, d.fanout, []*wire.TxOut{o}, 0, 1); err != nil {
		return err
	}

	const self = 2
	o1, err := g.pay(P2PKH, self, coin1)
	if err != nil {
		return err
	}
	o2, err := g.pay(P2PKH, self, 2*coin1)
	if err != nil {
		return err
	}
	cb := g.wallet.takeFunding()
	if cb == nil {
		return errInsufficient
	}
	change, err := g.reg.get(P2PKH, self)
	if err != nil {
		return err
	}
	tx, _, err := buildTx([]*utxo{cb}, []*wire.TxOut{o1, o2}, change, 2)
	if err != nil {
		return err
	}
	g.stage(b, tx)
	return nil
}
