package server

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// nftCallFake answers the NFT page's token with the error or token set.
type nftCallFake struct {
	explorerFake
	nft *api.NFT
	err error
}

func (f *nftCallFake) Capabilities() api.Capabilities { return api.Capabilities{Contracts: f} }

func (f *nftCallFake) Contract(context.Context, string, api.ContractQuery) (*api.ContractInfo, error) {
	return nil, nil
}

func (f *nftCallFake) TokenSupply(context.Context, string) (*api.Amount, error) { return nil, nil }

func (f *nftCallFake) NFT(context.Context, string, string) (*api.NFT, error) { return f.nft, f.err }

// A token whose URI call failed (not a revert) shows no URI and why; a
// node that cannot be asked gives the explorer's node-down page (503).
func TestExplorerNFTCallFailures(t *testing.T) {
	const path = "/nft/0x00000000000000000000000000000000000000aa/7"
	get := func(f *nftCallFake) (int, string) {
		p := NewPublic(f, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, html.UnescapeString(rec.Body.String())
	}
	ci := &api.ContractInfo{Contract: "0x00000000000000000000000000000000000000aA", Standard: "ERC721"}
	code, body := get(&nftCallFake{nft: &api.NFT{Contract: ci, ID: "7", CallError: "tokenURI: invalid opcode: INVALID"}})
	if code != 200 || !strings.Contains(body, `id="nft-callerror">The call failed: tokenURI: invalid opcode: INVALID<`) ||
		!strings.Contains(body, "answers no URI") {
		t.Errorf("a failed call: %d\n%s", code, body)
	}
	code, body = get(&nftCallFake{nft: &api.NFT{Contract: ci, ID: "7"}})
	if code != 200 || strings.Contains(body, "nft-callerror") || !strings.Contains(body, "answers no URI") {
		t.Errorf("a revert: %d\n%s", code, body)
	}
	code, body = get(&nftCallFake{err: fmt.Errorf("eth_call: %w: dial tcp 127.0.0.1:8545: connection refused", bchain.ErrNodeUnavailable)})
	if code != 503 || !strings.Contains(body, "not responding") || strings.Contains(body, "8545") {
		t.Errorf("node down: %d\n%s", code, body)
	}
}
