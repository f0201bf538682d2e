package api

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// The explorer's token pages: a token's total supply and an NFT's URI,
// read from the contract at the node's latest block, as Blockbook's
// /nft/<contract>/<id> page reads them: ERC-721's tokenURI(uint256) first,
// then ERC-1155's uri(uint256), whatever standard the index gave the
// contract (some contracts answer the other one).

// The selectors: tokenURI(uint256), uri(uint256), totalSupply().
var (
	erc721TokenURISel = []byte{0xc8, 0x7b, 0x56, 0xdd}
	erc1155URISel     = []byte{0x0e, 0x89, 0x34, 0x1c}
	totalSupplySel    = []byte{0x18, 0x16, 0x0d, 0xdd}
)

// maxTokenURI bounds the URI a contract answers; on-chain NFTs return
// their whole metadata (an SVG inside) as a data: URI, rarely over 100 KB.
const maxTokenURI = 1 << 20

// NFT is what the NFT page shows of a token: its contract as the index
// knows it, the id, and the URI its contract answers ("" when neither
// method answers). URIWithID is the URI with ERC-1155's "{id}"
// placeholder replaced by the id in 64 lowercase hex digits, the URL to
// read the metadata from.
type NFT struct {
	Contract  *ContractInfo
	ID        string
	URI       string
	URIWithID string
	Method    string // "tokenURI" or "uri"; "" when neither answered
	// CallError is why the contract gave no URI when a call failed other
	// than by a revert (an invalid opcode, out of gas, the node's refusal):
	// the method and the node's message; "" otherwise.
	CallError string
}

// ParseTokenID reads a token id as Blockbook takes it: a decimal uint256.
func ParseTokenID(s string) (*big.Int, error) {
	s = strings.TrimSpace(s)
	id, ok := new(big.Int).SetString(s, 10)
	if len(s) > 78 || !ok || id.Sign() < 0 || id.BitLen() > 256 || strings.HasPrefix(s, "+") {
		return nil, userErr("Invalid token id '%s'", truncate(s, 80))
	}
	return id, nil
}

// NFT reads the URI of a token of a contract the index knows.
func (s *EthService) NFT(ctx context.Context, contract, id string) (*NFT, error) {
	if s.tron != nil {
		return nil, userErr("NFT pages are not supported on this coin")
	}
	desc, err := s.addrDesc(contract)
	if err != nil {
		return nil, err
	}
	tid, err := ParseTokenID(id)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	ci, err := s.contractInfo(v, desc)
	v.release()
	if err != nil {
		return nil, err
	}
	if ci == nil {
		return nil, &Error{Msg: fmt.Sprintf("Unknown contract %s", truncate(contract, 100)), Err: ErrNotFound}
	}
	out := &NFT{Contract: ci, ID: tid.String()}
	if err := s.tokenURI(ctx, desc, tid, out); err != nil {
		return nil, err
	}
	return out, nil
}

// maxCallError bounds the node's message about a failed call shown on the
// page (the node's text, but a contract's revert data can be long).
const maxCallError = 200

// tokenURI asks the contract for the token's URI: tokenURI, then uri. A
// call the node answers with an error object (a revert, an invalid opcode,
// out of gas, any other refusal of the call) means that method gives no
// URI; the first such message other than a revert is kept in CallError
// when neither gives one. Only a node that cannot be asked (unreachable,
// garbage, a timeout) fails the page.
func (s *EthService) tokenURI(ctx context.Context, desc bchain.AddrDesc, tid *big.Int, out *NFT) error {
	var arg [32]byte
	tid.FillBytes(arg[:])
	callErr := ""
	for _, m := range []struct {
		name string
		sel  []byte
	}{{"tokenURI", erc721TokenURISel}, {"uri", erc1155URISel}} {
		res, err := s.eth.Call(ctx, bchain.EthCall{To: desc, Data: append(append([]byte{}, m.sel...), arg[:]...)})
		var re *bchain.RPCError
		if errors.As(err, &re) {
			if callErr == "" && !isRevert(err) {
				callErr = m.name + ": " + strings.ToValidUTF8(truncate(re.Message, maxCallError), "")
			}
			continue
		}
		if err != nil {
			return err
		}
		if uri, ok := abiString(res); ok && strings.TrimSpace(uri) != "" {
			out.URI, out.Method = uri, m.name
			out.URIWithID = strings.ReplaceAll(uri, "{id}", fmt.Sprintf("%064x", tid))
			return nil
		}
	}
	out.CallError = callErr
	return nil
}

// TokenSupply is a contract's totalSupply() in base units; nil when the
// contract does not answer it (an ERC-721 without the enumerable
// extension, an ERC-1155).
func (s *EthService) TokenSupply(ctx context.Context, contract string) (*Amount, error) {
	if s.tron != nil {
		return nil, nil
	}
	desc, err := s.addrDesc(contract)
	if err != nil {
		return nil, err
	}
	res, err := s.eth.Call(ctx, bchain.EthCall{To: desc, Data: totalSupplySel})
	if isRevert(err) || (err == nil && len(res) != 32) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return (*Amount)(new(big.Int).SetBytes(res)), nil
}

// isRevert tells a call the contract refused (geth's code 3, or the
// message elsewhere) from a node error.
func isRevert(err error) bool {
	var re *bchain.RPCError
	return errors.As(err, &re) && (re.Code == 3 || strings.Contains(strings.ToLower(re.Message), "revert"))
}

// abiString decodes an ABI-encoded string return value: an offset word,
// a length word at that offset, then the bytes. Anything out of bounds or
// over maxTokenURI is not a string.
func abiString(b []byte) (string, bool) {
	word := func(at uint64) (uint64, bool) {
		if at > uint64(len(b)) || uint64(len(b))-at < 32 {
			return 0, false
		}
		w := b[at : at+32]
		for _, c := range w[:24] {
			if c != 0 {
				return 0, false
			}
		}
		return binary.BigEndian.Uint64(w[24:]), true
	}
	off, ok := word(0)
	if !ok {
		return "", false
	}
	n, ok := word(off)
	if !ok || n > maxTokenURI || n > uint64(len(b))-off-32 {
		return "", false
	}
	start := off + 32
	return string(b[start : start+n]), true
}
