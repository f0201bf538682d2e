package fiat

// The startup reconcile, as Blockbook runs it: before the first history
// run, whole days missing from the daily history of the last year (holes
// left by downtime or failed runs; the newest runs only extend the tail)
// are asked from the bootstrap URL, for every vs-currency and token, and
// stored in one write at the end of the pass (a shutdown, the time budget
// or throttling stores nothing). A currency the mirror fails is logged and
// left out of those days, as in Blockbook; a later scan sees whole days
// only, so it stays missing there. Without a bootstrap URL, during the
// bootstrap, or when reconcileHistoricalAtStartup is false, it does
// nothing.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/openexplorer/blockbook/db"
)

const (
	// reconcileWindowDays is how far back days are repaired;
	// reconcileMaxGapDays missing days or more are reported instead (a
	// gap that long is a fault to look at, not routine catch-up).
	reconcileWindowDays = 365
	reconcileMaxGapDays = 90
	// reconcileTipDays: the newest days belong to the history runs (the
	// still-forming day and yesterday's close).
	reconcileTipDays = 1
)

// errReconcileAborted: the pass ended early (shutdown, its time budget,
// or throttling); nothing was stored.
var errReconcileAborted = errors.New("fiat history reconcile aborted")

// reconcileAtStart runs reconcile within its time budget and logs the
// outcome; it never fails the downloader.
func (dl *Downloader) reconcileAtStart(ctx context.Context) {
	if !dl.cfg.Reconcile {
		dl.cfg.Log.Info("fiat rate history reconcile disabled by reconcileHistoricalAtStartup")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, dl.cfg.ReconcileBudget)
	defer cancel()
	start := time.Now()
	filled, err := dl.reconcile(ctx)
	switch {
	case err == nil:
		dl.cfg.Log.Info("fiat rate history reconciled", "filled", filled, "took", time.Since(start).String())
	case errors.Is(err, errReconcileAborted):
		dl.m.errors.WithLabelValues("reconcile").Inc()
		dl.cfg.Log.Warn("fiat rate history reconcile ended early; nothing stored, the next start tries again", "err", err)
	default:
		dl.m.errors.WithLabelValues("reconcile").Inc()
		dl.cfg.Log.Warn("fiat rate history reconcile failed", "err", err)
	}
}

// reconcile fills the missing days and returns how many rates it stored.
func (dl *Downloader) reconcile(ctx context.Context) (int, error) {
	if dl.cfg.BootstrapURL == "" {
		return 0, nil
	}
	boot, _, err := dl.bootstrapInProgress()
	if err != nil || boot {
		return 0, err // the bootstrap fills the whole history
	}
	missing, earliest, err := dl.missingDays()
	if err != nil || len(missing) == 0 {
		return 0, err
	}
	if len(missing) >= reconcileMaxGapDays {
		dl.m.errors.WithLabelValues("reconcile").Inc()
		dl.cfg.Log.Warn("fiat rate history misses too many days to repair at start; look at why", "missing_days", len(missing), "window_days", reconcileWindowDays)
		return 0, nil
	}
	today := dayStart(dl.now().Unix())
	days := strconv.Itoa(min(int((today-earliest)/secondsPerDay)+1, reconcileWindowDays))
	dl.cfg.Log.Info("fiat rate history has holes; repairing them", "missing_days", len(missing),
		"earliest", time.Unix(earliest, 0).UTC().Format(time.DateOnly), "days", days)
	vs, err := dl.vsCurrencies(ctx, true)
	if err != nil {
		return 0, reconcileErr(ctx, err)
	}
	rows := make(map[int64]*db.FiatTicker, len(missing))
	filled := 0
	for _, cur := range vs {
		prices, err := dl.cg.marketChart(ctx, dl.cfg.Coin, cur, days)
		if err != nil {
			if rerr := reconcileErr(ctx, err); errors.Is(rerr, errReconcileAborted) {
				return 0, rerr
			}
			dl.cfg.Log.Warn("fiat rate history reconcile: a currency failed", "currency", cur, "err", err)
			continue
		}
		filled += fillDays(prices, missing, func(ts int64, rate float64) bool {
			row := rows[ts]
			if row == nil {
				row = &db.FiatTicker{Time: ts, Rates: map[string]float64{}}
				rows[ts] = row
			}
			row.Rates[cur] = rate
			return true
		})
		if err := dl.cg.sleep(ctx, dl.historyGap()); err != nil {
			return 0, reconcileErr(ctx, err)
		}
	}
	if dl.cfg.TokenRates() {
		n, err := dl.reconcileTokens(ctx, days, missing, rows)
		if err != nil {
			return 0, err
		}
		filled += n
	}
	out := make([]*db.FiatTicker, 0, len(rows))
	for _, r := range rows {
		if len(r.Rates) > 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return 0, nil
	}
	if err := dl.db.WriteFiatTickers(out); err != nil {
		return 0, fmt.Errorf("storing %d repaired days: %w", len(out), err)
	}
	dl.m.updated.WithLabelValues("historical").Set(float64(dl.now().Unix()))
	return filled, nil
}

// reconcileTokens adds the tracked tokens' rates to the repaired rows, in
// coins with the row's own coin rates (as the history runs store them).
func (dl *Downloader) reconcileTokens(ctx context.Context, days string, missing map[int64]bool, rows map[int64]*db.FiatTicker) (int, error) {
	tokens, err := dl.trackedTokens(ctx, true)
	if err != nil {
		return 0, reconcileErr(ctx, err)
	}
	filled := 0
	for _, t := range tokens {
		prices, err := dl.cg.marketChart(ctx, t.id, dl.cfg.PlatformVsCurrency, days)
		if err != nil {
			if rerr := reconcileErr(ctx, err); errors.Is(rerr, errReconcileAborted) {
				return 0, rerr
			}
			dl.cfg.Log.Warn("fiat rate history reconcile: a token failed", "token", t.contract, "err", err)
			continue
		}
		filled += fillDays(prices, missing, func(ts int64, rate float64) bool {
			row := rows[ts]
			if row == nil {
				return false // no coin rates that day
			}
			v, ok := dl.toCoins(rate, row.Rates)
			if !ok {
				return false
			}
			if row.TokenRates == nil {
				row.TokenRates = map[string]float64{}
			}
			row.TokenRates[t.contract] = v
			return true
		})
		if err := dl.cg.sleep(ctx, dl.historyGap()); err != nil {
			return 0, reconcileErr(ctx, err)
		}
	}
	return filled, nil
}

// reconcileErr marks err as an abort when ctx ended or the provider kept
// throttling: the pass then stores nothing.
func reconcileErr(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, ErrThrottled) {
		return fmt.Errorf("%w: %w", errReconcileAborted, err)
	}
	return err
}

// fillDays calls set for the chart's whole-day points with a rate whose
// day is missing and counts those set accepted.
func fillDays(prices [][2]float64, missing map[int64]bool, set func(ts int64, rate float64) bool) int {
	n := 0
	for _, p := range prices {
		ts, rate := int64(p[0]), p[1]
		if ts > 100_000_000_000 {
			ts /= 1000
		}
		if ts <= 0 || ts > math.MaxUint32 || ts%secondsPerDay != 0 || rate <= 0 || !validRate(rate) || !missing[ts] {
			continue
		}
		if set(ts, rate) {
			n++
		}
	}
	return n
}

func dayStart(t int64) int64 { return t - t%secondsPerDay }

// missingDays returns the whole days (00:00 UTC) without a history row
// from the oldest stored day of the window (or the window's start, when
// the history stops before it) to the last day the history runs do not
// own, and the earliest of them. None when nothing is stored.
func (dl *Downloader) missingDays() (missing map[int64]bool, earliest int64, err error) {
	today := dayStart(dl.now().Unix())
	windowStart := today - reconcileWindowDays*secondsPerDay
	lastDay := today - (reconcileTipDays+1)*secondsPerDay
	times, err := db.FiatTickerTimes(dl.db, windowStart)
	if err != nil {
		return nil, 0, err
	}
	present := make(map[int64]bool, len(times))
	start := int64(0)
	for _, t := range times {
		if t%secondsPerDay != 0 || t > lastDay {
			continue
		}
		present[t] = true
		if start == 0 {
			start = t // times ascend
		}
	}
	if start == 0 {
		last, err := dl.db.LastFiatTicker("")
		if err != nil || last == nil || last.Time >= windowStart {
			// Nothing stored, or only recent days: no hole.
			return nil, 0, err
		}
		start = windowStart // stored history ends before the window
	}
	missing = map[int64]bool{}
	for d := start; d <= lastDay; d += secondsPerDay {
		if !present[d] {
			missing[d] = true
			if earliest == 0 {
				earliest = d
			}
		}
	}
	return missing, earliest, nil
}
