package fiat

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Token rates of Ethereum-type chains, downloaded as Blockbook does:
// coins/list?include_platform=true maps CoinGecko's coin ids to their
// contracts on the chain's platform, simple/price prices those ids in
// platformVsCurrency (many ids a request), and coins/{id}/market_chart
// gives each token's daily history. Unlike Blockbook, which follows every
// token of the platform, only the ERC20 contracts the index knows are
// followed (at most MaxTokens). Rates are stored in units of the coin.

// maxIDsLen bounds the ids of one simple/price request, as Blockbook's
// 6000 characters, so that the URL stays within what servers accept.
const maxIDsLen = 6000

// tokenRef is a token CoinGecko prices: its coin id and contract
// (lowercase 0x hex, the key of the stored rates).
type tokenRef struct {
	id, contract string
}

// coinsList asks coins/list?include_platform=true and returns, for each
// coin with a contract on platform, its id and contract (lowercase).
func (c *client) coinsList(ctx context.Context, platform string) ([]tokenRef, error) {
	var out []struct {
		ID        string            `json:"id"`
		Platforms map[string]string `json:"platforms"`
	}
	if err := c.getAt(ctx, c.histURL(), "coins/list", "/coins/list", url.Values{"include_platform": {"true"}}, &out); err != nil {
		return nil, err
	}
	refs := make([]tokenRef, 0, 64)
	for _, coin := range out {
		if contract := strings.ToLower(strings.TrimSpace(coin.Platforms[platform])); coin.ID != "" && contract != "" {
			refs = append(refs, tokenRef{id: coin.ID, contract: contract})
		}
	}
	return refs, nil
}

// simplePriceIDs asks simple/price for the rates of ids in vs.
func (c *client) simplePriceIDs(ctx context.Context, ids []string, vs string) (map[string]float64, error) {
	var out map[string]map[string]*float64
	q := url.Values{"ids": {strings.Join(ids, ",")}, "vs_currencies": {vs}}
	if err := c.get(ctx, "simple/price", "/simple/price", q, &out); err != nil {
		return nil, err
	}
	rates := make(map[string]float64, len(out))
	for id, r := range out {
		if v := r[vs]; v != nil && validRate(*v) && *v > 0 {
			rates[id] = *v
		}
	}
	return rates, nil
}

// contractDesc parses a platform contract ("0x" and 40 hex digits).
func contractDesc(contract string) (bchain.AddrDesc, bool) {
	if len(contract) != 42 || !strings.HasPrefix(contract, "0x") {
		return nil, false
	}
	b, err := hex.DecodeString(contract[2:])
	return b, err == nil
}

// trackedTokens returns the platform's tokens that the index knows as
// ERC20 contracts, sorted by contract, at most MaxTokens. The platform's
// list is downloaded once and again with reload (each history run, as
// Blockbook); the index is asked each time, so tokens it learns count at
// the next download.
func (dl *Downloader) trackedTokens(ctx context.Context, reload bool) ([]tokenRef, error) {
	dl.tokMu.Lock()
	defer dl.tokMu.Unlock()
	if dl.platform == nil || reload {
		refs, err := dl.cg.coinsList(ctx, dl.cfg.Platform)
		if err != nil {
			return nil, err
		}
		dl.platform = refs
	}
	var out []tokenRef
	seen := map[string]bool{}
	for _, r := range dl.platform {
		desc, ok := contractDesc(r.contract)
		if !ok || seen[r.contract] {
			continue
		}
		known, err := dl.knownToken(desc)
		if err != nil {
			return nil, fmt.Errorf("reading contract %s: %w", r.contract, err)
		}
		if !known {
			continue
		}
		seen[r.contract] = true
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b tokenRef) int { return strings.Compare(a.contract, b.contract) })
	if len(out) > dl.cfg.MaxTokens {
		dl.cfg.Log.Warn("more priced tokens in the index than followed", "tokens", len(out), "max", dl.cfg.MaxTokens)
		out = out[:dl.cfg.MaxTokens]
	}
	dl.m.tokens.Set(float64(len(out)))
	return out, nil
}

// indexedERC20 reports whether the index knows contract as an ERC20 token.
func (dl *Downloader) indexedERC20(contract bchain.AddrDesc) (bool, error) {
	ci, err := db.ReadContractInfo(dl.db, contract)
	return ci != nil && ci.Standard() == bchain.TokenERC20, err
}

// toCoins converts a token rate in platformVsCurrency to coins with the
// coin's rates of the same time; false when they lack that currency.
func (dl *Downloader) toCoins(rate float64, coinRates map[string]float64) (float64, bool) {
	if dl.cfg.PlatformVsIsCoin {
		return rate, true
	}
	base := coinRates[dl.cfg.PlatformVsCurrency]
	if base <= 0 {
		return 0, false
	}
	r := rate / base
	return r, validRate(r) && r > 0
}

// currentTokenRates downloads the current rates of the tracked tokens, in
// coins, with simple/price requests of at most maxIDsLen characters of ids.
func (dl *Downloader) currentTokenRates(ctx context.Context, coinRates map[string]float64) (map[string]float64, error) {
	if _, ok := dl.toCoins(1, coinRates); !ok {
		return nil, fmt.Errorf("%w: the coin has no current rate in platformVsCurrency %q", ErrMalformed, dl.cfg.PlatformVsCurrency)
	}
	tokens, err := dl.trackedTokens(ctx, false)
	if err != nil {
		return nil, err
	}
	dl.wakeHistoryFor(tokens)
	byID := make(map[string][]string, len(tokens))
	for _, t := range tokens {
		byID[t.id] = append(byID[t.id], t.contract)
	}
	out := make(map[string]float64, len(tokens))
	for from := 0; from < len(tokens); {
		to, n := from, 0
		for to < len(tokens) && (to == from || n+len(tokens[to].id)+3 <= maxIDsLen) {
			n += len(tokens[to].id) + 3 // the id and its escaped comma
			to++
		}
		ids := make([]string, 0, to-from)
		for _, t := range tokens[from:to] {
			ids = append(ids, t.id)
		}
		rates, err := dl.cg.simplePriceIDs(ctx, ids, dl.cfg.PlatformVsCurrency)
		if err != nil {
			return nil, err
		}
		for id, r := range rates {
			if v, ok := dl.toCoins(r, coinRates); ok {
				for _, c := range byID[id] {
					out[c] = v
				}
			}
		}
		from = to
	}
	return out, nil
}

// updateTokenHistory brings the daily history of every tracked token up to
// date, one market_chart request per token that lacks days, into the days
// that have the coin's rates (Blockbook skips days without the coin's
// ticker likewise). Throttling or a ban ends the run; other failures skip
// the token until the next run.
func (dl *Downloader) updateTokenHistory(ctx context.Context) error {
	tokens, err := dl.trackedTokens(ctx, !dl.tokFresh.Swap(false))
	if err != nil {
		return err
	}
	dl.tokMu.Lock()
	dl.historyTokens = make(map[string]bool, len(tokens))
	for _, t := range tokens {
		dl.historyTokens[t.contract] = true
	}
	dl.tokMu.Unlock()
	updated, failed, err := dl.runSeries(ctx, dl.tokenSeries(tokens))
	if err != nil {
		return err
	}
	if failed > 0 {
		dl.m.errors.WithLabelValues("tokens").Add(float64(failed))
	}
	dl.cfg.Log.Info("token rate history updated", "tokens", len(tokens), "downloaded", updated, "failed", failed)
	return nil
}

// tokenSeries is the daily series of tokens.
func (dl *Downloader) tokenSeries(tokens []tokenRef) []series {
	out := make([]series, len(tokens))
	for i, t := range tokens {
		out[i] = series{id: t.id, vs: dl.cfg.PlatformVsCurrency, contract: t.contract}
	}
	return out
}

// wakeHistoryFor starts a history run when tokens has one that the last
// run did not cover.
func (dl *Downloader) wakeHistoryFor(tokens []tokenRef) {
	dl.tokMu.Lock()
	defer dl.tokMu.Unlock()
	if dl.historyTokens == nil {
		return // the first run is under way or due
	}
	woken := false
	for _, t := range tokens {
		if !dl.historyTokens[t.contract] {
			dl.historyTokens[t.contract] = true // wake once per token
			woken = true
		}
	}
	if woken {
		select {
		case dl.wakeHistory <- struct{}{}:
		default:
		}
	}
}
