// Package zec serves Zcash (transparent part) on the Bitcoin-type plugin:
// its own tx formats (v1 to v5, with the shielded parts' value balance),
// Equihash block headers, two-byte t-address prefixes and the RPC
// differences of zcashd and zebrad.
package zec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Prefixes are a network's two-byte base58 version prefixes of
// transparent P2PKH and P2SH addresses.
type Prefixes struct {
	PubKeyHash [2]byte
	ScriptHash [2]byte
}

// Parser is Bitcoin's parser with Zcash's tx and block formats and
// t-addresses.
type Parser struct {
	*btc.Parser
	prefixes Prefixes
}

var _ bchain.UtxoParser = (*Parser)(nil)

// NewParser returns a parser for a network with the given address prefixes.
func NewParser(params *chaincfg.Params, prefixes Prefixes) *Parser {
	return &Parser{Parser: btc.NewParser(params), prefixes: prefixes}
}

// headerFixed is the Equihash header before its solution: version, prev,
// merkle root, block commitments, time, bits and a 32-byte nonce.
const headerFixed = 4 + 32 + 32 + 32 + 4 + 4 + 32

// maxSolution bounds the Equihash solution (1344 bytes on mainnet and
// testnet, 36 or 400 on regtest-like parameters).
const maxSolution = 1 << 16

// decodeHeader decodes a Zcash header; the block id is the double SHA-256
// of the whole header, solution included.
func decodeHeader(raw []byte, blk *bchain.Block) (int, error) {
	r := &reader{b: raw}
	fixed := r.bytes(headerFixed)
	n := r.compact(1)
	r.bytes(n)
	if r.err != nil {
		return 0, fmt.Errorf("zcash header: %w", r.err)
	}
	if n > maxSolution {
		return 0, fmt.Errorf("zcash header: Equihash solution of %d bytes", n)
	}
	header := raw[:r.off:r.off]
	var h chainhash.Hash
	copy(h[:], fixed[4:36])
	blk.Prev = btc.DisplayHash(h)
	copy(h[:], fixed[36:68])
	blk.MerkleRoot = btc.DisplayHash(h)
	blk.Version = int32(binary.LittleEndian.Uint32(fixed[0:4]))
	blk.Time = int64(binary.LittleEndian.Uint32(fixed[100:104]))
	blk.Bits = binary.LittleEndian.Uint32(fixed[104:108])
	// The nonce is 32 bytes; the shared field holds its first four.
	blk.Nonce = binary.LittleEndian.Uint32(fixed[108:112])
	blk.Header = header
	blk.Hash = btc.DisplayHash(doubleSHA(header))
	return r.off, nil
}

func doubleSHA(b []byte) chainhash.Hash {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}

// ParseBlock decodes a serialized Zcash block. Each tx's Raw aliases raw.
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) {
	return btc.ParseBlockWith(raw, btc.BlockCodec{Header: decodeHeader, Tx: decodeBchainTx})
}

// ParseTx decodes one serialized tx; trailing bytes are an error.
func (p *Parser) ParseTx(raw []byte) (*bchain.Tx, error) {
	return btc.ParseTxWith(raw, decodeBchainTx)
}

// Specific is a Zcash tx's coinSpecific object: its format and what its
// shielded parts move, in zatoshi as zcashd's *Zat fields.
type Specific struct {
	Version           int32  `json:"version"`
	Overwintered      bool   `json:"overwintered"`
	VersionGroupID    string `json:"versionGroupId,omitempty"`
	ConsensusBranchID string `json:"consensusBranchId,omitempty"`
	ExpiryHeight      uint32 `json:"expiryHeight,omitempty"`
	// ValueBalanceZat is the net value entering the transparent part from
	// all shielded pools (the tx's ValueBalance).
	ValueBalanceZat int64 `json:"valueBalanceZat"`
	// SaplingValueBalanceZat is zcashd's valueBalanceZat, Orchard's is
	// its orchard.valueBalanceZat.
	SaplingValueBalanceZat int64 `json:"saplingValueBalanceZat"`
	OrchardValueBalanceZat int64 `json:"orchardValueBalanceZat"`
	SaplingSpends          int   `json:"saplingSpends"`
	SaplingOutputs         int   `json:"saplingOutputs"`
	OrchardActions         int   `json:"orchardActions"`
	// Ironwood is the v6 (NU6.3) pool.
	IronwoodValueBalanceZat int64 `json:"ironwoodValueBalanceZat,omitempty"`
	IronwoodActions         int   `json:"ironwoodActions,omitempty"`
	JoinSplits              int   `json:"joinSplits"`
	JoinSplitVpubOldZat     int64 `json:"joinSplitVpubOldZat"`
	JoinSplitVpubNewZat     int64 `json:"joinSplitVpubNewZat"`
}

// decodeBchainTx decodes one tx at the start of raw into tx.
func decodeBchainTx(raw []byte, tx *bchain.Tx) (int, error) {
	t, err := decodeTx(raw)
	if err != nil {
		return 0, err
	}
	vb, ok := t.valueBalance()
	if !ok {
		return 0, fmt.Errorf("shielded value balance overflows")
	}
	id := t.txid(raw)
	*tx = bchain.Tx{
		Txid: btc.DisplayHash(id), Version: t.version, LockTime: t.lockTime,
		Vin: make([]bchain.Vin, len(t.vin)), Vout: make([]bchain.Vout, len(t.vout)),
		Size: t.size, VSize: t.size, Raw: raw[:t.size:t.size], ValueBalance: vb,
	}
	coinbase := len(t.vin) == 1 && t.vin[0].prevIndex == 0xffffffff && bytes.Equal(t.vin[0].prevHash, make([]byte, 32))
	for i, in := range t.vin {
		tx.Vin[i] = bchain.Vin{Coinbase: coinbase, ScriptSig: in.script, Sequence: in.sequence}
		if !coinbase {
			var h chainhash.Hash
			copy(h[:], in.prevHash)
			tx.Vin[i].PrevTxid, tx.Vin[i].PrevVout = btc.DisplayHash(h), in.prevIndex
		}
	}
	for i, o := range t.vout {
		v := o.value
		if v < 0 { // consensus-invalid; clamped like Bitcoin's parser does
			v = 0
		}
		tx.Vout[i] = bchain.Vout{Value: uint64(v), Script: o.script}
	}
	if t.version >= 2 {
		tx.Specific = t.specific(vb)
	}
	return t.size, nil
}

func (t *ztx) specific(vb int64) *Specific {
	s := &Specific{
		Version: t.version, Overwintered: t.overwintered, ExpiryHeight: t.expiry, ValueBalanceZat: vb,
		SaplingValueBalanceZat: t.saplingBalance, OrchardValueBalanceZat: t.orchard.balance,
		SaplingSpends: t.saplingSpends, SaplingOutputs: t.saplingOutputs, OrchardActions: len(t.orchard.actions),
		IronwoodValueBalanceZat: t.ironwood.balance, IronwoodActions: len(t.ironwood.actions),
		JoinSplits: len(t.joinSplits),
	}
	if t.overwintered {
		s.VersionGroupID = fmt.Sprintf("%08x", t.groupID)
	}
	if t.version >= 5 {
		s.ConsensusBranchID = fmt.Sprintf("%08x", t.branchID)
	}
	for _, js := range t.joinSplits {
		s.JoinSplitVpubOldZat += js.vpubOld
		s.JoinSplitVpubNewZat += js.vpubNew
	}
	return s
}

// maxAddressLen bounds address parameters before base58 decoding, whose
// time grows with the square of the length (t-addresses have 35 characters).
const maxAddressLen = 64

// AddrDescFromAddress validates a transparent address of this network.
func (p *Parser) AddrDescFromAddress(addr string) (bchain.AddrDesc, error) {
	if addr == "" || len(addr) > maxAddressLen {
		return nil, fmt.Errorf("%w: not a transparent Zcash address", bchain.ErrInvalidAddress)
	}
	b := base58.Decode(addr)
	if len(b) != 2+20+4 {
		return nil, fmt.Errorf("%w: not a transparent Zcash address", bchain.ErrInvalidAddress)
	}
	sum := doubleSHA(b[:22])
	if !bytes.Equal(sum[:4], b[22:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", bchain.ErrInvalidAddress)
	}
	hash := b[2:22]
	switch [2]byte(b[:2]) {
	case p.prefixes.PubKeyHash:
		s := []byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}
		s = append(s, hash...)
		return append(s, txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG), nil
	case p.prefixes.ScriptHash:
		s := []byte{txscript.OP_HASH160, txscript.OP_DATA_20}
		s = append(s, hash...)
		return append(s, txscript.OP_EQUAL), nil
	}
	return nil, fmt.Errorf("%w: not an address of %s", bchain.ErrInvalidAddress, p.Params().Name)
}

// AddressesFromAddrDesc renders P2PKH and P2SH descriptors as t-addresses;
// other scripts have no address form.
func (p *Parser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	switch {
	case len(desc) == 25 && desc[0] == txscript.OP_DUP && desc[1] == txscript.OP_HASH160 && desc[2] == txscript.OP_DATA_20 &&
		desc[23] == txscript.OP_EQUALVERIFY && desc[24] == txscript.OP_CHECKSIG:
		return []string{encodeAddress(p.prefixes.PubKeyHash, desc[3:23])}, true, nil
	case len(desc) == 23 && desc[0] == txscript.OP_HASH160 && desc[1] == txscript.OP_DATA_20 && desc[22] == txscript.OP_EQUAL:
		return []string{encodeAddress(p.prefixes.ScriptHash, desc[2:22])}, true, nil
	}
	return []string{}, false, nil
}

func encodeAddress(prefix [2]byte, hash []byte) string {
	b := make([]byte, 0, 26)
	b = append(b, prefix[:]...)
	b = append(b, hash...)
	sum := doubleSHA(b)
	return base58.Encode(append(b, sum[:4]...))
}

// OutputAddresses renders an output script for display. btc.Parser's
// version would call its own (Bitcoin) address rendering.
func (p *Parser) OutputAddresses(script []byte) ([]string, bool) {
	if len(script) > 0 && script[0] == txscript.OP_RETURN {
		return p.Parser.OutputAddresses(script)
	}
	desc := p.OutputAddrDesc(script)
	if desc == nil {
		return []string{}, false
	}
	addrs, ok, _ := p.AddressesFromAddrDesc(desc)
	return addrs, ok
}

var _ bchain.ShieldedPools = (*Parser)(nil)

// HasShieldedPools tells the API that inputs minus outputs is not a Zcash
// tx's fee where the tx's ValueBalance is not at hand (txslight).
func (p *Parser) HasShieldedPools() bool { return true }
