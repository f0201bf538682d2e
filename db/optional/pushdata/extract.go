package pushdata

import (
	"crypto/sha256"

	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// indexed says whether a push of n bytes is indexed: hash160s (20),
// sha256s, x-only keys and witness programs (32), and compressed (33) and
// uncompressed (65) public keys. Other sizes are signatures, scripts and
// payloads, which a wallet does not search by.
func indexed(n int) bool { return n == 20 || n == 32 || n == 33 || n == 65 }

// Push is one indexed push of a tx: its hash and the position carrying it.
type Push struct {
	Hash  [32]byte
	N     uint32 // output or input number
	Input bool
}

// TxPushes lists the indexed pushes of tx, outputs first, then inputs, in
// script order (a push found twice at one position is listed twice).
// prevScript(j) is the output script input j spends (nil if unknown); it
// says whether the input's redeem script (P2SH) or witness script (P2WSH,
// also nested in P2SH) is a script to look into. A P2PK output filed
// under its P2PKH descriptor does no harm: neither is P2SH nor P2WSH. A
// coinbase's input (arbitrary data) is skipped.
func TxPushes(tx *bchain.Tx, prevScript func(j int) []byte) []Push {
	var out []Push
	add := func(n int, input bool, data []byte) {
		if indexed(len(data)) {
			out = append(out, Push{Hash: sha256.Sum256(data), N: uint32(n), Input: input})
		}
	}
	for n := range tx.Vout {
		for _, d := range pushes(tx.Vout[n].Script) {
			add(n, false, d)
		}
	}
	if tx.IsCoinbase() {
		return out
	}
	for j := range tx.Vin {
		vin := &tx.Vin[j]
		sig := pushes(vin.ScriptSig)
		for _, d := range sig {
			add(j, true, d)
		}
		for _, item := range vin.Witness {
			add(j, true, item)
		}
		prev := prevScript(j)
		witnessScript := txscript.IsPayToWitnessScriptHash(prev)
		if txscript.IsPayToScriptHash(prev) && len(sig) > 0 {
			redeem := sig[len(sig)-1]
			for _, d := range pushes(redeem) {
				add(j, true, d)
			}
			witnessScript = txscript.IsPayToWitnessScriptHash(redeem)
		}
		if witnessScript && len(vin.Witness) > 0 {
			for _, d := range pushes(vin.Witness[len(vin.Witness)-1]) {
				add(j, true, d)
			}
		}
	}
	return out
}

// pushes returns the data pushes of a script up to the first opcode that
// does not parse (a script is not required to parse: its pushes before
// the fault are still pushes the tx carries). Empty pushes are left out.
func pushes(script []byte) [][]byte {
	var out [][]byte
	t := txscript.MakeScriptTokenizer(0, script)
	for t.Next() {
		if d := t.Data(); len(d) > 0 {
			out = append(out, d)
		}
	}
	return out
}
