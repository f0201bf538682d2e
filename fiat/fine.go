package fiat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openexplorer/blockbook/db"
)

// Finer tickers, as Blockbook keeps them beside the daily history: the
// coin's rate in usd (Blockbook's highGranularityVsCurrency) at hourly
// points for 90 days and at 5-minute points for one day, from
// coins/{id}/market_chart without interval (CoinGecko then answers hourly
// points for days=90 and 5-minute points for days=1). The answers derive
// the other currencies from the daily ratios (api/fiat_fine.go). Tokens
// have none: Blockbook prices them from the daily and current tickers only.

// FineVsCurrency is the one currency of the finer tickers.
const FineVsCurrency = "usd"

// fineSeries are downloaded after each current download once due: when
// the newest stored point is older than due seconds (Blockbook waits two
// hours for hourly points, 15 minutes for 5-minute ones, so that the
// provider has the next points ready).
var fineSeries = []struct {
	s     db.FiatSeries
	days  string
	due   int64
	stage string // Blockbook's stage of the update duration
}{
	{db.FiatHourly, "90", 2 * 3600, "hourly_tickers"},
	{db.FiatFiveMinutes, "1", 3 * 300, "five_minutes_tickers"},
}

// updateFine downloads the finer series that are due. It needs usd among
// the kept currencies (the derived rates come from the daily usd rate).
func (dl *Downloader) updateFine(ctx context.Context) {
	vs, err := dl.vsCurrencies(ctx, false)
	if err != nil || !slices.Contains(vs, FineVsCurrency) {
		return // the current download reported it, or usd is not kept
	}
	for _, f := range fineSeries {
		last, err := dl.db.LastFiatSeriesSlot(f.s)
		if err == nil && dl.now().Unix() < last+f.due {
			continue
		}
		if err == nil {
			start := time.Now()
			err = dl.updateSeries(ctx, f.s, f.days)
			if ctx.Err() == nil {
				dl.m.stage(f.stage, start, err)
			}
		}
		if err != nil && ctx.Err() == nil {
			dl.m.errors.WithLabelValues(f.s.Name()).Inc()
			dl.cfg.Log.Warn("downloading finer fiat rates failed; retrying next period", "series", f.s.Name(), "err", err)
			if errors.Is(err, ErrBanned) {
				return // the other series would be banned too
			}
		}
	}
}

// updateSeries downloads one series and replaces the stored one, dropping
// what is older than the series keeps.
func (dl *Downloader) updateSeries(ctx context.Context, s db.FiatSeries, days string) error {
	prices, err := dl.cg.chart(ctx, dl.cfg.Coin, FineVsCurrency, days, "")
	if err != nil {
		return err
	}
	// The last point is "now", off the grid (Blockbook drops it too).
	if len(prices) < 3 {
		return fmt.Errorf("%w: %s chart has %d points", ErrMalformed, s.Name(), len(prices))
	}
	tickers := make([]*db.FiatTicker, 0, len(prices)-1)
	for _, p := range prices[:len(prices)-1] {
		ts, rate, ok := chartPoint(p)
		if !ok {
			continue
		}
		if n := len(tickers); n > 0 && ts <= tickers[n-1].Time {
			return fmt.Errorf("%w: %s chart points out of order", ErrMalformed, s.Name())
		}
		tickers = append(tickers, &db.FiatTicker{Time: ts, Rates: map[string]float64{FineVsCurrency: rate}})
	}
	if len(tickers) < 2 {
		return fmt.Errorf("%w: %s chart has %d usable points", ErrMalformed, s.Name(), len(tickers))
	}
	// A coarser chart (daily points where hourly ones were asked) would
	// pass for the finer series; refuse it.
	if span := tickers[len(tickers)-1].Time - tickers[0].Time; span/int64(len(tickers)-1) > 2*s.Step() {
		return fmt.Errorf("%w: %s chart is coarser than its step (%d points over %d s)", ErrMalformed, s.Name(), len(tickers), span)
	}
	now := dl.now().Unix()
	if err := dl.db.WriteFiatSeries(s, tickers, s.FiatSlot(now-s.Keep())); err != nil {
		return fmt.Errorf("storing %d %s points: %w", len(tickers), s.Name(), err)
	}
	dl.m.updated.WithLabelValues(s.Name()).Set(float64(now))
	dl.cfg.Log.Debug("finer fiat rates updated", "series", s.Name(), "points", len(tickers))
	return nil
}
