package api

import (
	"context"
	"strings"
)

// Fiat rates. No rate source is wired in yet (a CoinGecko downloader comes
// with its own issue), so these answer the way Blockbook answers when it
// has no tickers: clean user errors, and -1 for every requested rate.

const noTickers = "No tickers found"

// CurrentFiatRates answers getCurrentFiatRates.
func (s *UtxoService) CurrentFiatRates(_ context.Context, _ []string, _ string) (*FiatTicker, error) {
	return nil, userErr("%s!", noTickers)
}

// FiatRatesForTimestamps answers getFiatRatesForTimestamps: each timestamp
// with its requested currencies at -1 (unknown).
func (s *UtxoService) FiatRatesForTimestamps(_ context.Context, timestamps []int64, currencies []string, _ string) (*FiatTickers, error) {
	if len(timestamps) == 0 {
		return nil, userErr("No timestamps provided")
	}
	out := &FiatTickers{Tickers: make([]FiatTicker, len(timestamps))}
	for i, ts := range timestamps {
		rates := map[string]float64{}
		for _, c := range currencies {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" {
				rates[c] = -1
			}
		}
		out.Tickers[i] = FiatTicker{Timestamp: ts, Rates: rates}
	}
	return out, nil
}

// FiatRatesTickersList answers getFiatRatesTickersList.
func (s *UtxoService) FiatRatesTickersList(_ context.Context, _ int64, _ string) (*AvailableVsCurrencies, error) {
	return nil, userErr("%s", noTickers)
}
