package api

import (
	"context"
	"math"
	"math/big"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Token rates (Ethereum-type chains). fiat stores a token's rate in coins
// (TokenRates, keyed by the contract in lowercase 0x hex); its rate in a
// currency is that times the coin's rate of the same ticker, as Blockbook
// computes it. A token without a rate has no value: the answers leave it
// out (values) or give -1 (fiat calls), as Blockbook's do.

// normalizeToken is the key of a token's rates: the contract, lowercase.
func normalizeToken(token string) string { return strings.ToLower(strings.TrimSpace(token)) }

// currentTokenTicker returns the current ticker when it has token's rate
// (and currency's, unless ""), else nil.
func (s *core) currentTokenTicker(token, currency string) (*db.FiatTicker, error) {
	t, err := s.currentTicker(currency)
	if err != nil || t == nil || !t.HasToken(token) {
		return nil, err
	}
	return t, nil
}

// tokenTickersAt finds, for each timestamp, the first daily ticker at or
// after it with token's rate, else the current ticker. Without the token in
// the current ticker every one is nil: Blockbook does not search the days
// for a token the provider does not price now.
func (s *core) tokenTickersAt(timestamps []int64, token string) ([]*db.FiatTicker, error) {
	out := make([]*db.FiatTicker, len(timestamps))
	if !s.cfg.FiatRates {
		return out, nil
	}
	snap, err := s.db.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	current, err := db.ReadFiatCurrent(snap)
	if err != nil || current == nil || !current.HasToken(token) {
		return out, err
	}
	found, err := db.FindFiatTokenTickers(snap, timestamps, token)
	if err != nil {
		return nil, err
	}
	for i, t := range found {
		if t == nil {
			t = current
		}
		out[i] = t
	}
	return out, nil
}

// tokenFiatResult renders a token's rates in a ticker: in each requested
// currency (every currency of the ticker when none is), -1 where unknown.
func tokenFiatResult(t *db.FiatTicker, token string, currencies []string) FiatTicker {
	if len(currencies) == 0 {
		currencies = make([]string, 0, len(t.Rates))
		for c := range t.Rates {
			currencies = append(currencies, c)
		}
	}
	rates := make(map[string]float64, len(currencies))
	for _, c := range currencies {
		rates[c] = -1
		if r := tokenRateIn(t, token, c); r > 0 {
			rates[c] = r
		}
	}
	return FiatTicker{Timestamp: t.Time, Rates: rates}
}

// tokenRateIn is token's rate in currency by the ticker; 0 when unknown.
func tokenRateIn(t *db.FiatTicker, token, currency string) float64 {
	tr, ok := t.TokenRates[token]
	if !ok {
		return 0
	}
	return tr * t.Rates[currency]
}

// TokenFiatRates returns the rates of tokens (as named) in currency by a
// ticker, those with a known rate only (subscribeFiatRates' tokenRates).
func TokenFiatRates(t *FiatTicker, tokens []string, currency string) map[string]float64 {
	out := make(map[string]float64, len(tokens))
	for _, tk := range tokens {
		if r := t.TokenRates[normalizeToken(tk)] * t.Rates[currency]; r > 0 {
			out[tk] = r
		}
	}
	return out
}

// tokenValues sets the baseValue and secondaryValue of the ERC20 balances
// among tokens at the current rates and returns their sums; a token
// without a rate gets neither, as in Blockbook.
func (s *core) tokenValues(tokens []Token, currency string) (base, secondary float64) {
	t, err := s.currentTicker("")
	if err != nil {
		s.log.Warn("reading the current fiat rates failed", "err", err)
		return 0, 0
	}
	if t == nil {
		return 0, 0
	}
	rate, hasRate := t.Rates[currency]
	for i := range tokens {
		tk := &tokens[i]
		if tk.Standard != bchain.TokenERC20.String() || tk.Balance == nil {
			continue
		}
		tr, ok := t.TokenRates[normalizeToken(tk.Contract)]
		if !ok {
			continue
		}
		tk.BaseValue = units((*big.Int)(tk.Balance), tk.Decimals) * tr
		if hasRate {
			tk.SecondaryValue = tk.BaseValue * rate
		}
		base += tk.BaseValue
		secondary += tk.SecondaryValue
	}
	return base, secondary
}

// units is an amount of base units in whole units of decimals.
func units(amount *big.Int, decimals int) float64 {
	if amount == nil {
		return 0
	}
	decimals = min(max(decimals, 0), 77)
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
	f, _ := new(big.Rat).SetFrac(amount, unit).Float64()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
}

// coinRate is the current rate of the coin in currency (0: unknown).
func (s *core) coinRate(currency string) float64 {
	t, err := s.currentTicker(currency)
	if err != nil || t == nil {
		return 0
	}
	return t.Rates[currency]
}

// ethAddressValues fills an Ethereum-type address's values in currency
// (Blockbook's): the balance's, its tokens' (which then sort by value),
// their sums, and the balance plus the tokens in coins (given even without
// rates) and in currency.
func (s *core) ethAddressValues(ctx context.Context, out *Address, bal *big.Int, currency string) {
	if val, ok := s.secondaryValue(ctx, bal, currency); ok {
		out.SecondaryValue = val
	}
	out.TokensBaseValue, out.TokensSecondaryValue = s.tokenValues(out.Tokens, currency)
	sortTokens(out.Tokens)
	out.TotalBaseValue = units(bal, s.backend.Params.Decimals) + out.TokensBaseValue
	out.TotalSecondaryValue = s.coinRate(currency) * out.TotalBaseValue
}
