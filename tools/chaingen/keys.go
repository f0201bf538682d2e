package chaingen

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
)

// Key namespaces keep multisig co-signer keys apart from single-key kinds:
// nodes index bare multisig keys as P2PKH addresses, which would otherwise
// merge unrelated outputs into single-key addresses.
const (
	nsSingle byte = 's'
	nsMulti  byte = 'm'
	nsSecret byte = 'h'
)

// keyPair is an immutable derived key.
type keyPair struct {
	id   keyID
	priv *btcec.PrivateKey
	pub  *btcec.PublicKey
	pubC []byte // compressed serialisation
	pubU []byte // uncompressed serialisation
}

// scriptRef identifies a wallet script: kind plus derivation index.
type scriptRef struct {
	kind  ScriptKind
	index uint64
}

// scriptInfo is everything needed to recognise and spend a wallet output.
// It is immutable once created, so forks can share it.
type scriptInfo struct {
	ref           scriptRef
	pkScript      []byte
	address       string            // as an explorer shows it; "" if none
	keys          []*keyPair        // signing keys, in script order
	redeemScript  []byte            // P2SH-P2WPKH
	witnessScript []byte            // P2WSH
	preimage      []byte            // HashLock
	tapKey        *btcec.PrivateKey // P2TR: BIP86-tweaked signing key
}

// deriveKey returns sha256("chaingen" || len(seed) || seed || ns || index) as
// a private key: fixed, independent of call order and cheap to recreate.
func deriveKey(seed string, ns byte, index uint64) *keyPair {
	b := binary.BigEndian.AppendUint32([]byte("chaingen"), uint32(len(seed)))
	b = append(append(b, seed...), ns)
	sum := sha256.Sum256(binary.BigEndian.AppendUint64(b, index))
	priv, pub := btcec.PrivKeyFromBytes(sum[:])
	return &keyPair{id: keyID{ns, index}, priv: priv, pub: pub, pubC: pub.SerializeCompressed(), pubU: pub.SerializeUncompressed()}
}

// derivePreimage returns the 32-byte secret of the hash lock at index.
func derivePreimage(seed string, index uint64) []byte {
	k := deriveKey(seed, nsSecret, index)
	return k.priv.Serialize()
}

// newScript derives the output script for ref. Addresses come from the
// address objects used to build the script, independent of the ledger's
// script parsing, so the two can cross-check each other.
func newScript(params *chaincfg.Params, seed string, ref scriptRef, key func(ns byte, index uint64) *keyPair) (*scriptInfo, error) {
	si := &scriptInfo{ref: ref}
	var addr address.Address
	var err error
	switch ref.kind {
	case P2PKH, P2WPKH, P2SHP2WPKH, P2TR, P2PK, P2PKUncompressed:
		k := key(nsSingle, ref.index)
		si.keys = []*keyPair{k}
		addr, err = singleKeyAddress(params, ref.kind, k, si)
	case P2WSHMultisig, BareMultisig:
		n, m := 3, 2
		if ref.kind == BareMultisig {
			n, m = 2, 1
		}
		pubs := make([]*address.AddressPubKey, n)
		for j := range n {
			// Each multisig index owns four key slots, so the bare 1-of-2
			// and the 2-of-3 of one index share their first two keys.
			k := key(nsMulti, ref.index*4+uint64(j))
			if j < m {
				si.keys = append(si.keys, k)
			}
			if pubs[j], err = address.NewAddressPubKey(k.pubC, params); err != nil {
				return nil, err
			}
		}
		var ms []byte
		if ms, err = txscript.MultiSigScript(pubs, m); err != nil {
			return nil, err
		}
		if ref.kind == BareMultisig {
			si.pkScript = ms
			return si, nil
		}
		si.witnessScript = ms
		h := sha256.Sum256(ms)
		addr, err = address.NewAddressWitnessScriptHash(h[:], params)
	case HashLock:
		si.preimage = derivePreimage(seed, ref.index)
		h := sha256.Sum256(si.preimage)
		si.pkScript, err = txscript.NewScriptBuilder().AddOp(txscript.OP_SHA256).
			AddData(h[:]).AddOp(txscript.OP_EQUAL).Script()
		return si, err
	default:
		return nil, fmt.Errorf("chaingen: unknown script kind %v", ref.kind)
	}
	if err != nil {
		return nil, err
	}
	if si.pkScript, err = txscript.PayToAddrScript(addr); err != nil {
		return nil, err
	}
	if si.address == "" {
		si.address = addr.EncodeAddress()
	}
	return si, nil
}

func singleKeyAddress(params *chaincfg.Params, kind ScriptKind, k *keyPair, si *scriptInfo) (address.Address, error) {
	hash := address.Hash160(k.pubC)
	switch kind {
	case P2PKH:
		return address.NewAddressPubKeyHash(hash, params)
	case P2WPKH:
		return address.NewAddressWitnessPubKeyHash(hash, params)
	case P2SHP2WPKH:
		inner, err := address.NewAddressWitnessPubKeyHash(hash, params)
		if err != nil {
			return nil, err
		}
		if si.redeemScript, err = txscript.PayToAddrScript(inner); err != nil {
			return nil, err
		}
		return address.NewAddressScriptHash(si.redeemScript, params)
	case P2TR:
		// Tweak once here: btcd's taproot signing helpers re-derive the
		// tweak (and verify) on every signature, which dominates big chains.
		si.tapKey = txscript.TweakTaprootPrivKey(*k.priv, nil)
		out := txscript.ComputeTaprootKeyNoScript(k.pub)
		return address.NewAddressTaproot(schnorr.SerializePubKey(out), params)
	case P2PK, P2PKUncompressed:
		ser := k.pubC
		if kind == P2PKUncompressed {
			ser = k.pubU
		}
		a, err := address.NewAddressPubKey(ser, params)
		if err != nil {
			return nil, err
		}
		// Explorers credit P2PK outputs to the key's P2PKH address.
		si.address = a.AddressPubKeyHash().EncodeAddress()
		return a, nil
	}
	return nil, fmt.Errorf("chaingen: %v is not a single-key kind", kind)
}
