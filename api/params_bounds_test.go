package api

import (
	"context"
	"strings"
	"testing"
)

// wantTooMany checks that err is a user error naming the bound.
func wantTooMany(t *testing.T, err error, what string) {
	t.Helper()
	ue, ok := AsUserError(err)
	if !ok || !strings.HasPrefix(ue.Msg, "Too many "+what+":") {
		t.Fatalf("got %v, want a user error about too many %s", err, what)
	}
}

func TestFiatListBounds(t *testing.T) {
	s := fiatService(t, true)
	ctx := context.Background()
	ts := make([]int64, MaxFiatTimestamps+1)
	for i := range ts {
		ts[i] = fday(0) + int64(i)
	}
	_, err := s.FiatRatesForTimestamps(ctx, ts, nil, "")
	wantTooMany(t, err, "timestamps")
	// The bound itself is accepted and answered in full.
	res, err := s.FiatRatesForTimestamps(ctx, ts[:MaxFiatTimestamps], []string{"usd"}, "")
	if err != nil || len(res.Tickers) != MaxFiatTimestamps {
		t.Fatalf("at the bound: %v, %d tickers", err, len(res.Tickers))
	}
	cur := make([]string, MaxCurrencies+1)
	for i := range cur {
		cur[i] = "c" + strings.Repeat("x", i%5)
	}
	_, err = s.FiatRatesForTimestamps(ctx, ts[:1], cur, "")
	wantTooMany(t, err, "currencies")
	_, err = s.CurrentFiatRates(ctx, cur, "")
	wantTooMany(t, err, "currencies")
	wantTooMany(t, BalanceHistoryQuery{Currencies: cur}.check(), "currencies")
	if err := (BalanceHistoryQuery{Currencies: cur[:MaxCurrencies]}).check(); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	if _, err := s.CurrentFiatRates(ctx, cur[:MaxCurrencies], ""); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
}

func TestBlockHashRange(t *testing.T) {
	s := fiatService(t, true)
	ctx := context.Background()
	for _, h := range []int{-1, int(MaxBlockHeight) + 1, 1 << 40} {
		_, err := s.BlockHash(ctx, h)
		ue, ok := AsUserError(err)
		if !ok || !strings.Contains(ue.Msg, "out of range") {
			t.Errorf("height %d: %v, want out of range", h, err)
		}
	}
	// Valid heights the index does not hold keep the empty answer.
	for _, h := range []int{5_000, int(MaxBlockHeight)} {
		if hash, err := s.BlockHash(ctx, h); err != nil || hash != "" {
			t.Errorf("height %d: %q, %v; want \"\"", h, hash, err)
		}
	}
}
