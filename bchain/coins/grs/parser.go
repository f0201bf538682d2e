package grs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/address/v2/bech32"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Parser is Bitcoin's parser with Groestlcoin's block id, txid and
// base58check. Script classification and bech32 are Bitcoin's.
type Parser struct {
	*btc.Parser
	params *chaincfg.Params
}

var _ bchain.UtxoParser = (*Parser)(nil)

// NewParser returns a parser for one of the Groestlcoin networks.
func NewParser(params *chaincfg.Params) *Parser {
	return &Parser{Parser: btc.NewParser(params), params: params}
}

var codec = btc.BlockCodec{Header: decodeHeader, Tx: decodeTx}

// ParseBlock decodes a serialized block. Each tx's Raw aliases raw.
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) {
	return btc.ParseBlockWith(raw, codec)
}

// ParseTx decodes one serialized transaction; trailing bytes are an error.
func (p *Parser) ParseTx(raw []byte) (*bchain.Tx, error) {
	return btc.ParseTxWith(raw, decodeTx)
}

func decodeHeader(raw []byte, blk *bchain.Block) (int, error) {
	n, err := btc.DecodeHeader(raw, blk)
	if err != nil {
		return 0, err
	}
	blk.Hash = btc.DisplayHash(BlockHash(raw[:n]))
	return n, nil
}

// decodeTx decodes a tx in Bitcoin's encoding; its txid is the single
// SHA-256 of the serialization without witness data.
func decodeTx(raw []byte, tx *bchain.Tx) (int, error) {
	var mtx wire.MsgTx
	r := bytes.NewReader(raw)
	if err := mtx.Deserialize(r); err != nil {
		return 0, err
	}
	n := len(raw) - r.Len()
	btc.TxFromWire(&mtx, raw[:n:n], tx)
	stripped := raw[:n]
	if mtx.HasWitness() {
		var buf bytes.Buffer
		buf.Grow(mtx.SerializeSizeStripped())
		if err := mtx.SerializeNoWitness(&buf); err != nil {
			return 0, err
		}
		stripped = buf.Bytes()
	}
	tx.Txid = btc.DisplayHash(chainhash.Hash(sha256.Sum256(stripped)))
	return n, nil
}

// maxAddressLen bounds address input like Bitcoin's parser does (an
// uncompressed public key in hex is the longest valid input).
const maxAddressLen = 130

// AddrDescFromAddress validates a Groestlcoin address: base58check with a
// Grøstl checksum, bech32/bech32m with the network's prefix, or a hex
// public key (filed under its P2PKH script, as P2PK outputs are).
func (p *Parser) AddrDescFromAddress(addr string) (bchain.AddrDesc, error) {
	switch {
	case addr == "":
		return nil, fmt.Errorf("%w: empty", bchain.ErrInvalidAddress)
	case len(addr) > maxAddressLen:
		return nil, fmt.Errorf("%w: longer than %d characters", bchain.ErrInvalidAddress, maxAddressLen)
	case strings.HasPrefix(strings.ToLower(addr), p.params.Bech32HRPSegwit+"1"):
		return p.segwitDesc(addr)
	case len(addr) == 66 || len(addr) == 130:
		if _, err := hex.DecodeString(addr); err == nil {
			return p.Parser.AddrDescFromAddress(addr) // a public key: no checksum involved
		}
	}
	payload, err := CheckDecode(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", bchain.ErrInvalidAddress, err)
	}
	if len(payload) != 21 {
		return nil, fmt.Errorf("%w: decoded address is %d bytes", bchain.ErrInvalidAddress, len(payload))
	}
	hash := payload[1:]
	switch payload[0] {
	case p.params.PubKeyHashAddrID:
		return p2pkh(hash), nil
	case p.params.ScriptHashAddrID:
		return p2sh(hash), nil
	}
	return nil, fmt.Errorf("%w: not a %s address (version %d)", bchain.ErrInvalidAddress, p.params.Name, payload[0])
}

// segwitDesc decodes a bech32 (witness v0) or bech32m (v1+) address into
// its output script, accepting it only if the script renders back to the
// same address, as Bitcoin's parser does.
func (p *Parser) segwitDesc(addr string) (bchain.AddrDesc, error) {
	hrp, data, _, err := bech32.DecodeGeneric(addr)
	if err != nil || len(data) < 1 || hrp != p.params.Bech32HRPSegwit || data[0] > 16 {
		return nil, fmt.Errorf("%w: not a %s segwit address", bchain.ErrInvalidAddress, p.params.Name)
	}
	prog, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil || len(prog) < 2 || len(prog) > 40 {
		return nil, fmt.Errorf("%w: bad witness program", bchain.ErrInvalidAddress)
	}
	op := byte(txscript.OP_0)
	if data[0] > 0 {
		op = txscript.OP_1 + data[0] - 1
	}
	script := append([]byte{op, byte(len(prog))}, prog...)
	addrs, ok, err := p.AddressesFromAddrDesc(script)
	if err != nil || !ok || len(addrs) != 1 || addrs[0] != strings.ToLower(addr) {
		return nil, fmt.Errorf("%w: unsupported address form", bchain.ErrInvalidAddress)
	}
	return script, nil
}

// AddressesFromAddrDesc renders a descriptor: P2PKH and P2SH (and P2PK,
// shown as its key's P2PKH address) in base58check with a Grøstl
// checksum, segwit forms as Bitcoin's parser does.
func (p *Parser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	addrs, ok, err := p.Parser.AddressesFromAddrDesc(desc)
	if err != nil || !ok {
		return addrs, ok, err
	}
	s := []byte(desc)
	if conv := p.Parser.OutputAddrDesc(s); conv != nil {
		s = conv // P2PK becomes its key's P2PKH script
	}
	switch {
	case isP2PKH(s):
		return []string{CheckEncode(p.params.PubKeyHashAddrID, s[3:23])}, true, nil
	case isP2SH(s):
		return []string{CheckEncode(p.params.ScriptHashAddrID, s[2:22])}, true, nil
	}
	return addrs, ok, nil
}

// OutputAddresses renders an output script for display.
func (p *Parser) OutputAddresses(script []byte) ([]string, bool) {
	if len(script) > 0 && script[0] == txscript.OP_RETURN {
		return p.Parser.OutputAddresses(script)
	}
	desc := p.OutputAddrDesc(script)
	if desc == nil {
		return []string{}, false
	}
	addrs, ok, err := p.AddressesFromAddrDesc(desc)
	if err != nil {
		return []string{}, false
	}
	return addrs, ok
}

func isP2PKH(s []byte) bool {
	return len(s) == 25 && s[0] == txscript.OP_DUP && s[1] == txscript.OP_HASH160 && s[2] == txscript.OP_DATA_20 &&
		s[23] == txscript.OP_EQUALVERIFY && s[24] == txscript.OP_CHECKSIG
}

func isP2SH(s []byte) bool {
	return len(s) == 23 && s[0] == txscript.OP_HASH160 && s[1] == txscript.OP_DATA_20 && s[22] == txscript.OP_EQUAL
}

func p2pkh(hash []byte) bchain.AddrDesc {
	s := append([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, hash...)
	return append(s, txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
}

func p2sh(hash []byte) bchain.AddrDesc {
	s := append([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, hash...)
	return append(s, txscript.OP_EQUAL)
}

// CheckEncode is base58check with Groestlcoin's checksum (the first four
// bytes of double Grøstl-512) of a version byte and payload.
func CheckEncode(version byte, payload []byte) string {
	b := make([]byte, 0, 1+len(payload)+4)
	b = append(b, version)
	b = append(b, payload...)
	sum := checksum4(b)
	return base58.Encode(append(b, sum[:]...))
}

// CheckDecode returns the version byte and payload of a base58check
// string with Groestlcoin's checksum.
func CheckDecode(s string) ([]byte, error) {
	raw := base58.Decode(s)
	if len(raw) < 5 {
		return nil, fmt.Errorf("not base58check")
	}
	body := raw[:len(raw)-4]
	if sum := checksum4(body); !bytes.Equal(sum[:], raw[len(raw)-4:]) {
		return nil, fmt.Errorf("checksum mismatch")
	}
	return body, nil
}
