package ltc

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Flags of the extended tx serialization (after the empty-vin marker).
const (
	flagWitness = 0x01
	flagMWEB    = 0x08
)

// MWEB witness versions of Litecoin Core's script.h: a peg-in output pays
// to a v9 program holding the peg-in kernel's id; the HogEx's first output
// (the MWEB pool, "HogAddr") to a v8 program holding the MWEB header hash.
const (
	opPegIn   = 0x59 // OP_9
	opHogAddr = 0x58 // OP_8
)

// TxSpecific is a tx's coinSpecific object: the tx's part in moving coins
// between the canonical chain and the MWEB. Absent for ordinary txs.
type TxSpecific struct {
	// HogEx marks the integrating tx, the last of an MWEB block: its first
	// input is the previous HogEx's pool output, the others the block's
	// peg-in outputs; its first output is the new pool, the others peg-outs.
	HogEx bool `json:"hogEx,omitempty"`
	// PegIns is how many of the tx's outputs are peg-ins (value moving
	// into the MWEB).
	PegIns int `json:"pegIns,omitempty"`
	// PegOuts is how many of the tx's outputs are peg-outs (HogEx only).
	PegOuts int `json:"pegOuts,omitempty"`
	// MWEB is true when the serialization carries an MWEB tx (a tx as
	// relayed outside blocks; blocks hold MWEB data in their extension).
	MWEB bool `json:"mweb,omitempty"`
}

// VoutSpecific is an output's coinSpecific object.
type VoutSpecific struct {
	// MWEB is "pegin" (pays into the MWEB), "hogaddr" (the HogEx's MWEB
	// pool output) or "pegout" (a HogEx output paying out of the MWEB).
	MWEB string `json:"mweb"`
}

// txParts are the byte ranges of a tx in Litecoin's serialization.
type txParts struct {
	ioStart, ioEnd   int // vin and vout
	witStart, witEnd int // witness stacks (flagWitness)
	flags            byte
	mweb             *mwebSummary // nil without flagMWEB
	end              int          // after nLockTime
}

// scanTx finds the parts of the tx at the start of raw, following Core's
// UnserializeTransaction.
func scanTx(raw []byte) (*txParts, error) {
	c := &cursor{b: raw}
	if err := c.skip(4); err != nil {
		return nil, fmt.Errorf("version: %w", err)
	}
	p := &txParts{ioStart: c.off}
	nIn, err := c.compactSize()
	if err != nil {
		return nil, fmt.Errorf("input count: %w", err)
	}
	if nIn == 0 {
		if p.flags, err = c.byte(); err != nil {
			return nil, fmt.Errorf("flags: %w", err)
		}
		if p.flags == 0 {
			return nil, errors.New("tx without inputs and outputs")
		}
		if p.flags&^(flagWitness|flagMWEB) != 0 {
			return nil, fmt.Errorf("unknown tx flags %#x", p.flags)
		}
		p.ioStart = c.off
		if nIn, err = c.compactSize(); err != nil {
			return nil, fmt.Errorf("input count: %w", err)
		}
	}
	if err := c.inputs(nIn); err != nil {
		return nil, err
	}
	nOut, err := c.compactSize()
	if err != nil {
		return nil, fmt.Errorf("output count: %w", err)
	}
	for i := 0; i < nOut; i++ {
		if err := c.skip(8); err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
		if _, err := c.bytesVec(); err != nil {
			return nil, fmt.Errorf("output %d script: %w", i, err)
		}
	}
	p.ioEnd, p.witStart, p.witEnd = c.off, c.off, c.off
	if p.flags&flagWitness != 0 {
		if err := c.witnesses(nIn); err != nil {
			return nil, err
		}
		p.witEnd = c.off
	}
	if p.flags&flagMWEB != 0 {
		if p.mweb, err = c.mwebTx(); err != nil {
			return nil, fmt.Errorf("mweb tx: %w", err)
		}
		if !p.mweb.HasTxBody && nOut == 0 {
			return nil, errors.New("HogEx without outputs")
		}
	}
	if err := c.skip(4); err != nil {
		return nil, fmt.Errorf("lock time: %w", err)
	}
	p.end = c.off
	return p, nil
}

func (c *cursor) inputs(n int) error {
	for i := 0; i < n; i++ {
		if err := c.skip(36); err != nil {
			return fmt.Errorf("input %d: %w", i, err)
		}
		if _, err := c.bytesVec(); err != nil {
			return fmt.Errorf("input %d script: %w", i, err)
		}
		if err := c.skip(4); err != nil {
			return fmt.Errorf("input %d sequence: %w", i, err)
		}
	}
	return nil
}

func (c *cursor) witnesses(nIn int) error {
	empty := true
	for i := 0; i < nIn; i++ {
		items, err := c.compactSize()
		if err != nil {
			return fmt.Errorf("witness %d: %w", i, err)
		}
		empty = empty && items == 0
		for j := 0; j < items; j++ {
			if _, err := c.bytesVec(); err != nil {
				return fmt.Errorf("witness %d item %d: %w", i, j, err)
			}
		}
	}
	if empty {
		return errors.New("superfluous witness record")
	}
	return nil
}

// bitcoinForm re-serializes the canonical part in Bitcoin's encoding
// (Core's SERIALIZE_NO_MWEB): what btcd decodes and what ids and weight
// are computed over.
func (p *txParts) bitcoinForm(raw []byte) []byte {
	if p.flags&flagMWEB == 0 {
		return raw[:p.end]
	}
	out := make([]byte, 0, p.end)
	out = append(out, raw[:4]...)
	if p.flags&flagWitness != 0 {
		out = append(out, 0, flagWitness)
	}
	out = append(out, raw[p.ioStart:p.ioEnd]...)
	out = append(out, raw[p.witStart:p.witEnd]...)
	return append(out, raw[p.end-4:p.end]...)
}

// decodeTx decodes one tx in Litecoin's serialization at the start of raw
// into tx and returns its length. Raw keeps the node's bytes (MWEB data
// included, as getrawtransaction shows them); the txid, the inputs and
// outputs and the virtual size are those of the canonical part.
func decodeTx(raw []byte, tx *bchain.Tx) (int, error) {
	p, err := scanTx(raw)
	if err != nil {
		return 0, err
	}
	if p.mweb != nil && p.mweb.HasTxBody && p.ioEnd-p.ioStart == 2 {
		// No inputs and no outputs: the tx lives only in the MWEB.
		return 0, errMWEBOnly
	}
	form := p.bitcoinForm(raw)
	var mtx wire.MsgTx
	r := bytes.NewReader(form)
	// Without the witness flag, a zero input count is just that (a HogEx
	// with nothing to spend), not Bitcoin's extended-format marker.
	decode := mtx.DeserializeNoWitness
	if p.flags&flagWitness != 0 {
		decode = mtx.Deserialize
	}
	if err := decode(r); err != nil {
		return 0, err
	}
	if r.Len() != 0 {
		return 0, fmt.Errorf("canonical part has %d undecoded bytes", r.Len())
	}
	btc.TxFromWire(&mtx, raw[:p.end:p.end], tx)
	// Core's weight: stripped size * 3 + size without MWEB data, plus the
	// attached MWEB tx's peg-ins (164 each) and peg-out outputs.
	weight := mtx.SerializeSizeStripped()*3 + len(form)
	if p.mweb != nil {
		weight += 164 * p.mweb.PegIns
		for i, s := range p.mweb.PegOutScripts {
			weight += 4 * wire.NewTxOut(p.mweb.PegOutValues[i], s).SerializeSize()
		}
	}
	tx.VSize = (weight + 3) / 4
	markMWEB(tx, p)
	return p.end, nil
}

var errMWEBOnly = fmt.Errorf("%w: MWEB-only transaction (no canonical inputs or outputs)", bchain.ErrInvalidData)

// markMWEB fills the coinSpecific objects of a tx that moves value into or
// out of the MWEB.
func markMWEB(tx *bchain.Tx, p *txParts) {
	spec := TxSpecific{MWEB: p.mweb != nil && p.mweb.HasTxBody}
	spec.HogEx = p.mweb != nil && !p.mweb.HasTxBody
	for i := range tx.Vout {
		o := &tx.Vout[i]
		switch {
		case spec.HogEx && i == 0 && isProgram(o.Script, opHogAddr):
			o.Specific = VoutSpecific{MWEB: "hogaddr"}
		case spec.HogEx && i > 0:
			o.Specific = VoutSpecific{MWEB: "pegout"}
			spec.PegOuts++
		case isProgram(o.Script, opPegIn):
			o.Specific = VoutSpecific{MWEB: "pegin"}
			spec.PegIns++
		}
	}
	if spec != (TxSpecific{}) {
		tx.Specific = spec
	}
}

// isProgram reports whether script is a 32-byte witness program of the
// version op.
func isProgram(script []byte, op byte) bool {
	return len(script) == 34 && script[0] == op && script[1] == 32
}

// hogEx reports whether a decoded tx is a HogEx.
func hogEx(tx *bchain.Tx) bool {
	s, ok := tx.Specific.(TxSpecific)
	return ok && s.HogEx
}
