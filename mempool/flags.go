package mempool

import (
	"github.com/btcsuite/btcd/txscript/v2"
)

// mempool.space's TransactionFlags (backend mempool.interfaces.ts), the
// ones Flags sets.
const (
	FlagRBF           uint64 = 1 << 0
	FlagNoRBF         uint64 = 1 << 1
	FlagV1            uint64 = 1 << 2
	FlagV2            uint64 = 1 << 3
	FlagV3            uint64 = 1 << 4
	FlagP2PK          uint64 = 1 << 8
	FlagP2MS          uint64 = 1 << 9
	FlagP2PKH         uint64 = 1 << 10
	FlagP2SH          uint64 = 1 << 11
	FlagP2WPKH        uint64 = 1 << 12
	FlagP2WSH         uint64 = 1 << 13
	FlagP2TR          uint64 = 1 << 14
	FlagCpfpParent    uint64 = 1 << 16
	FlagCpfpChild     uint64 = 1 << 17
	FlagOpReturn      uint64 = 1 << 24
	FlagAnnex         uint64 = 1 << 28
	FlagCoinjoin      uint64 = 1 << 32
	FlagConsolidation uint64 = 1 << 33
	FlagBatchPayout   uint64 = 1 << 34
)

// scriptFlag is the address-type flag of an output script.
func scriptFlag(script []byte) uint64 {
	if len(script) > 0 && script[0] == txscript.OP_RETURN {
		return FlagOpReturn
	}
	switch txscript.GetScriptClass(script) {
	case txscript.PubKeyTy:
		return FlagP2PK
	case txscript.MultiSigTy:
		return FlagP2MS
	case txscript.PubKeyHashTy:
		return FlagP2PKH
	case txscript.ScriptHashTy:
		return FlagP2SH
	case txscript.WitnessV0PubKeyHashTy:
		return FlagP2WPKH
	case txscript.WitnessV0ScriptHashTy:
		return FlagP2WSH
	case txscript.WitnessV1TaprootTy:
		return FlagP2TR
	}
	return 0
}

// Flags classifies the tx as mempool.space's Common.getTransactionFlags
// does, in part: version, RBF signalling, the input and output types, an
// OP_RETURN output, a taproot annex, and the coinjoin, consolidation and
// batch-payout heuristics, and what the scripts and witnesses tell
// (flags_data.go: sighash types, inscription, fake pubkey and fake
// scripthash). The CPFP bits depend on the pool (the caller adds them);
// the replacement and nonstandard bits are not set, nor the inscription
// bit of an input whose prevout is unknown. A P2PK prevout shows as P2PKH (the index
// files P2PK outputs under their P2PKH script).
func (t *Tx) Flags() uint64 {
	var f uint64
	switch t.Version {
	case 1:
		f |= FlagV1
	case 2:
		f |= FlagV2
	case 3:
		f |= FlagV3
	}
	rbf := false
	inAddr := map[string]int{}
	inValues := map[uint64]bool{}
	for i := range t.Vin {
		in := &t.Vin[i]
		if in.Sequence < 0xfffffffe {
			rbf = true
		}
		known := i < len(t.Prevouts) && t.Prevouts[i].Known
		f |= inputDataFlags(in.ScriptSig, in.Witness, known && scriptFlag(t.Prevouts[i].Desc) == FlagP2TR)
		if !known {
			continue
		}
		pf := scriptFlag(t.Prevouts[i].Desc)
		f |= pf
		if pf == FlagP2TR && len(in.Witness) > 1 {
			if last := in.Witness[len(in.Witness)-1]; len(last) > 0 && last[0] == 0x50 {
				f |= FlagAnnex
			}
		}
		inAddr[string(t.Prevouts[i].Desc)]++
		inValues[t.Prevouts[i].Value] = true
	}
	if rbf {
		f |= FlagRBF
	} else {
		f |= FlagNoRBF
	}
	outAddr := map[string]int{}
	outValues := map[uint64]bool{}
	scripts := make([][]byte, len(t.Vout))
	for i := range t.Vout {
		scripts[i] = t.Vout[i].Script
	}
	f |= outputDataFlags(scripts)
	for i := range t.Vout {
		o := &t.Vout[i]
		f |= scriptFlag(o.Script)
		if len(o.Script) > 0 && o.Script[0] != txscript.OP_RETURN {
			outAddr[string(o.Script)]++
		}
		outValues[o.Value] = true
	}
	nin, nout := float64(len(t.Vin)), float64(len(t.Vout))
	if nout == 0 {
		return f
	}
	reuse := false
	for a, n := range outAddr {
		if n+inAddr[a] > 1 {
			reuse = true
		}
	}
	// mempool.space's "fast but bad" coinjoin heuristic: at least 5 inputs
	// and 5 outputs, at most half of them distinct amounts, no address
	// reuse, no token data, neither a consolidation nor a batch payout.
	if !reuse && nin >= 5 && nout >= 5 && float64(len(inValues)+len(outValues)) <= (nin+nout)/2 &&
		f&(FlagOpReturn|FlagInscription) == 0 && nin/nout < 5 && nin/nout > 0.2 {
		f |= FlagCoinjoin
	}
	if nin/nout >= 5 {
		f |= FlagConsolidation
	}
	if nin/nout <= 0.2 {
		f |= FlagBatchPayout
	}
	return f
}
