package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openexplorer/blockbook/bchain"
)

// uriNode answers each selector with its error, or with an ABI string.
type uriNode struct {
	bchain.EthereumChain
	errs map[string]error // by "tokenURI" / "uri"
	uri  string
}

func (n uriNode) Call(_ context.Context, c bchain.EthCall) ([]byte, error) {
	name := "uri"
	if bytes.HasPrefix(c.Data, erc721TokenURISel) {
		name = "tokenURI"
	}
	if err := n.errs[name]; err != nil {
		return nil, err
	}
	b := make([]byte, 64, 64+len(n.uri)+32)
	b[31], b[63] = 32, byte(len(n.uri))
	return append(b, n.uri...), nil
}

// A call the node refuses (a revert, an invalid opcode, out of gas, the
// node's own error object) gives no URI, with the first message that is
// not a revert; the other method is still asked; only a node that cannot
// be asked fails the page.
func TestTokenURICallErrors(t *testing.T) {
	revert := &bchain.RPCError{Code: 3, Message: "execution reverted"}
	invalid := &bchain.RPCError{Code: -32000, Message: "invalid opcode: INVALID"}
	oog := &bchain.RPCError{Code: -32000, Message: "out of gas"}
	down := fmt.Errorf("eth_call: %w: dial tcp: connection refused", bchain.ErrNodeUnavailable)
	for _, c := range []struct {
		name             string
		errs             map[string]error
		uri, method, why string
		nodeUnavailable  bool
	}{
		{"both revert", map[string]error{"tokenURI": revert, "uri": revert}, "", "", "", false},
		{"invalid opcode", map[string]error{"tokenURI": invalid, "uri": invalid}, "", "", "tokenURI: invalid opcode: INVALID", false},
		{"out of gas, then a revert", map[string]error{"tokenURI": oog, "uri": revert}, "", "", "tokenURI: out of gas", false},
		{"a revert, then out of gas", map[string]error{"tokenURI": revert, "uri": oog}, "", "", "uri: out of gas", false},
		{"invalid opcode, then uri answers", map[string]error{"tokenURI": invalid}, "ipfs://x/{id}", "uri", "", false},
		{"tokenURI answers", nil, "ipfs://x/{id}", "tokenURI", "", false},
		{"node down", map[string]error{"tokenURI": down}, "", "", "", true},
		{"node down after a revert", map[string]error{"tokenURI": revert, "uri": down}, "", "", "", true},
	} {
		s := &EthService{eth: uriNode{errs: c.errs, uri: "ipfs://x/{id}"}}
		out := &NFT{}
		err := s.tokenURI(context.Background(), make(bchain.AddrDesc, 20), big.NewInt(7), out)
		if got := errors.Is(err, bchain.ErrNodeUnavailable); got != c.nodeUnavailable || err != nil && !got {
			t.Errorf("%s: error %v, want node unavailable %v", c.name, err, c.nodeUnavailable)
			continue
		}
		if out.URI != c.uri || out.Method != c.method || out.CallError != c.why {
			t.Errorf("%s: %+v, want uri %q by %q, call error %q", c.name, out, c.uri, c.method, c.why)
		}
		if c.uri != "" && out.URIWithID != "ipfs://x/"+strings.Repeat("0", 63)+"7" {
			t.Errorf("%s: uri with id %q", c.name, out.URIWithID)
		}
	}
	long := &bchain.RPCError{Code: -32000, Message: "a" + strings.Repeat("é", 300)} // cut inside a rune
	s := &EthService{eth: uriNode{errs: map[string]error{"tokenURI": long, "uri": revert}}}
	out := &NFT{}
	if err := s.tokenURI(context.Background(), make(bchain.AddrDesc, 20), big.NewInt(1), out); err != nil || len(out.CallError) > maxCallError+20 || !strings.HasSuffix(out.CallError, "…") || !utf8.ValidString(out.CallError) {
		t.Errorf("a long message: %v, %d bytes %q", err, len(out.CallError), out.CallError)
	}
}
