package mempool

import (
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// witnessScale is BIP141's WITNESS_SCALE_FACTOR.
const witnessScale = 4

// SigOpCost is the tx's signature-operation cost as Bitcoin Core's
// GetTransactionSigOpCost counts it with P2SH and segwit active: the
// legacy count of its input and output scripts and the P2SH redeem
// scripts' precise count, each × 4, plus the witness programs' count.
// Inputs whose prevout is unknown add only their legacy count. The
// prevout script is the input's descriptor, which is the output script
// for Bitcoin-type chains (a P2PK output is filed as P2PKH: neither is
// P2SH nor a witness program, so the count is the same).
func SigOpCost(tx *Tx) uint32 {
	legacy := 0
	for i := range tx.Vin {
		legacy += txscript.GetSigOpCount(tx.Vin[i].ScriptSig)
	}
	for i := range tx.Vout {
		legacy += txscript.GetSigOpCount(tx.Vout[i].Script)
	}
	cost := legacy * witnessScale
	if tx.IsCoinbase() {
		return uint32(cost)
	}
	for i := range tx.Vin {
		if i >= len(tx.Prevouts) || !tx.Prevouts[i].Known {
			continue
		}
		in, pk := &tx.Vin[i], []byte(tx.Prevouts[i].Desc)
		if txscript.IsPayToScriptHash(pk) {
			cost += witnessScale * txscript.GetPreciseSigOpCount(in.ScriptSig, pk, true)
		}
		cost += txscript.GetWitnessSigOpCount(in.ScriptSig, pk, wire.TxWitness(in.Witness))
	}
	return uint32(cost)
}
