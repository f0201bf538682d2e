package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
)

// EIP-137's namehash examples, and which inputs are asked as names.
func TestENSNameHash(t *testing.T) {
	for name, want := range map[string]string{
		"":        "0x0000000000000000000000000000000000000000000000000000000000000000",
		"eth":     "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae",
		"foo.eth": "0xde9b09fd7c5f901e23a3f19fecc54828e9c848539801e86591bd9801b019f84f",
	} {
		if got := ENSNameHash(name).Hex(); got != want {
			t.Errorf("namehash(%q) = %s, want %s", name, got, want)
		}
	}
	for _, c := range []struct {
		s    string
		want bool
	}{{"vitalik.eth", true}, {" Vitalik.ETH ", true}, {"a.b.eth", true}, {"eth", false}, {"0xabc", false}, {"x.eth.com", false}} {
		if IsENSName(c.s) != c.want {
			t.Errorf("IsENSName(%q) = %v", c.s, !c.want)
		}
	}
}

type ensNode struct {
	bchain.EthereumChain
	err error
}

func (n ensNode) Call(context.Context, bchain.EthCall) ([]byte, error) { return nil, n.err }

// A revert means no ENS record there (400 "not found"); any other node
// error stays the node's (not the user's mistake).
func TestENSCallErrors(t *testing.T) {
	for _, c := range []struct {
		err      error
		notFound bool
	}{
		{&bchain.RPCError{Code: 3, Message: "execution reverted"}, true},
		{&bchain.RPCError{Code: -32000, Message: "execution reverted: no such name"}, true},
		{&bchain.RPCError{Code: -32005, Message: "rate limit exceeded"}, false},
		{&bchain.RPCError{Code: -32000, Message: "header not found"}, false},
		{fmt.Errorf("dial: %w", bchain.ErrNodeUnavailable), false},
	} {
		s := &EthService{core: core{log: slog.New(slog.DiscardHandler)}, eth: ensNode{err: c.err}}
		_, err := s.ensCall(context.Background(), common.Address{}, []byte{1, 2, 3, 4}, common.Hash{})
		var ae *Error
		if got := errors.As(err, &ae) && ae.Msg == "ENS name not found"; got != c.notFound {
			t.Errorf("%v: %v, want not found %v", c.err, err, c.notFound)
		}
	}
}
