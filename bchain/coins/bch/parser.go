// Package bch serves Bitcoin Cash (Bcash, Bcash Testnet) and eCash: Bitcoin's
// block and tx encoding without SegWit, CashAddr addresses (or legacy base58
// with address_format "legacy"), and CashTokens token prefixes on outputs.
package bch

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Parser is Bitcoin's parser with Bitcoin Cash's address forms and token
// prefixes. Every method that classifies scripts is overridden, as the
// embedded parser's methods call only its own.
type Parser struct {
	*btc.Parser
	params *chaincfg.Params
	prefix string // CashAddr prefix without the colon
	legacy bool   // show base58 addresses (address_format "legacy")
}

var _ bchain.UtxoParser = (*Parser)(nil)

// NewParser returns the parser of a network with CashAddr prefix; format is
// the address_format config key: "", "cashaddr" or "legacy".
func NewParser(params *chaincfg.Params, prefix, format string) (*Parser, error) {
	p := &Parser{Parser: btc.NewParser(params), params: params, prefix: prefix}
	switch format {
	case "", "cashaddr":
	case "legacy":
		p.legacy = true
	default:
		return nil, fmt.Errorf("%w: address_format %q (want cashaddr or legacy)", bchain.ErrConfig, format)
	}
	return p, nil
}

func newParserFromConfig(prefix string) func(*chaincfg.Params, *bchain.Config) (bchain.UtxoParser, error) {
	return func(params *chaincfg.Params, cfg *bchain.Config) (bchain.UtxoParser, error) {
		var extra struct {
			AddressFormat string `json:"address_format"`
		}
		if len(cfg.Raw) > 0 {
			if err := json.Unmarshal(cfg.Raw, &extra); err != nil {
				return nil, fmt.Errorf("%w: %v", bchain.ErrConfig, err)
			}
		}
		return NewParser(params, prefix, extra.AddressFormat)
	}
}

// ParseBlock decodes a serialized block; outputs carrying a token get it as
// their Specific.
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) {
	return btc.ParseBlockWith(raw, btc.BlockCodec{Tx: decodeTx})
}

// ParseTx decodes one serialized transaction; trailing bytes are an error.
func (p *Parser) ParseTx(raw []byte) (*bchain.Tx, error) {
	return btc.ParseTxWith(raw, decodeTx)
}

// decodeTx decodes a tx without SegWit's marker (Bitcoin Cash has none: a
// tx with no inputs is simply invalid, never a witness flag).
func decodeTx(raw []byte, tx *bchain.Tx) (int, error) {
	var mtx wire.MsgTx
	r := bytes.NewReader(raw)
	if err := mtx.DeserializeNoWitness(r); err != nil {
		return 0, err
	}
	n := len(raw) - r.Len()
	btc.TxFromWire(&mtx, raw[:n:n], tx)
	for i := range tx.Vout {
		if tok, _, ok, err := splitToken(tx.Vout[i].Script); ok && err == nil {
			tx.Vout[i].Specific = &OutputSpecific{TokenData: tok}
		}
	}
	return n, nil
}

// OutputAddrDesc indexes a token output under its locking bytecode (the
// script after the prefix), so the token's holder sees it on their address.
// A malformed prefix leaves the output non-standard, indexed as it is.
func (p *Parser) OutputAddrDesc(script []byte) bchain.AddrDesc {
	_, locking, ok, err := splitToken(script)
	switch {
	case ok && err != nil:
		return bchain.AddrDesc(script)
	case ok:
		if len(locking) == 0 {
			return nil
		}
		script = locking
	}
	return p.Parser.OutputAddrDesc(script)
}

// OutputAddresses renders an output script for display.
func (p *Parser) OutputAddresses(script []byte) ([]string, bool) {
	if _, locking, ok, err := splitToken(script); ok && err == nil {
		script = locking
	}
	if len(script) > 0 && script[0] == txscript.OP_RETURN {
		return p.Parser.OutputAddresses(script)
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

// AddressesFromAddrDesc renders P2PKH, P2SH and P2SH32 descriptors (and P2PK,
// as its key's P2PKH) in the configured address format; other scripts have
// no address.
func (p *Parser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	if _, locking, ok, err := splitToken(desc); ok && err == nil {
		desc = locking
	}
	if d := p.Parser.OutputAddrDesc(desc); d != nil {
		desc = d // P2PK is shown as its key's P2PKH
	}
	typ, hash := classify(desc)
	if hash == nil {
		return []string{}, false, nil
	}
	if p.legacy && len(hash) == 20 {
		var a address.Address
		var err error
		if typ == cashP2PKH {
			a, err = address.NewAddressPubKeyHash(hash, p.params)
		} else {
			a, err = address.NewAddressScriptHashFromHash(hash, p.params)
		}
		if err != nil {
			return nil, false, fmt.Errorf("%w: %v", bchain.ErrInvalidData, err)
		}
		return []string{a.EncodeAddress()}, true, nil
	}
	// P2SH32 has no base58 form: it is shown as CashAddr in either format.
	return []string{encodeCashAddr(p.prefix, typ, hash)}, true, nil
}

// classify returns the CashAddr type and hash of a P2PKH, P2SH or P2SH32
// script, or a nil hash.
func classify(s []byte) (byte, []byte) {
	switch {
	case len(s) == 25 && s[0] == txscript.OP_DUP && s[1] == txscript.OP_HASH160 && s[2] == txscript.OP_DATA_20 &&
		s[23] == txscript.OP_EQUALVERIFY && s[24] == txscript.OP_CHECKSIG:
		return cashP2PKH, s[3:23]
	case len(s) == 23 && s[0] == txscript.OP_HASH160 && s[1] == txscript.OP_DATA_20 && s[22] == txscript.OP_EQUAL:
		return cashP2SH, s[2:22]
	case len(s) == 35 && s[0] == txscript.OP_HASH256 && s[1] == txscript.OP_DATA_32 && s[34] == txscript.OP_EQUAL:
		return cashP2SH, s[2:34]
	}
	return 0, nil
}

// maxAddressLen bounds address input: the longest CashAddr (a 64-byte hash
// under a long prefix) and a hex uncompressed public key fit.
const maxAddressLen = 130

// AddrDescFromAddress accepts, in either address_format, a CashAddr with
// this network's prefix or without one, a legacy base58 address, and a hex
// public key (as its P2PKH, like P2PK outputs are indexed).
func (p *Parser) AddrDescFromAddress(addr string) (bchain.AddrDesc, error) {
	if addr == "" {
		return nil, fmt.Errorf("%w: empty", bchain.ErrInvalidAddress)
	}
	if len(addr) > maxAddressLen {
		return nil, fmt.Errorf("%w: longer than %d characters", bchain.ErrInvalidAddress, maxAddressLen)
	}
	if strings.ContainsRune(addr, ':') {
		return p.cashAddrDesc(addr)
	}
	if d, ok := p.legacyDesc(addr); ok {
		return d, nil
	}
	if d, ok := p.pubKeyDesc(addr); ok {
		return d, nil
	}
	return p.cashAddrDesc(addr)
}

func (p *Parser) cashAddrDesc(addr string) (bchain.AddrDesc, error) {
	prefix, typ, hash, err := decodeCashAddr(addr, p.prefix)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", bchain.ErrInvalidAddress, err)
	}
	if prefix != p.prefix {
		return nil, fmt.Errorf("%w: prefix %q is not %s's %q", bchain.ErrInvalidAddress, prefix, p.params.Name, p.prefix)
	}
	switch {
	case (typ == cashP2PKH || typ == cashTokenP2PKH) && len(hash) == 20:
		return append(append([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, hash...),
			txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG), nil
	case (typ == cashP2SH || typ == cashTokenP2SH) && len(hash) == 20:
		return append(append([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, hash...), txscript.OP_EQUAL), nil
	case (typ == cashP2SH || typ == cashTokenP2SH) && len(hash) == 32:
		return append(append([]byte{txscript.OP_HASH256, txscript.OP_DATA_32}, hash...), txscript.OP_EQUAL), nil
	}
	return nil, fmt.Errorf("%w: unsupported CashAddr type %d with a %d-byte hash", bchain.ErrInvalidAddress, typ, len(hash))
}

// legacyDesc decodes a base58 P2PKH or P2SH address of this network.
func (p *Parser) legacyDesc(addr string) (bchain.AddrDesc, bool) {
	payload, version, err := base58.CheckDecode(addr)
	if err != nil || len(payload) != 20 {
		return nil, false
	}
	switch version {
	case p.params.PubKeyHashAddrID:
		return append(append([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, payload...),
			txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG), true
	case p.params.ScriptHashAddrID:
		return append(append([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, payload...), txscript.OP_EQUAL), true
	}
	return nil, false
}

// pubKeyDesc maps a hex public key to its P2PKH descriptor.
func (p *Parser) pubKeyDesc(addr string) (bchain.AddrDesc, bool) {
	if len(addr) != 66 && len(addr) != 130 {
		return nil, false
	}
	key, err := hex.DecodeString(addr)
	if err != nil {
		return nil, false
	}
	if _, err := address.NewAddressPubKey(key, p.params); err != nil {
		return nil, false
	}
	h := address.Hash160(key)
	return append(append([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, h...),
		txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG), true
}
