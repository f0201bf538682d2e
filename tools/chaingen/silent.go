package chaingen

// silent.go: blocks with Silent Payments (BIP352), for the tweak index's
// tests: payments from every eligible input kind (one labeled), beside
// txs that BIP352 does not scan, and spends of the payments.

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/internal/bip352"
)

// SPReceiver is a silent payment wallet: a scan key, a spend key and the
// labels it hands out.
type SPReceiver struct {
	Scan, Spend *btcec.PrivateKey
	Labels      []uint32
}

// NewSPReceiver derives a receiver's keys from seed; it uses label 1.
func NewSPReceiver(seed string) *SPReceiver {
	return &SPReceiver{Scan: deriveKey(seed, 'S', 0).priv, Spend: deriveKey(seed, 'S', 1).priv, Labels: []uint32{1}}
}

// ScanKey is the 32-byte scan private key.
func (r *SPReceiver) ScanKey() []byte { return r.Scan.Serialize() }

// SpendPub is the compressed spend public key.
func (r *SPReceiver) SpendPub() []byte { return r.Spend.PubKey().SerializeCompressed() }

func (r *SPReceiver) recipient(label *uint32) (bip352.Recipient, error) {
	rc := bip352.Recipient{Scan: r.Scan.PubKey().SerializeCompressed(), Spend: r.SpendPub()}
	if label == nil {
		return rc, nil
	}
	var err error
	rc.Spend, err = bip352.LabeledSpend(r.ScanKey(), r.SpendPub(), *label)
	return rc, err
}

// SPPayment is one output paying the receiver.
type SPPayment struct {
	Outpoint wire.OutPoint
	Value    int64
	Key      [32]byte // the x-only output key
	Label    *uint32
}

// SPChain is what SilentPayments added.
type SPChain struct {
	// Payments are the outputs the receiver owns, in block order.
	Payments []SPPayment
	// Skipped is an output computed as a payment to the receiver by a tx
	// that also spends a witness v2 output: BIP352 does not scan it, so
	// a scanner must not find it.
	Skipped SPPayment
	// Eligible are the txs that have a tweak; Ineligible the txs with a
	// taproot output that have none.
	Eligible, Ineligible []chainhash.Hash
	// Spent are the payments the last block spends.
	Spent []wire.OutPoint
	// FundHeight, PayHeight and SpendHeight are the three blocks' heights.
	FundHeight, PayHeight, SpendHeight int32
}

// spRefBase numbers the receiver's outputs in the registry, apart from
// every derived script.
const spRefBase = 1 << 40

// spFundKinds are the outputs the first block creates for the payments:
// one per eligible input kind and the extra inputs the other txs spend.
var spFundKinds = []ScriptKind{P2PKH, P2WPKH, P2SHP2WPKH, P2TR, P2WPKH, P2TR, P2WSHMultisig, P2WPKH, P2WPKH}

// witnessV2 is a version 2 witness program: anyone can spend it (with an
// empty witness; btcd wants the program itself to be true, so it is not
// all zeros), and a tx that does is not scanned.
var witnessV2 = append([]byte{txscript.OP_2, txscript.OP_DATA_32}, bytes.Repeat([]byte{0x5a}, 32)...)

// SilentPayments appends three blocks: one funding the sender's inputs,
// one paying r from every eligible input kind beside txs BIP352 skips, and
// one spending two of the payments.
func (g *Generator) SilentPayments(r *SPReceiver) (*SPChain, error) {
	c := &SPChain{}
	fund, v2, err := g.spFund()
	if err != nil {
		return nil, err
	}
	c.FundHeight = g.Height()
	b := g.newBlock()
	one := func(x uint32) *uint32 { return &x }
	pays := []struct {
		ins    []*utxo
		labels []*uint32
		values []int64
	}{
		{fund[0:1], []*uint32{nil}, []int64{coin1}},                     // P2PKH
		{fund[1:2], []*uint32{one(1)}, []int64{coin1}},                  // P2WPKH, labeled
		{fund[2:3], []*uint32{nil}, []int64{coin1}},                     // P2SH-P2WPKH
		{fund[3:4], []*uint32{one(1)}, []int64{coin1 / 2}},              // P2TR key path, labeled
		{fund[4:6], []*uint32{nil, nil}, []int64{3 * coin1, 2 * coin1}}, // P2WPKH + P2TR, k = 0 and 1
	}
	var owned [][]*utxo
	for _, p := range pays {
		tx, got, err := g.spPay(b, r, p.ins, nil, p.labels, p.values)
		if err != nil {
			return nil, err
		}
		c.Eligible = append(c.Eligible, tx.TxHash())
		c.Payments = append(c.Payments, got...)
		owned = append(owned, g.reserve(tx, 0, len(got)))
	}
	if err := g.spSkipped(b, r, c, fund, v2); err != nil {
		return nil, err
	}
	if err := g.finish(b); err != nil {
		return nil, err
	}
	c.PayHeight = g.Height()
	// The last block spends the P2PKH-funded payment (its tx keeps no
	// taproot output) and the larger of the two-output tx's payments.
	b = g.newBlock()
	for _, u := range []*utxo{owned[0][0], owned[4][0]} {
		o, err := g.pay(P2WPKH, 810, u.value-coin1/10)
		if err != nil {
			return nil, err
		}
		if _, err := g.spend(b, []*utxo{u}, []*wire.TxOut{o}, 0, 2); err != nil {
			return nil, err
		}
		c.Spent = append(c.Spent, u.op)
	}
	if err := g.finish(b); err != nil {
		return nil, err
	}
	c.SpendHeight = g.Height()
	return c, nil
}

// spFund mines a block whose one tx creates the sender's inputs
// (spFundKinds) and a witness v2 output.
func (g *Generator) spFund() ([]*utxo, wire.OutPoint, error) {
	b := g.newBlock()
	var outs []*wire.TxOut
	for i, k := range spFundKinds {
		o, err := g.pay(k, uint64(800+i), 4*coin1)
		if err != nil {
			return nil, wire.OutPoint{}, err
		}
		outs = append(outs, o)
	}
	outs = append(outs, &wire.TxOut{Value: 100_000, PkScript: witnessV2})
	tx, err := g.spendFunding(b, outs, P2WPKH, 2)
	if err != nil {
		return nil, wire.OutPoint{}, err
	}
	fund := g.reserve(tx, 0, len(spFundKinds))
	if len(fund) != len(spFundKinds) {
		return nil, wire.OutPoint{}, fmt.Errorf("chaingen: %d of %d funding outputs in the wallet", len(fund), len(spFundKinds))
	}
	return fund, wire.OutPoint{Hash: tx.TxHash(), Index: uint32(len(spFundKinds))}, g.finish(b)
}

// spPay stages a tx spending ins (and extra, which takes no part in the
// shared secret) that pays r once per label (nil: unlabeled) with change,
// and registers the payments so that the wallet can spend them.
func (g *Generator) spPay(b *blockBuilder, r *SPReceiver, ins []*utxo, extra *wire.TxIn, labels []*uint32, values []int64) (*wire.MsgTx, []SPPayment, error) {
	var send []bip352.SendInput
	for _, u := range ins {
		in := bip352.SendInput{PrevTxid: displayHash(u.op.Hash), PrevVout: u.op.Index, Taproot: u.info.ref.kind == P2TR}
		switch u.info.ref.kind {
		case P2PKH, P2WPKH, P2SHP2WPKH:
			in.Key = u.info.keys[0].priv
		case P2TR:
			in.Key = u.info.tapKey
		}
		send = append(send, in)
	}
	if extra != nil {
		send = append(send, bip352.SendInput{PrevTxid: displayHash(extra.PreviousOutPoint.Hash), PrevVout: extra.PreviousOutPoint.Index})
	}
	var rcpts []bip352.Recipient
	for _, l := range labels {
		rc, err := r.recipient(l)
		if err != nil {
			return nil, nil, err
		}
		rcpts = append(rcpts, rc)
	}
	keys, err := bip352.SendOutputs(send, rcpts)
	if err != nil {
		return nil, nil, err
	}
	outs := make([]*wire.TxOut, len(keys))
	for i, k := range keys {
		outs[i] = &wire.TxOut{Value: values[i], PkScript: append([]byte{txscript.OP_1, txscript.OP_DATA_32}, k[:]...)}
	}
	ch, err := g.script(b.rng.coldRef(P2WPKH))
	if err != nil {
		return nil, nil, err
	}
	tx, err := g.buildWithExtra(ins, extra, outs, ch)
	if err != nil {
		return nil, nil, err
	}
	pays := make([]SPPayment, len(keys))
	for i, k := range keys {
		pays[i] = SPPayment{Outpoint: wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}, Value: values[i], Key: k, Label: labels[i]}
	}
	if extra == nil {
		if err := g.spRegister(r, send, keys); err != nil {
			return nil, nil, err
		}
	}
	g.stage(b, tx)
	return tx, pays, nil
}

// spRegister adds the payments' scripts with their spending keys to the
// registry: b_spend + t_k (+ the label's tweak), as the receiver's scan
// finds them from the tx's tweak (a check of the sender against the
// scanner too).
func (g *Generator) spRegister(r *SPReceiver, send []bip352.SendInput, keys [][32]byte) error {
	tweak, err := bip352.SendTweak(send)
	if err != nil {
		return err
	}
	s, err := bip352.NewScanner(r.ScanKey(), r.SpendPub(), r.Labels)
	if err != nil {
		return err
	}
	found, err := s.Scan(tweak[:], slices.Clone(keys))
	if err != nil {
		return err
	}
	if len(found) != len(keys) {
		return fmt.Errorf("chaingen: the receiver finds %d of the %d payments", len(found), len(keys))
	}
	for _, m := range found {
		si := &scriptInfo{ref: scriptRef{P2TR, spRefBase + uint64(len(g.reg.byRef))},
			pkScript: append([]byte{txscript.OP_1, txscript.OP_DATA_32}, m.Output[:]...), tapKey: bip352.SpendKey(r.Spend, m)}
		g.reg.add(si)
	}
	return nil
}

// buildWithExtra is buildTx for ins plus an optional anyone-can-spend
// input (a witness v2 output) at the end.
func (g *Generator) buildWithExtra(ins []*utxo, extra *wire.TxIn, outs []*wire.TxOut, change *scriptInfo) (*wire.MsgTx, error) {
	if extra == nil {
		tx, _, err := buildTx(ins, outs, change, 2)
		return tx, err
	}
	coin, ok := g.view[extra.PreviousOutPoint]
	if !ok {
		return nil, fmt.Errorf("chaingen: extra input %v is not in the view", extra.PreviousOutPoint)
	}
	// The extra input's value goes to the fee; the signed inputs' value
	// pays the outputs and the change.
	tx, _, err := buildTx(ins, outs, change, 2)
	if err != nil {
		return nil, err
	}
	tx.AddTxIn(&wire.TxIn{PreviousOutPoint: extra.PreviousOutPoint, Sequence: txSequence})
	prevs := map[wire.OutPoint]*wire.TxOut{extra.PreviousOutPoint: {Value: coin.value, PkScript: witnessV2}}
	for _, u := range ins {
		prevs[u.op] = &wire.TxOut{Value: u.value, PkScript: u.info.pkScript}
	}
	for i := range tx.TxIn[:len(ins)] { // adding an input changed every sighash
		tx.TxIn[i].SignatureScript, tx.TxIn[i].Witness = nil, nil
	}
	s := sigContext{prevs: txscript.NewMultiPrevOutFetcher(prevs)}
	s.hashes = txscript.NewTxSigHashes(tx, s.prevs)
	for i, u := range ins {
		if err := s.signInput(tx, i, u); err != nil {
			return nil, err
		}
	}
	return tx, nil
}

// spSkipped stages the txs with taproot outputs that have no tweak: one
// whose only input is a P2WSH multisig, and one that pays r from a P2WPKH
// input beside a witness v2 input (which makes BIP352 skip it); and one
// eligible-input tx without a taproot output.
func (g *Generator) spSkipped(b *blockBuilder, r *SPReceiver, c *SPChain, fund []*utxo, v2 wire.OutPoint) error {
	tr, err := g.pay(P2TR, 811, coin1)
	if err != nil {
		return err
	}
	ms, err := g.spend(b, fund[6:7], []*wire.TxOut{tr}, P2WPKH, 2)
	if err != nil {
		return err
	}
	tx, pays, err := g.spPay(b, r, fund[7:8], &wire.TxIn{PreviousOutPoint: v2}, []*uint32{nil}, []int64{coin1})
	if err != nil {
		return err
	}
	c.Skipped = pays[0]
	c.Ineligible = append(c.Ineligible, ms.TxHash(), tx.TxHash())
	o, err := g.pay(P2WPKH, 812, coin1)
	if err != nil {
		return err
	}
	_, err = g.spend(b, fund[8:9], []*wire.TxOut{o}, P2WPKH, 2)
	return err
}

// displayHash is a hash in display order (the reverse of its bytes).
func displayHash(h chainhash.Hash) [32]byte {
	var out [32]byte
	copy(out[:], h[:])
	slices.Reverse(out[:])
	return out
}
