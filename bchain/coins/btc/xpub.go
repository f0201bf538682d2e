package btc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// XpubParser reads accounts of one network: extended public keys whose
// version (SLIP-132 magic) gives the script type, and output descriptors
// (descriptor.go). Keys are decoded with btcutil's hdkeychain; addresses
// are derived by xpub_derive.go.
type XpubParser struct {
	params *chaincfg.Params
	slip44 uint32
	// versions maps the public key versions this network accepts to the
	// script type a plain key of that version means.
	versions map[uint32]bchain.XpubScriptType
	// checksum is the coin's base58check checksum; nil means double SHA-256.
	checksum func([]byte) [4]byte
}

// WithChecksum returns a copy of the parser for a coin whose extended keys
// carry another base58check checksum (Groestlcoin's double Grøstl-512).
func (p *XpubParser) WithChecksum(checksum func([]byte) [4]byte) *XpubParser {
	q := *p
	q.checksum = checksum
	return &q
}

var _ bchain.XpubParser = (*XpubParser)(nil)

// SLIP-132 versions of extended public keys, for messages and defaults.
var knownVersions = map[uint32]string{
	0x0488b21e: "xpub", 0x049d7cb2: "ypub", 0x04b24746: "zpub",
	0x043587cf: "tpub", 0x044a5262: "upub", 0x045f1cf6: "vpub",
	0x0295b43f: "Ypub", 0x02aa7ed3: "Zpub", 0x024289ef: "Upub", 0x02575483: "Vpub",
	0x0488ade4: "xprv", 0x04358394: "tprv",
}

// Magics are the extended public key versions of a coin config
// (xpub_magic, xpub_magic_segwit_p2sh, xpub_magic_segwit_native); zero
// values take the network's defaults.
type Magics struct {
	P2PKH, P2SHP2WPKH, P2WPKH uint32
}

// NewXpubParser returns the account parser of a network; slip44 is the
// coin type shown in derivation paths.
func NewXpubParser(params *chaincfg.Params, m Magics, slip44 uint32) *XpubParser {
	def := binary.BigEndian.Uint32(params.HDPublicKeyID[:])
	if m.P2PKH == 0 {
		m.P2PKH = def
	}
	mainnet := def == 0x0488b21e
	if m.P2SHP2WPKH == 0 {
		m.P2SHP2WPKH = map[bool]uint32{true: 0x049d7cb2, false: 0x044a5262}[mainnet]
	}
	if m.P2WPKH == 0 {
		m.P2WPKH = map[bool]uint32{true: 0x04b24746, false: 0x045f1cf6}[mainnet]
	}
	return &XpubParser{params: params, slip44: slip44, versions: map[uint32]bchain.XpubScriptType{
		def: bchain.XpubP2PKH, m.P2PKH: bchain.XpubP2PKH,
		m.P2SHP2WPKH: bchain.XpubP2SHP2WPKH, m.P2WPKH: bchain.XpubP2WPKH,
	}}
}

// maxXpubLen bounds the input before any decoding: a descriptor with a key
// origin of a few steps and a checksum is about 170 characters.
const maxXpubLen = 512

// extKeyLen is the length of a base58-decoded extended key (BIP32's 78
// bytes plus a 4-byte checksum).
const extKeyLen = 82

// ParseXpub parses an extended public key or an output descriptor.
func (p *XpubParser) ParseXpub(s string) (*bchain.XpubDescriptor, error) {
	if strings.ContainsRune(s, '(') {
		if len(s) > maxXpubLen {
			return nil, invalidXpub("descriptor longer than %d characters", maxXpubLen)
		}
		return p.parseDescriptor(s)
	}
	if !looksLikeExtKey(s) {
		return nil, bchain.ErrNotXpub
	}
	key, st, err := p.parseKey(s)
	if err != nil {
		return nil, err
	}
	purpose := map[bchain.XpubScriptType]string{bchain.XpubP2PKH: "44", bchain.XpubP2SHP2WPKH: "49", bchain.XpubP2WPKH: "84"}[st]
	return &bchain.XpubDescriptor{Descriptor: s, Xpub: s, ScriptType: st, BasePath: p.basePath(key, purpose),
		Changes: []uint32{0, 1}, Key: &accountKey{ext: key}}, nil
}

// looksLikeExtKey tells an extended key (valid or damaged) from an address:
// it decodes to 82 bytes, or it has an extended key's prefix and length.
func looksLikeExtKey(s string) bool {
	if len(s) < 100 || len(s) > 120 {
		return false
	}
	if len(base58.Decode(s)) == extKeyLen {
		return true
	}
	return len(s) > 4 && (s[1:4] == "pub" || s[1:4] == "prv")
}

func (p *XpubParser) parseDescriptor(s string) (*bchain.XpubDescriptor, error) {
	d, err := parseDescriptor(s)
	if err != nil {
		return nil, err
	}
	key, _, err := p.parseKey(d.key)
	if err != nil {
		return nil, err
	}
	base := d.origin
	if base == "" {
		base = p.basePath(key, d.purpose)
	}
	return &bchain.XpubDescriptor{Descriptor: s, Xpub: d.key, ScriptType: d.scriptType, BasePath: base,
		Changes: d.changes, Key: &accountKey{ext: key}}, nil
}

// parseKey decodes an extended key, refusing private keys and keys of other
// networks, and returns the script type its version stands for.
func (p *XpubParser) parseKey(s string) (*hdkeychain.ExtendedKey, bchain.XpubScriptType, error) {
	raw := base58.Decode(s)
	if len(raw) == extKeyLen && raw[45] == 0 {
		return nil, 0, invalidXpub("this is an extended private key; never send a private key (xprv, tprv, …) to a server: use the account's extended public key")
	}
	s2, ok := p.withSHA256Checksum(s, raw)
	if !ok {
		return nil, 0, invalidXpub("extended key %s has a bad checksum (mistyped?)", abbrev(s))
	}
	key, err := hdkeychain.NewKeyFromString(s2)
	switch {
	case errors.Is(err, hdkeychain.ErrBadChecksum):
		return nil, 0, invalidXpub("extended key %s has a bad checksum (mistyped?)", abbrev(s))
	case errors.Is(err, hdkeychain.ErrInvalidKeyLen):
		return nil, 0, invalidXpub("%s is not an extended public key (not base58 or wrong length)", abbrev(s))
	case err != nil:
		return nil, 0, invalidXpub("extended key %s does not decode: %v", abbrev(s), err)
	case key.IsPrivate():
		return nil, 0, invalidXpub("this is an extended private key; never send a private key to a server: use the account's extended public key")
	}
	version := binary.BigEndian.Uint32(key.Version())
	st, ok := p.versions[version]
	if !ok {
		return nil, 0, invalidXpub("extended key %s (%s) is not for %s: this server accepts %s", abbrev(s), versionName(version), p.params.Name, p.acceptedNames())
	}
	return key, st, nil
}

// withSHA256Checksum rewrites a key carrying the coin's own checksum to
// the double SHA-256 checksum hdkeychain verifies; ok is false for an
// 82-byte key whose coin checksum does not match. Without a coin checksum
// the input is returned as it is.
func (p *XpubParser) withSHA256Checksum(s string, raw []byte) (string, bool) {
	if p.checksum == nil || len(raw) != extKeyLen {
		return s, true
	}
	body := raw[:extKeyLen-4]
	if sum := p.checksum(body); !slices.Equal(sum[:], raw[extKeyLen-4:]) {
		return "", false
	}
	return base58.Encode(append(slices.Clip(body), chainhash.DoubleHashB(body)[:4]...)), true
}

func versionName(v uint32) string {
	if n, ok := knownVersions[v]; ok {
		return n
	}
	return fmt.Sprintf("version %#08x", v)
}

// acceptedNames lists the accepted key versions, e.g. "tpub, upub, vpub".
func (p *XpubParser) acceptedNames() string {
	var names []string
	for v := range p.versions {
		names = append(names, versionName(v))
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}

func abbrev(s string) string {
	if len(s) > 16 {
		return s[:12] + "…"
	}
	return s
}

// basePath is Blockbook's path of an account key without a key origin:
// m/purpose'/slip44'/account' for a key at depth 3, unknown/child otherwise.
func (p *XpubParser) basePath(key *hdkeychain.ExtendedKey, purpose string) string {
	cn := key.ChildIndex()
	child := ""
	if cn >= hdkeychain.HardenedKeyStart {
		cn -= hdkeychain.HardenedKeyStart
		child = "'"
	}
	child = strconv.FormatUint(uint64(cn), 10) + child
	if key.Depth() != 3 {
		return "unknown/" + child
	}
	return "m/" + purpose + "'/" + strconv.FormatUint(uint64(p.slip44), 10) + "'/" + child
}

// DeriveAddrDescs derives the output scripts of indexes [from, to) of one
// chain of the account.
func (p *XpubParser) DeriveAddrDescs(d *bchain.XpubDescriptor, change, from, to uint32) ([]bchain.AddrDesc, error) {
	key, ok := d.Key.(*accountKey)
	if !ok {
		return nil, fmt.Errorf("xpub descriptor %q was not parsed by this parser", d.Descriptor)
	}
	if to <= from {
		return nil, nil
	}
	c, err := key.chain(change)
	if err != nil {
		return nil, err
	}
	return p.deriveRange(c, d.ScriptType, change, from, to)
}

// scriptOf returns the output script of a derived key for a script type.
func (p *XpubParser) scriptOf(pub *btcec.PublicKey, st bchain.XpubScriptType) (bchain.AddrDesc, error) {
	hash := address.Hash160(pub.SerializeCompressed())
	var a address.Address
	var err error
	switch st {
	case bchain.XpubP2PKH:
		a, err = address.NewAddressPubKeyHash(hash, p.params)
	case bchain.XpubP2WPKH:
		a, err = address.NewAddressWitnessPubKeyHash(hash, p.params)
	case bchain.XpubP2SHP2WPKH:
		var w *address.AddressWitnessPubKeyHash
		if w, err = address.NewAddressWitnessPubKeyHash(hash, p.params); err == nil {
			var redeem []byte
			if redeem, err = txscript.PayToAddrScript(w); err == nil {
				a, err = address.NewAddressScriptHash(redeem, p.params)
			}
		}
	case bchain.XpubP2TR:
		out := txscript.ComputeTaprootKeyNoScript(pub)
		a, err = address.NewAddressTaproot(schnorr.SerializePubKey(out), p.params)
	default:
		return nil, fmt.Errorf("unknown xpub script type %d", st)
	}
	if err != nil {
		return nil, err
	}
	return txscript.PayToAddrScript(a)
}
