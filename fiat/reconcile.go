package fiat

// The startup reconcile, as Blockbook runs it: before the first history
// run, whole days missing from the daily history of the last year (holes
// left by downtime or failed runs; the newest runs only extend the tail)
// are asked from the bootstrap URL, for every vs-currency and token, and
// stored in one write at the end of the pass (a shutdown, the time budget
// throttling or a ban stores nothing). A currency the mirror fails is logged and
// left out of those days, as in Blockbook; a later scan sees whole days
// only, so it stays missing there. Without a bootstrap URL, during the
// bootstrap, or when reconcileHistoricalAtStartup is false, it does
// nothing.

import (
	"context"
	"errors"
	"fmt"
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
// or throttling); nothing was stored. A ban fails it instead, as in
// Blockbook.
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
	// Blockbook's stage is an error only when the pass failed, not when
	// it was cut short.
	dl.m.stage("reconcile", start, stageErr(err, errReconcileAborted))
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
		dl.m.unableTo(phaseReconcile, unableGapTooLarge, len(missing))
		dl.cfg.Log.Warn("fiat rate history misses too many days to repair at start; look at why", "missing_days", len(missing), "window_days", reconcileWindowDays)
		return 0, nil
	}
	today := dayStart(dl.now().Unix())
	days := strconv.Itoa(min(int((today-earliest)/secondsPerDay)+1, reconcileWindowDays))
	list, err := dl.reconcileSeries(ctx)
	if err != nil {
		return 0, reconcileErr(ctx, err)
	}
	dl.cfg.Log.Info("fiat rate history has holes; repairing them", "missing_days", len(missing),
		"earliest", time.Unix(earliest, 0).UTC().Format(time.DateOnly), "days", days, "series", len(list))
	rows := make(map[int64]*db.FiatTicker, len(missing))
	n, err := dl.reconcileFetch(ctx, list, days, missing, rows)
	if err != nil {
		return 0, err
	}
	if out := tickerList(rows); len(out) > 0 {
		if err := dl.db.WriteFiatTickers(out); err != nil {
			return 0, fmt.Errorf("storing %d repaired days: %w", len(out), err)
		}
		dl.m.updated.WithLabelValues("historical").Set(float64(dl.now().Unix()))
	}
	// Counted once stored: a failed write fetched nothing for the index.
	dl.m.fetched(phaseReconcile, n.filled, n.tokens)
	dl.m.unableTo(phaseReconcile, unableNoBaseTicker, n.noBase)
	return n.filled, nil
}

// reconcileCounts is what a reconcile pass fetched: rates set, token
// series with a day set, token days without the coin's rate.
type reconcileCounts struct{ filled, tokens, noBase int }

// reconcileSeries is the series to repair: the coin in every vs-currency,
// then the tracked tokens (whose days need the coin's rates). The lists
// are loaded afresh, and the first history run then uses them.
func (dl *Downloader) reconcileSeries(ctx context.Context) ([]series, error) {
	vs, err := dl.vsCurrencies(ctx, true)
	if err != nil {
		return nil, err
	}
	dl.vsFresh.Store(true)
	list := make([]series, 0, len(vs))
	for _, cur := range vs {
		list = append(list, series{id: dl.cfg.Coin, vs: cur})
	}
	if !dl.cfg.TokenRates() {
		return list, nil
	}
	tokens, err := dl.trackedTokens(ctx, true)
	if err != nil {
		return nil, err
	}
	dl.tokFresh.Store(true)
	return append(list, dl.tokenSeries(tokens)...), nil
}

// reconcileFetch asks each series' last days from the bootstrap URL and
// sets its missing days in rows; the caller counts them once stored. A
// series that fails is logged and left out, as in Blockbook; a ban,
// throttling, the budget or a shutdown end the pass (then nothing is
// stored).
func (dl *Downloader) reconcileFetch(ctx context.Context, list []series, days string, missing map[int64]bool, rows map[int64]*db.FiatTicker) (reconcileCounts, error) {
	abort := func(i int, err error) (reconcileCounts, error) {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			dl.m.unableTo(phaseReconcile, unableBudgetExhausted, len(list)-i)
		}
		return reconcileCounts{}, reconcileErr(ctx, err)
	}
	var n reconcileCounts
	for i, s := range list {
		prices, err := dl.cg.marketChart(ctx, s.id, s.vs, days)
		switch {
		case err == nil:
		case ctx.Err() != nil, errors.Is(err, ErrThrottled):
			return abort(i, err)
		case errors.Is(err, ErrBanned):
			dl.m.unableTo(phaseReconcile, unableProviderBanned, 1)
			return reconcileCounts{}, err
		default:
			dl.m.unableTo(phaseReconcile, unableFetchFailed, 1)
			dl.cfg.Log.Warn("fiat rate history reconcile: a series failed", "series", s.String(), "err", err)
			continue
		}
		written, nb, err := dl.fill(rows, prices, s, missing)
		if err != nil {
			return reconcileCounts{}, err
		}
		n.filled += written
		n.noBase += nb
		if s.contract != "" && written > 0 {
			n.tokens++
		}
		if err := dl.cg.sleep(ctx, dl.historyGap()); err != nil {
			return abort(i+1, err)
		}
	}
	return n, nil
}

// reconcileErr marks err as an abort when ctx ended or the provider kept
// throttling: the pass then stores nothing.
func reconcileErr(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, ErrThrottled) {
		return fmt.Errorf("%w: %w", errReconcileAborted, err)
	}
	return err
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
