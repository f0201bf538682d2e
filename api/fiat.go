package api

import (
	"context"
	"math/big"
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

// historyRates sets the Rates of each balance-history bucket to the fiat
// rates of the requested currencies at the bucket's time (all currencies
// when none is named). Without a rate source it leaves them out.
func (s *UtxoService) historyRates(_ context.Context, _ []BalanceHistory, _ []string) error {
	return nil
}

// secondaryValue values an amount of base units in a fiat currency at the
// current rate; false when the rate is not known.
func (s *UtxoService) secondaryValue(_ context.Context, _ *big.Int, _ string) (float64, bool) {
	return 0, false
}
