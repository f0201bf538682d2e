// Package btc is the Bitcoin-type coin plugin: raw blocks decoded in Go with
// btcd's wire package, output scripts classified with txscript, and a
// JSON-RPC client that speaks both Bitcoin Core's and btcd's dialects.
package btc

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// Parser decodes raw Bitcoin-type data for one network.
type Parser struct {
	params *chaincfg.Params
}

var _ bchain.UtxoParser = (*Parser)(nil)

// NewParser returns a parser for the given network parameters.
func NewParser(params *chaincfg.Params) *Parser { return &Parser{params: params} }

// Params returns the network parameters the parser validates addresses against.
func (p *Parser) Params() *chaincfg.Params { return p.params }

// displayHash converts btcd's internal byte order to display order.
func displayHash(h chainhash.Hash) bchain.Hash {
	var out bchain.Hash
	for i := 0; i < 32; i++ {
		out[i] = h[31-i]
	}
	return out
}

// internalHash converts a display-order hash to btcd's internal order.
func internalHash(h bchain.Hash) chainhash.Hash {
	var out chainhash.Hash
	for i := 0; i < 32; i++ {
		out[i] = h[31-i]
	}
	return out
}

// ParseBlock decodes a serialized block. Each tx's Raw aliases raw.
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) {
	var mb wire.MsgBlock
	locs, err := mb.DeserializeTxLoc(bytes.NewBuffer(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: block: %v", bchain.ErrInvalidData, err)
	}
	if len(locs) == 0 {
		return nil, fmt.Errorf("%w: block has no transactions", bchain.ErrInvalidData)
	}
	last := locs[len(locs)-1]
	if end := last.TxStart + last.TxLen; end != len(raw) {
		return nil, fmt.Errorf("%w: block has %d trailing bytes", bchain.ErrInvalidData, len(raw)-end)
	}
	h := &mb.Header
	blk := &bchain.Block{
		BlockHeader: bchain.BlockHeader{
			Hash: displayHash(h.BlockHash()),
			Prev: displayHash(h.PrevBlock),
			Time: h.Timestamp.Unix(),
			Size: len(raw),
		},
		Version:    h.Version,
		MerkleRoot: displayHash(h.MerkleRoot),
		Nonce:      h.Nonce,
		Bits:       h.Bits,
		// The header is the first 80 bytes; capped like each tx's Raw.
		Header: raw[:wire.MaxBlockHeaderPayload:wire.MaxBlockHeaderPayload],
		Txs:    make([]bchain.Tx, len(mb.Transactions)),
	}
	for i, mtx := range mb.Transactions {
		loc := locs[i]
		end := loc.TxStart + loc.TxLen
		// Cap the capacity so appending to one tx's Raw cannot overwrite the next.
		convertTx(mtx, raw[loc.TxStart:end:end], &blk.Txs[i])
	}
	return blk, nil
}

// ParseTx decodes one serialized transaction; trailing bytes are an error.
func (p *Parser) ParseTx(raw []byte) (*bchain.Tx, error) {
	var mtx wire.MsgTx
	r := bytes.NewReader(raw)
	if err := mtx.Deserialize(r); err != nil {
		return nil, fmt.Errorf("%w: tx: %v", bchain.ErrInvalidData, err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: tx has %d trailing bytes", bchain.ErrInvalidData, r.Len())
	}
	tx := new(bchain.Tx)
	convertTx(&mtx, raw, tx)
	return tx, nil
}

func convertTx(mtx *wire.MsgTx, raw []byte, tx *bchain.Tx) {
	stripped := mtx.SerializeSizeStripped()
	weight := stripped*(4-1) + len(raw)
	*tx = bchain.Tx{
		Txid:     displayHash(mtx.TxHash()),
		Version:  mtx.Version,
		LockTime: mtx.LockTime,
		Vin:      make([]bchain.Vin, len(mtx.TxIn)),
		Vout:     make([]bchain.Vout, len(mtx.TxOut)),
		Size:     len(raw),
		VSize:    (weight + 3) / 4,
		Raw:      raw,
	}
	coinbase := len(mtx.TxIn) == 1 && mtx.TxIn[0].PreviousOutPoint.Index == wire.MaxPrevOutIndex &&
		mtx.TxIn[0].PreviousOutPoint.Hash == (chainhash.Hash{})
	for i, in := range mtx.TxIn {
		tx.Vin[i] = bchain.Vin{
			Coinbase:  coinbase,
			ScriptSig: in.SignatureScript,
			Witness:   in.Witness,
			Sequence:  in.Sequence,
		}
		if !coinbase {
			tx.Vin[i].PrevTxid = displayHash(in.PreviousOutPoint.Hash)
			tx.Vin[i].PrevVout = in.PreviousOutPoint.Index
		}
	}
	for i, out := range mtx.TxOut {
		// Values are consensus-bounded to 21e14 sat; a negative value can
		// only come from an invalid block, and is clamped to keep uint64 sane.
		v := out.Value
		if v < 0 {
			v = 0
		}
		tx.Vout[i] = bchain.Vout{Value: uint64(v), Script: out.PkScript}
	}
}

// pubKeyHashOfP2PK returns the HASH160 of the key a valid P2PK script pays
// to, or nil. The length test only spares txscript the common non-P2PK case.
func (p *Parser) pubKeyHashOfP2PK(script []byte) []byte {
	n := len(script)
	if (n != 35 && n != 67) || script[n-1] != txscript.OP_CHECKSIG {
		return nil
	}
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(script, p.params)
	if err != nil || class != txscript.PubKeyTy || len(addrs) != 1 {
		return nil
	}
	// Hash the key bytes as they appear: btcd re-serializes hybrid (0x06/0x07)
	// keys as uncompressed, which would name a different address.
	return address.Hash160(script[1 : n-1])
}

// OutputAddrDesc returns the descriptor an output is indexed under: the
// script itself, except P2PK (filed under the key's P2PKH script so that the
// address page shows the key's coins) and data carriers (never indexed).
func (p *Parser) OutputAddrDesc(script []byte) bchain.AddrDesc {
	if len(script) == 0 || script[0] == txscript.OP_RETURN {
		return nil
	}
	if h := p.pubKeyHashOfP2PK(script); h != nil {
		return p2pkhScript(h)
	}
	return bchain.AddrDesc(script)
}

func p2pkhScript(hash160 []byte) bchain.AddrDesc {
	s := make([]byte, 0, 25)
	s = append(s, txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20)
	s = append(s, hash160...)
	return append(s, txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
}

// maxAddressLen bounds address parameters before decoding: the longest
// valid input is an uncompressed public key in hex (130 characters), and
// base58 decoding time grows with the square of the length.
const maxAddressLen = 130

// AddrDescFromAddress validates an address (or a hex public key, which maps
// to its P2PKH descriptor like P2PK outputs do) for this network.
func (p *Parser) AddrDescFromAddress(addr string) (bchain.AddrDesc, error) {
	if addr == "" {
		return nil, fmt.Errorf("%w: empty", bchain.ErrInvalidAddress)
	}
	if len(addr) > maxAddressLen {
		return nil, fmt.Errorf("%w: longer than %d characters", bchain.ErrInvalidAddress, maxAddressLen)
	}
	a, err := address.DecodeAddress(addr, p.params)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", bchain.ErrInvalidAddress, err)
	}
	if !a.IsForNet(p.params) {
		return nil, fmt.Errorf("%w: not a %s address", bchain.ErrInvalidAddress, p.params.Name)
	}
	if _, ok := a.(*address.AddressPubKey); ok {
		key, err := hex.DecodeString(addr)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", bchain.ErrInvalidAddress, err)
		}
		return p2pkhScript(address.Hash160(key)), nil
	}
	// btcd picks the segwit address type from the program length alone, so a
	// witness v1 address with a 20-byte program would decode as P2WPKH: accept
	// only addresses that re-encode to the input (bech32 case-insensitively).
	if enc := a.EncodeAddress(); enc != addr && enc != strings.ToLower(addr) {
		return nil, fmt.Errorf("%w: unsupported address form", bchain.ErrInvalidAddress)
	}
	script, err := txscript.PayToAddrScript(a)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", bchain.ErrInvalidAddress, err)
	}
	return script, nil
}

// AddressesFromAddrDesc renders a descriptor as addresses. Scripts without an
// address form (bare multisig, non-standard, unknown witness versions) give
// none; they are still indexed under their script.
func (p *Parser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(desc, p.params)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", bchain.ErrInvalidData, err)
	}
	switch class {
	case txscript.PubKeyHashTy, txscript.ScriptHashTy, txscript.WitnessV0PubKeyHashTy,
		txscript.WitnessV0ScriptHashTy, txscript.WitnessV1TaprootTy, txscript.PayToAnchorTy:
		if len(addrs) == 1 {
			return []string{addrs[0].EncodeAddress()}, true, nil
		}
	case txscript.PubKeyTy:
		if h := p.pubKeyHashOfP2PK(desc); h != nil {
			return p.AddressesFromAddrDesc(p2pkhScript(h))
		}
	}
	return []string{}, false, nil
}

// OutputAddresses renders an output script for display.
func (p *Parser) OutputAddresses(script []byte) ([]string, bool) {
	if len(script) > 0 && script[0] == txscript.OP_RETURN {
		return []string{opReturnText(script)}, false
	}
	desc := p.OutputAddrDesc(script)
	if desc == nil {
		return []string{}, false
	}
	addrs, searchable, err := p.AddressesFromAddrDesc(desc)
	if err != nil {
		return []string{}, false
	}
	return addrs, searchable
}

// opReturnText renders a data-carrier script the way Blockbook shows it:
// "OP_RETURN (text)" when the single pushed payload is valid UTF-8, else
// "OP_RETURN <hex>". Scripts that are not a single push show the hex of
// everything after OP_RETURN.
func opReturnText(script []byte) string {
	if len(script) == 1 {
		return "OP_RETURN"
	}
	rest := script[1:]
	tok := txscript.MakeScriptTokenizer(0, rest)
	if tok.Next() && tok.Done() && tok.Err() == nil && tok.Opcode() <= txscript.OP_PUSHDATA4 {
		data := tok.Data()
		if utf8.Valid(data) {
			return "OP_RETURN (" + string(data) + ")"
		}
		return "OP_RETURN " + hex.EncodeToString(data)
	}
	return "OP_RETURN " + hex.EncodeToString(rest)
}
