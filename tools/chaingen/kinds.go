package chaingen

import "fmt"

// ScriptKind is an output script type the generator's wallet can receive to
// and spend from.
type ScriptKind uint8

// Wallet script kinds. Key-based kinds at the same index share one key, so
// e.g. P2PK and P2PKH outputs of an index belong to the same explorer address.
const (
	P2PKH            ScriptKind = iota + 1
	P2WPKH                      // native segwit v0 key hash
	P2SHP2WPKH                  // P2WPKH nested in P2SH
	P2WSHMultisig               // 2-of-3 multisig in P2WSH
	P2TR                        // taproot key path (BIP86 tweak, no script tree)
	P2PK                        // bare compressed public key
	P2PKUncompressed            // bare uncompressed public key
	BareMultisig                // 1-of-2 bare multisig (no address)
	HashLock                    // non-standard OP_SHA256 <h> OP_EQUAL (no address)
)

// AllKinds lists every wallet script kind.
var AllKinds = []ScriptKind{P2PKH, P2WPKH, P2SHP2WPKH, P2WSHMultisig, P2TR,
	P2PK, P2PKUncompressed, BareMultisig, HashLock}

var kindNames = map[ScriptKind]string{
	P2PKH: "p2pkh", P2WPKH: "p2wpkh", P2SHP2WPKH: "p2sh-p2wpkh",
	P2WSHMultisig: "p2wsh-multisig", P2TR: "p2tr", P2PK: "p2pk",
	P2PKUncompressed: "p2pk-uncompressed", BareMultisig: "bare-multisig",
	HashLock: "hashlock",
}

func (k ScriptKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("ScriptKind(%d)", uint8(k))
}

// HasAddress reports whether explorers show an address for outputs of kind k.
func (k ScriptKind) HasAddress() bool { return k != BareMultisig && k != HashLock }

func (k ScriptKind) segwit() bool {
	return k == P2WPKH || k == P2SHP2WPKH || k == P2WSHMultisig || k == P2TR
}
