package mempool

import (
	"bytes"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/txscript/v2"
)

// The flags a tx's scripts and witnesses tell beyond the address types:
// mempool.space's fake pubkey, inscription, fake scripthash and sighash
// bits (Common.getTransactionFlags and its helpers).
const (
	FlagFakePubkey     uint64 = 1 << 25
	FlagInscription    uint64 = 1 << 26
	FlagFakeScripthash uint64 = 1 << 27
	FlagSighashAll     uint64 = 1 << 40
	FlagSighashNone    uint64 = 1 << 41
	FlagSighashSingle  uint64 = 1 << 42
	FlagSighashDefault uint64 = 1 << 43
	FlagSighashACP     uint64 = 1 << 44
)

// inputDataFlags are an input's sighash bits and, for a taproot spend,
// its inscription bit. taproot: the prevout is known to be P2TR.
func inputDataFlags(scriptSig []byte, witness [][]byte, taproot bool) uint64 {
	var f uint64
	switch {
	case taproot:
		f |= schnorrSighashFlags(witness)
		if script := tapscript(witness); script != nil && hasEnvelope(script) {
			f |= FlagInscription
		}
	case len(witness) > 0:
		for _, w := range witness {
			if isDERSig(w) {
				f |= sighashFlags(w[len(w)-1])
			}
		}
	case len(scriptSig) > 0:
		tok := txscript.MakeScriptTokenizer(0, scriptSig)
		for tok.Next() {
			if d := tok.Data(); d != nil && isDERSig(d) {
				f |= sighashFlags(d[len(d)-1])
			}
		}
	}
	return f
}

// hasAnnex: a taproot witness of more than one item whose last starts
// with 0x50 carries an annex (BIP341).
func hasAnnex(witness [][]byte) bool {
	if len(witness) < 2 {
		return false
	}
	last := witness[len(witness)-1]
	return len(last) > 0 && last[0] == 0x50
}

// tapscript is a script-path spend's script (nil for a key-path spend).
func tapscript(witness [][]byte) []byte {
	n := len(witness)
	if hasAnnex(witness) {
		n--
	}
	if n < 2 {
		return nil
	}
	return witness[n-2]
}

// hasEnvelope finds the inscription envelope's OP_0 OP_IF in a script.
func hasEnvelope(script []byte) bool {
	tok := txscript.MakeScriptTokenizer(0, script)
	prevFalse := false
	for tok.Next() {
		op := tok.Opcode()
		if prevFalse && op == txscript.OP_IF {
			return true
		}
		prevFalse = op == txscript.OP_0
	}
	return false
}

// schnorrSighashFlags: a 65-byte signature names its sighash type in its
// last byte, a 64-byte one is SIGHASH_DEFAULT. A key-path spend's only
// item is the signature; in a script path, every item before the script
// and control block may be one.
func schnorrSighashFlags(witness [][]byte) uint64 {
	if len(witness) == 0 {
		return 0
	}
	n := len(witness)
	if hasAnnex(witness) {
		n--
	}
	if n == 1 {
		if len(witness[0]) == 65 {
			return sighashFlags(witness[0][64])
		}
		return FlagSighashDefault
	}
	var f uint64
	for _, w := range witness[:max(n-2, 0)] {
		switch len(w) {
		case 65:
			f |= sighashFlags(w[64])
		case 64:
			f |= FlagSighashDefault
		}
	}
	return f
}

// isDERSig is mempool.space's test of a probable ECDSA signature: a DER
// sequence whose length byte fits, followed by a standard sighash type.
func isDERSig(w []byte) bool {
	if len(w) < 9 || w[0] != 0x30 || int(w[1])+3 != len(w) {
		return false
	}
	switch w[len(w)-1] {
	case 0x01, 0x02, 0x03, 0x81, 0x82, 0x83:
		return true
	}
	return false
}

func sighashFlags(t byte) uint64 {
	switch t {
	case 0x01:
		return FlagSighashAll
	case 0x02:
		return FlagSighashNone
	case 0x03:
		return FlagSighashSingle
	case 0x81:
		return FlagSighashAll | FlagSighashACP
	case 0x82:
		return FlagSighashNone | FlagSighashACP
	case 0x83:
		return FlagSighashSingle | FlagSighashACP
	}
	return FlagSighashDefault
}

// burnKeys are the well-known unspendable keys mempool.space marks fake.
var burnKeys = [][]byte{
	bytes.Repeat([]byte{0x22}, 33), bytes.Repeat([]byte{0x33}, 33), bytes.Repeat([]byte{0x02}, 33), bytes.Repeat([]byte{0x03}, 33),
}

func init() {
	// The first byte of a key is its prefix: 02 or 03.
	burnKeys[0][0], burnKeys[1][0] = 0x02, 0x03
}

// fakeKey: not a point of secp256k1, or a burn key.
func fakeKey(k []byte) bool {
	for _, b := range burnKeys {
		if bytes.Equal(k, b) {
			return true
		}
	}
	_, err := btcec.ParsePubKey(k)
	return err != nil
}

// outputDataFlags are the outputs' fake pubkey bit (a P2PK or bare
// multisig key that is no curve point) and fake scripthash bit (data
// spread over consecutive P2WSH outputs whose first two hash bytes give
// its length and whose last is padded with zeros).
func outputDataFlags(scripts [][]byte) uint64 {
	var f uint64
	run, size := 0, 0
	for _, s := range scripts {
		switch txscript.GetScriptClass(s) {
		case txscript.PubKeyTy:
			if fakeKey(s[1 : len(s)-1]) {
				f |= FlagFakePubkey
			}
		case txscript.MultiSigTy:
			tok := txscript.MakeScriptTokenizer(0, s)
			for tok.Next() {
				if d := tok.Data(); len(d) > 0 && fakeKey(d) {
					f |= FlagFakePubkey
				}
			}
		}
		if txscript.GetScriptClass(s) != txscript.WitnessV0ScriptHashTy {
			run = 0
			continue
		}
		if run == 0 {
			size = int(s[2])<<8 | int(s[3])
		}
		run++
		if run == (size+2+31)/32 {
			zeros := run*32 - size - 2
			if zeros >= 0 && zeros <= 32 && bytes.HasSuffix(s, make([]byte, zeros)) {
				f |= FlagFakeScripthash
			}
		}
	}
	return f
}
