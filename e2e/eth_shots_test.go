package e2e

// Screenshot tests of the explorer on the Ethereum dev chain of
// TestEthAPIMatchesLedger (explorer_shots_test.go has the comparison). The
// chain starts from a genesis in the future (ethShotsGenesis), so geth
// stamps its blocks one second apart from there: block times, and with the
// fixed keys and txs the tx hashes and the pages' targets, are the same in
// every run. What still depends on the run is masked as on the Bitcoin
// demo (first-seen times of pending txs, ages, versions), and so are the
// block hashes (geth's simulated beacon draws each block's prevRandao at
// random) and the ports of the NFT metadata double.

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// ethShotsGenesis is the Ethereum dev chain's genesis time in the
// explorer tests: 2035-01-01 00:00:00 UTC, after any run of them (a chain
// started later stamps its blocks with the clock and the screenshots
// change), still in int32 range.
var ethShotsGenesis = uint64(time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC).Unix())

// ethShotOptions are the dev node's options of TestEthAPIMatchesLedger.
func ethShotOptions() gethdev.Options { return gethdev.Options{GenesisTime: ethShotsGenesis} }

// ethShots are the Ethereum page kinds: each on the desktop in light, the
// two richest (a token transfer and a token holder) also dark and at phone
// width.
func (e *ethE2E) ethShots(t *testing.T) []shot {
	t.Helper()
	tx, holder, token, nft := e.shotTargets(t)
	pages := []shotPage{
		{"tx", "/tx/" + tx.Hash.Hex()},
		{"address", "/address/" + holder.Hex()},
		{"home", "/"},
		{"block", fmt.Sprintf("/block/%d", tx.BlockNumber)},
		{"contract", "/address/" + token.Hex()},
		{"nft", "/nft/" + nft},
	}
	return pageShots("eth-", pages, 2)
}

// shotTargets picks, ties broken by hash or address so that every run
// picks the same: the mined tx with the most token transfers, the account
// (not a contract) holding the most tokens, ethgen's ERC20 token and the
// lowest ERC-721 token id mined ("contract/id").
func (e *ethE2E) shotTargets(t *testing.T) (tx *ethgen.Tx, holder, token common.Address, nft string) {
	t.Helper()
	hashes := make([]string, 0, len(e.ledger.Txs))
	byHex := map[string]*ethgen.Tx{}
	for h, x := range e.ledger.Txs {
		hashes = append(hashes, h.Hex())
		byHex[h.Hex()] = x
	}
	slices.Sort(hashes)
	var nftID *big.Int
	for _, h := range hashes {
		x := byHex[h]
		if x.Pending || x.Status == 0 {
			continue
		}
		if tx == nil || len(x.TokenTransfers) > len(tx.TokenTransfers) {
			tx = x
		}
		for _, tt := range x.TokenTransfers {
			if tt.Standard == ethgen.ERC721 && (nftID == nil || tt.TokenID.Cmp(nftID) < 0) {
				nftID, nft = tt.TokenID, tt.Contract.Hex()+"/"+tt.TokenID.String()
			}
		}
	}
	for _, a := range e.ledger.SortedAddresses() {
		if e.ledger.Contracts[a] != nil {
			continue
		}
		if n := len(e.ledger.Addresses[a].Tokens); n > 0 && (holder == (common.Address{}) || n > len(e.ledger.Addresses[holder].Tokens)) {
			holder = a
		}
	}
	for a, c := range e.ledger.Contracts {
		if c.Standard == ethgen.ERC20 && c.Symbol == ethgen.TokenSymbol {
			token = a
		}
	}
	if tx == nil || len(tx.TokenTransfers) == 0 || holder == (common.Address{}) || token == (common.Address{}) || nft == "" {
		t.Fatalf("the scenario lacks a page to picture: tx %v, holder %s, token %s, nft %q", tx, holder, token, nft)
	}
	return tx, holder, token, nft
}

// checkAxeKinds runs axe-core on a page of every kind checked, sorted by
// kind, in both schemes.
func checkAxeKinds(b *browser, paths map[string]string) {
	b.t.Helper()
	kinds := make([]string, 0, len(paths))
	for k := range paths {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	src := axeSource(b.t)
	for _, dark := range []bool{false, true} {
		b.viewport(viewports[0], dark)
		for _, kind := range kinds {
			b.open(paths[kind])
			b.checkAxe(src, fmt.Sprintf("%s %s (dark %v)", kind, paths[kind], dark))
		}
	}
	if !slices.ContainsFunc(kinds, func(k string) bool { return strings.HasPrefix(k, "nft-") }) {
		b.t.Error("axe: no NFT page among the kinds")
	}
}
