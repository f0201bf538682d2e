package chaingen

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
)

// HD accounts: BIP32 keys from a fixed seed along the BIP44 (P2PKH), BIP49
// (P2SH-P2WPKH), BIP84 (P2WPKH) and BIP86 (P2TR) account paths
// m/purpose'/coin'/account'/change/index, derived with btcutil's hdkeychain
// from the private keys (the indexer derives from the public key, so the
// two cross-check each other). Their outputs are not part of the
// generator's wallet: the HD scenario (hdscenario.go) spends them itself.

// Purposes of the supported account types.
const (
	BIP44 uint32 = 44
	BIP49 uint32 = 49
	BIP84 uint32 = 84
	BIP86 uint32 = 86
)

// SLIP-132 versions of account public keys on test networks: BIP44 and
// BIP86 keys are plain tpubs (a descriptor gives BIP86's script type).
var testnetXpubVersions = map[uint32][4]byte{
	BIP44: {0x04, 0x35, 0x87, 0xcf}, // tpub
	BIP49: {0x04, 0x4a, 0x52, 0x62}, // upub
	BIP84: {0x04, 0x5f, 0x1c, 0xf6}, // vpub
	BIP86: {0x04, 0x35, 0x87, 0xcf}, // tpub
}

// HDAccount is one BIP32 account.
type HDAccount struct {
	Purpose, Index uint32
	params         *chaincfg.Params
	kind           ScriptKind
	key            *hdkeychain.ExtendedKey // private, m/purpose'/coin'/account'
	fingerprint    uint32                  // of the master key
	scripts        map[[2]uint32]*scriptInfo
	byPk           map[string][2]uint32
}

// NewHDAccount derives account index of purpose from the BIP32 master key
// of seed (16 to 64 bytes) on a test network's params.
func NewHDAccount(params *chaincfg.Params, seed []byte, purpose, index uint32) (*HDAccount, error) {
	kinds := map[uint32]ScriptKind{BIP44: P2PKH, BIP49: P2SHP2WPKH, BIP84: P2WPKH, BIP86: P2TR}
	kind, ok := kinds[purpose]
	if !ok {
		return nil, fmt.Errorf("chaingen: purpose %d is not one of 44, 49, 84, 86", purpose)
	}
	master, err := hdkeychain.NewMaster(seed, params)
	if err != nil {
		return nil, err
	}
	mpub, err := master.ECPubKey()
	if err != nil {
		return nil, err
	}
	k := master
	for _, step := range []uint32{purpose, params.HDCoinType, index} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + step); err != nil {
			return nil, err
		}
	}
	return &HDAccount{Purpose: purpose, Index: index, params: params, kind: kind, key: k,
		fingerprint: binary.BigEndian.Uint32(address.Hash160(mpub.SerializeCompressed())[:4]),
		scripts:     map[[2]uint32]*scriptInfo{}, byPk: map[string][2]uint32{}}, nil
}

// HDSeed returns a fixed 32-byte seed for a name.
func HDSeed(name string) []byte {
	h := sha256.Sum256([]byte("chaingen-hd|" + name))
	return h[:]
}

// Kind is the account's script kind.
func (a *HDAccount) Kind() ScriptKind { return a.kind }

// Xpub returns the account's extended public key with its SLIP-132
// version (tpub, upub or vpub on test networks).
func (a *HDAccount) Xpub() string {
	pub, err := a.key.Neuter()
	if err != nil {
		panic(err) // a private key always neuters
	}
	v := testnetXpubVersions[a.Purpose]
	if a.params.HDPublicKeyID == [4]byte{0x04, 0x88, 0xb2, 0x1e} {
		v = a.params.HDPublicKeyID // mainnet: plain xpubs only
	}
	pub, err = pub.CloneWithVersion(v[:])
	if err != nil {
		panic(err)
	}
	return pub.String()
}

// BasePath is the account's derivation path, e.g. m/84'/1'/0'.
func (a *HDAccount) BasePath() string {
	return fmt.Sprintf("m/%d'/%d'/%d'", a.Purpose, a.params.HDCoinType, a.Index)
}

// Path returns the derivation path of an address.
func (a *HDAccount) Path(change, index uint32) string {
	return a.BasePath() + "/" + strconv.FormatUint(uint64(change), 10) + "/" + strconv.FormatUint(uint64(index), 10)
}

// Descriptor returns the account as an output descriptor with key origin
// and BIP389 chains, and with its BIP380 checksum when checksum is set,
// e.g. wpkh([1a2b3c4d/84'/1'/0']tpub…/<0;1>/*)#abcdefgh. The key is a
// plain tpub, as descriptors carry it.
func (a *HDAccount) Descriptor(checksum bool) string {
	pub, _ := a.key.Neuter()
	pub, _ = pub.CloneWithVersion(a.params.HDPublicKeyID[:])
	key := fmt.Sprintf("[%08x/%d'/%d'/%d']%s/<0;1>/*", a.fingerprint, a.Purpose, a.params.HDCoinType, a.Index, pub.String())
	var d string
	switch a.kind {
	case P2PKH:
		d = "pkh(" + key + ")"
	case P2SHP2WPKH:
		d = "sh(wpkh(" + key + "))"
	case P2WPKH:
		d = "wpkh(" + key + ")"
	default:
		d = "tr(" + key + ")"
	}
	if checksum {
		d += "#" + descriptorChecksum(d)
	}
	return d
}

// script returns (deriving once) the wallet script of an address.
func (a *HDAccount) script(change, index uint32) (*scriptInfo, error) {
	id := [2]uint32{change, index}
	if si, ok := a.scripts[id]; ok {
		return si, nil
	}
	c, err := a.key.Derive(change)
	if err != nil {
		return nil, err
	}
	k, err := c.Derive(index)
	if err != nil {
		return nil, err
	}
	priv, err := k.ECPrivKey()
	if err != nil {
		return nil, err
	}
	pub := priv.PubKey()
	kp := &keyPair{id: keyID{'d', uint64(a.Purpose)<<48 | uint64(change)<<32 | uint64(index)}, priv: priv, pub: pub,
		pubC: pub.SerializeCompressed(), pubU: pub.SerializeUncompressed()}
	// The ref's index keeps HD scripts apart from the registry's.
	si := &scriptInfo{ref: scriptRef{a.kind, 1<<62 | kp.id.index}, keys: []*keyPair{kp}}
	addr, err := singleKeyAddress(a.params, a.kind, kp, si)
	if err != nil {
		return nil, err
	}
	if si.pkScript, err = txscript.PayToAddrScript(addr); err != nil {
		return nil, err
	}
	si.address = addr.EncodeAddress()
	a.scripts[id] = si
	a.byPk[string(si.pkScript)] = id
	return si, nil
}

// Address returns the address at change/index.
func (a *HDAccount) Address(change, index uint32) (string, error) {
	si, err := a.script(change, index)
	if err != nil {
		return "", err
	}
	return si.address, nil
}

// PkScript returns the output script at change/index.
func (a *HDAccount) PkScript(change, index uint32) ([]byte, error) {
	si, err := a.script(change, index)
	if err != nil {
		return nil, err
	}
	return si.pkScript, nil
}

// descriptorChecksum is BIP380's descriptor checksum, written from the
// BIP's reference code (the indexer has its own).
func descriptorChecksum(s string) string {
	const inputCharset = "0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#\"\\ "
	const checksumCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	generator := []uint64{0xf5dee51989, 0xa9fdca3312, 0x1bab10e32d, 0x3706b1677a, 0x644d626ffd}
	polymod := func(symbols []int) uint64 {
		chk := uint64(1)
		for _, v := range symbols {
			top := chk >> 35
			chk = (chk&0x7ffffffff)<<5 ^ uint64(v)
			for i := range 5 {
				if (top>>i)&1 == 1 {
					chk ^= generator[i]
				}
			}
		}
		return chk
	}
	var symbols, groups []int
	for _, c := range s {
		v := strings.IndexRune(inputCharset, c)
		symbols = append(symbols, v&31)
		groups = append(groups, v>>5)
		if len(groups) == 3 {
			symbols = append(symbols, groups[0]*9+groups[1]*3+groups[2])
			groups = groups[:0]
		}
	}
	switch len(groups) {
	case 1:
		symbols = append(symbols, groups[0])
	case 2:
		symbols = append(symbols, groups[0]*3+groups[1])
	}
	chk := polymod(append(symbols, 0, 0, 0, 0, 0, 0, 0, 0)) ^ 1
	out := make([]byte, 8)
	for i := range out {
		out[i] = checksumCharset[(chk>>(5*(7-i)))&31]
	}
	return string(out)
}
