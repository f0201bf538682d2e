package fiat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/openexplorer/blockbook/db"
)

const secondsPerDay = 24 * 60 * 60

// updateHistory brings the daily history of every vs-currency up to date,
// one market_chart request per currency that lacks days, storing each
// currency's days as they arrive (so a restart resumes where this stopped).
// A currency whose request fails is logged and retried next run; running
// into the plan's history range limit or persistent throttling ends the run.
func (dl *Downloader) updateHistory(ctx context.Context) error {
	vs, err := dl.vsCurrencies(ctx, true)
	if err != nil {
		return err
	}
	updated, failed := 0, 0
	for _, cur := range vs {
		if err := ctx.Err(); err != nil {
			return err
		}
		requested, err := dl.currencyHistory(ctx, cur)
		switch {
		case err == nil:
			if requested {
				updated++
			}
		case isRangeLimit(err):
			dl.runFailures.Add(1)
			dl.cfg.Log.Warn("fiat rate history beyond the plan's range; skipping the other currencies until the next run", "currency", cur, "err", err)
			return nil
		case errors.Is(err, ErrThrottled), errors.Is(err, context.Canceled):
			return err
		default:
			failed++
			dl.runFailures.Add(1)
			dl.cfg.Log.Warn("fiat rate history of a currency failed; retrying next run", "currency", cur, "err", err)
		}
		if requested {
			if err := dl.cg.sleep(ctx, dl.historyGap()); err != nil {
				return err
			}
		}
	}
	last, err := dl.db.LastFiatTicker("")
	if err != nil {
		return err
	}
	if last != nil {
		dl.m.updated.WithLabelValues("historical").Set(float64(dl.now().Unix()))
	}
	if failed > 0 {
		dl.m.errors.WithLabelValues("historical").Add(float64(failed))
	}
	dl.cfg.Log.Info("fiat rate history updated", "currencies", len(vs), "downloaded", updated, "failed", failed, "last_day", lastDay(last))
	return nil
}

func lastDay(t *db.FiatTicker) string {
	if t == nil {
		return "none"
	}
	return time.Unix(t.Time, 0).UTC().Format(time.DateOnly)
}

// historyDays is how many days of history to request for a currency whose
// newest stored day is last: "" when it is up to date, "max" from the
// bootstrap URL during the bootstrap (bootstrap.go), else the whole range
// the plan allows when nothing is stored (365 days on the free plan, "max"
// on pro, as Blockbook), else the days since, capped likewise.
func (dl *Downloader) historyDays(last *db.FiatTicker) string {
	limit := dl.cfg.historyDaysLimit()
	if last == nil {
		if dl.booting.Load() && dl.cfg.BootstrapURL != "" {
			return "max"
		}
		if limit > 0 {
			return strconv.Itoa(limit)
		}
		return "max"
	}
	d := int(dl.now().Unix()-last.Time) / secondsPerDay
	if d <= 0 {
		return ""
	}
	if limit > 0 && d > limit {
		d = limit
	}
	return strconv.Itoa(d)
}

// currencyHistory downloads the missing days of one currency and merges
// them into the stored days; requested is false when nothing was missing.
func (dl *Downloader) currencyHistory(ctx context.Context, cur string) (requested bool, err error) {
	last, err := dl.db.LastFiatTicker(cur)
	if err != nil {
		return false, err
	}
	days := dl.historyDays(last)
	if days == "" {
		return false, nil
	}
	prices, err := dl.cg.marketChart(ctx, dl.cfg.Coin, cur, days)
	if err != nil {
		return true, err
	}
	var tickers []*db.FiatTicker
	for _, p := range prices {
		ts, rate := int64(p[0]), p[1]
		if ts > 100_000_000_000 { // milliseconds, as CoinGecko sends them
			ts /= 1000
		}
		// Only whole days with a rate (Blockbook's rule): the last point
		// of a daily chart is "now", and a 0 means no trading data.
		if ts <= 0 || ts > math.MaxUint32 || ts%secondsPerDay != 0 || rate <= 0 || !validRate(rate) {
			continue
		}
		t, err := db.ReadFiatTicker(dl.db, ts)
		if err != nil {
			return true, err
		}
		if t == nil {
			t = &db.FiatTicker{Time: ts, Rates: map[string]float64{}}
		}
		t.Rates[cur] = rate
		tickers = append(tickers, t)
	}
	if len(tickers) == 0 {
		return true, nil
	}
	if err := dl.db.WriteFiatTickers(tickers); err != nil {
		return true, fmt.Errorf("storing %d days of %s: %w", len(tickers), cur, err)
	}
	return true, nil
}
