package api

import (
	"context"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/db"
)

// Fiat rates, from the fiatRates column family that fiat fills when
// fiat_rates is configured (Config.FiatRates). The answers follow
// Blockbook's api/worker.go: a time's rates are those of the finer ticker
// that covers it (fiat_fine.go), else of the first daily ticker at or after
// it that has the requested currency (the day's close), else the current
// ticker; a rate the ticker lacks is -1. Without fiat
// rates configured every lookup finds nothing (rates -1, "No tickers
// found").

const noTickers = "No tickers found"

// normalizeCurrencies lowercases the requested currencies (the provider's
// names are lowercase) and drops empty ones.
func normalizeCurrencies(currencies []string) []string {
	out := make([]string, 0, len(currencies))
	for _, c := range currencies {
		if c = strings.ToLower(strings.TrimSpace(c)); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// singleCurrency is the currency a lookup must find: with exactly one
// requested, a ticker without it is passed over; with several or none, any
// ticker serves (and what it lacks is -1), as in Blockbook.
func singleCurrency(currencies []string) string {
	if len(currencies) == 1 {
		return currencies[0]
	}
	return ""
}

// currentTicker returns the current ticker when it has currency ("" any).
func (s *core) currentTicker(currency string) (*db.FiatTicker, error) {
	if !s.cfg.FiatRates {
		return nil, nil
	}
	t, err := s.fiatCurrent()
	if err != nil || t == nil || !t.Has(currency) {
		return nil, err
	}
	return t, nil
}

// fiatCurrent reads the current ticker (nil if none).
func (s *core) fiatCurrent() (*db.FiatTicker, error) {
	snap, err := s.db.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	return db.ReadFiatCurrent(snap)
}

// tickersAt finds the ticker of each timestamp: the finer (5-minute or
// hourly) ticker that covers it (fiat_fine.go), else the first daily
// ticker at or after it with currency, else the current ticker (whatever
// it holds), else nil.
func (s *core) tickersAt(timestamps []int64, currency string) ([]*db.FiatTicker, error) {
	if !s.cfg.FiatRates {
		return make([]*db.FiatTicker, len(timestamps)), nil
	}
	snap, err := s.db.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	out := make([]*db.FiatTicker, len(timestamps))
	if err := fineTickers(snap, timestamps, currency, out); err != nil {
		return nil, err
	}
	var rest []int64
	var restAt []int
	for i, t := range out {
		if t == nil {
			rest, restAt = append(rest, timestamps[i]), append(restAt, i)
		}
	}
	daily, err := db.FindFiatTickers(snap, rest, currency)
	if err != nil {
		return nil, err
	}
	for k, i := range restAt {
		out[i] = daily[k]
	}
	var current *db.FiatTicker
	for i := range out {
		if out[i] != nil {
			continue
		}
		if current == nil {
			if current, err = db.ReadFiatCurrent(snap); err != nil {
				return nil, err
			}
			if current == nil {
				break
			}
		}
		out[i] = current
	}
	return out, nil
}

// fiatResult renders a ticker: every rate when no currency is requested,
// else each requested one, -1 when the ticker lacks it.
func fiatResult(t *db.FiatTicker, currencies []string) FiatTicker {
	rates := make(map[string]float64, max(len(currencies), len(t.Rates)))
	if len(currencies) == 0 {
		for c, r := range t.Rates {
			rates[c] = r
		}
	}
	for _, c := range currencies {
		if r, ok := t.Rates[c]; ok {
			rates[c] = r
		} else {
			rates[c] = -1
		}
	}
	return FiatTicker{Timestamp: t.Time, Rates: rates}
}

// unknownRates are the rates of a time without a ticker: -1 each.
func unknownRates(currencies []string) map[string]float64 {
	rates := make(map[string]float64, len(currencies))
	for _, c := range currencies {
		rates[c] = -1
	}
	return rates
}

// CurrentFiatRates answers getCurrentFiatRates and REST tickers without a
// time: the current ticker, or the newest daily one when the current one
// lacks the single requested currency. A token's rates come only from the
// current ticker (Blockbook does not search the days for them).
func (s *core) CurrentFiatRates(_ context.Context, currencies []string, token string) (*FiatTicker, error) {
	if err := checkCurrencies(currencies); err != nil {
		return nil, err
	}
	currencies = normalizeCurrencies(currencies)
	if !s.cfg.FiatRates {
		return nil, userErr("%s!", noTickers)
	}
	if token = normalizeToken(token); token != "" {
		t, err := s.currentTokenTicker(token, singleCurrency(currencies))
		if err != nil {
			return nil, err
		}
		if t == nil {
			return nil, userErr("%s!", noTickers)
		}
		out := tokenFiatResult(t, token, currencies)
		return &out, nil
	}
	vs := singleCurrency(currencies)
	t, err := s.currentTicker(vs)
	if err == nil && t == nil {
		t, err = s.db.LastFiatTicker(vs)
	}
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, userErr("%s!", noTickers)
	}
	out := fiatResult(t, currencies)
	return &out, nil
}

// FiatRatesForTimestamps answers getFiatRatesForTimestamps and REST
// multi-tickers: one ticker per timestamp, in the order given; a time
// without any ticker keeps its timestamp and has every requested rate -1.
// With a token, the rates are the token's in each currency.
func (s *core) FiatRatesForTimestamps(_ context.Context, timestamps []int64, currencies []string, token string) (*FiatTickers, error) {
	if err := checkFiatTimestamps(timestamps); err != nil {
		return nil, err
	}
	if err := checkCurrencies(currencies); err != nil {
		return nil, err
	}
	currencies = normalizeCurrencies(currencies)
	token = normalizeToken(token)
	var tickers []*db.FiatTicker
	var err error
	if token != "" {
		tickers, err = s.tokenTickersAt(timestamps, token)
	} else {
		tickers, err = s.tickersAt(timestamps, singleCurrency(currencies))
	}
	if err != nil {
		return nil, err
	}
	out := &FiatTickers{Tickers: make([]FiatTicker, len(timestamps))}
	for i, t := range tickers {
		switch {
		case t == nil:
			out.Tickers[i] = FiatTicker{Timestamp: timestamps[i], Rates: unknownRates(currencies)}
		case token != "":
			out.Tickers[i] = tokenFiatResult(t, token, currencies)
		default:
			out.Tickers[i] = fiatResult(t, currencies)
		}
	}
	return out, nil
}

// FiatRatesForBlock answers REST tickers?block=: the rates at the block's
// time.
func (s *core) FiatRatesForBlock(ctx context.Context, block string, currencies []string, token string) (*FiatTicker, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	_, meta, err := s.resolveBlock(ctx, v, block)
	v.release()
	if _, user := AsUserError(err); user {
		return nil, userErr("Block %s not found", truncate(block, 100))
	}
	if err != nil {
		return nil, err
	}
	tickers, err := s.FiatRatesForTimestamps(ctx, []int64{meta.Time}, currencies, token)
	if err != nil {
		return nil, err
	}
	return &tickers.Tickers[0], nil
}

// FiatRatesTickersList answers getFiatRatesTickersList and REST
// tickers-list: the currencies of the ticker of that time, sorted (with a
// token, of the ticker that has the token's rate).
func (s *core) FiatRatesTickersList(_ context.Context, timestamp int64, token string) (*AvailableVsCurrencies, error) {
	var tickers []*db.FiatTicker
	var err error
	if token = normalizeToken(token); token != "" {
		tickers, err = s.tokenTickersAt([]int64{timestamp}, token)
	} else {
		tickers, err = s.tickersAt([]int64{timestamp}, "")
	}
	if err != nil {
		return nil, err
	}
	t := tickers[0]
	if t == nil {
		return nil, userErr("%s", noTickers)
	}
	list := make([]string, 0, len(t.Rates))
	for c := range t.Rates {
		list = append(list, c)
	}
	sort.Strings(list)
	return &AvailableVsCurrencies{Timestamp: t.Time, Currencies: list}, nil
}

// historyRates sets the Rates of each balance-history bucket to the rates
// at the bucket's start time: all of them when no currency is requested,
// else the requested ones (-1 when unknown). Buckets without any ticker get
// no rates, and nothing is set without fiat rates, as in Blockbook.
func (s *core) historyRates(_ context.Context, hist []BalanceHistory, currencies []string) error {
	if !s.cfg.FiatRates || len(hist) == 0 {
		return nil
	}
	currencies = normalizeCurrencies(currencies)
	times := make([]int64, len(hist))
	for i := range hist {
		times[i] = hist[i].Time
	}
	tickers, err := s.tickersAt(times, "")
	if err != nil {
		return err
	}
	for i, t := range tickers {
		if t != nil {
			hist[i].Rates = fiatResult(t, currencies).Rates
		}
	}
	return nil
}

// secondaryValue values an amount of base units in a fiat currency at the
// current rate (Blockbook uses only the current ticker); false when that
// rate is not known.
func (s *core) secondaryValue(_ context.Context, amount *big.Int, currency string) (float64, bool) {
	currency = strings.ToLower(strings.TrimSpace(currency))
	t, err := s.currentTicker(currency)
	if err != nil {
		s.log.Warn("reading the current fiat rates failed", "err", err)
		return 0, false
	}
	if t == nil || currency == "" {
		return 0, false
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s.backend.Params.Decimals)), nil)
	coins, _ := new(big.Rat).SetFrac(amount, unit).Float64()
	return coins * t.Rates[currency], true
}

// fiatStatus fills the status fields of fiat rates: whether they are
// configured, and the times of the current and the newest daily ticker.
func (s *core) fiatStatus(bb *BlockbookInfo) error {
	if !s.cfg.FiatRates {
		return nil
	}
	bb.HasFiatRates = true
	cur, err := s.fiatCurrent()
	if err != nil {
		return err
	}
	last, err := s.db.LastFiatTicker("")
	if err != nil {
		return err
	}
	var lastTokens *db.FiatTicker
	if s.cfg.TokenFiatRates {
		bb.HasTokenFiatRates = true
		if lastTokens, err = s.db.LastFiatTokenTicker(""); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		t   *db.FiatTicker
		dst **time.Time
	}{{cur, &bb.CurrentFiatRatesTime}, {last, &bb.HistoricalFiatRatesTime}, {lastTokens, &bb.HistoricalTokenFiatRatesTime}} {
		if c.t != nil {
			at := time.Unix(c.t.Time, 0).UTC()
			*c.dst = &at
		}
	}
	return nil
}
