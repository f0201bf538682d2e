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

// Blockbook's range kinds of a series' daily fetch (the range label of
// blockbook_coingecko_range_requests), from resolveHistoricalDays.
const (
	rangeHistorical = "historical" // nothing stored, in the bootstrap: the whole history
	rangeTip        = "tip"        // one day missing (yesterday's close)
	rangeBackfill   = "backfill"   // 2 to historyCapDays days missing
	rangeCapped     = "capped"     // nothing stored outside the bootstrap, or more missing: historyCapDays
)

// historyCapDays caps every daily fetch outside the bootstrap, whatever
// the plan, as Blockbook's coingeckoHistoryDaysLimit: a series first seen
// after the bootstrap, or stored last more than a year ago, gets one year.
const historyCapDays = 365

// series is one daily series: the coin (contract "") in vs, or a token
// (its CoinGecko id and contract) in platformVsCurrency.
type series struct {
	id, vs, contract string
}

func (s series) String() string {
	if s.contract != "" {
		return "token " + s.contract
	}
	return s.vs
}

// phaseOf is the metrics' phase of a range kind (Blockbook's phaseForRange).
func phaseOf(kind string) string {
	switch kind {
	case rangeTip:
		return phaseTip
	case rangeHistorical:
		return phaseBootstrap
	}
	return phaseBackfill
}

// historyDays is how many days of history to request for a series whose
// newest stored day is last, and the range's kind: "" when up to date.
// With nothing stored, the bootstrap (bootstrap.go) asks the whole history,
// "max", from the bootstrap URL (without one, from the API, the range the
// plan allows); outside it a series asks historyCapDays. With days stored,
// the days since, capped likewise.
func (dl *Downloader) historyDays(last *db.FiatTicker) (days, kind string) {
	if last == nil {
		if !dl.booting.Load() {
			return strconv.Itoa(historyCapDays), rangeCapped
		}
		if limit := dl.cfg.historyDaysLimit(); limit > 0 && dl.cfg.BootstrapURL == "" {
			return strconv.Itoa(limit), rangeHistorical
		}
		return "max", rangeHistorical
	}
	d := int(dl.now().Unix()-last.Time) / secondsPerDay
	switch {
	case d <= 0:
		return "", ""
	case d == 1:
		return "1", rangeTip
	case d > historyCapDays:
		return strconv.Itoa(historyCapDays), rangeCapped
	}
	return strconv.Itoa(d), rangeBackfill
}

// chartPoint reads a market chart's [time, rate] point: CoinGecko's
// milliseconds as seconds, and false for a time or rate the index cannot
// keep (a 0 rate means no trading data).
func chartPoint(p [2]float64) (ts int64, rate float64, ok bool) {
	ts, rate = int64(p[0]), p[1]
	if ts > 100_000_000_000 { // milliseconds, as CoinGecko sends them
		ts /= 1000
	}
	return ts, rate, ts > 0 && ts <= math.MaxUint32 && rate > 0 && validRate(rate)
}

// dayPoint is chartPoint for daily history: only whole days (Blockbook's
// rule; the last point of a daily chart is "now").
func dayPoint(p [2]float64) (ts int64, rate float64, ok bool) {
	ts, rate, ok = chartPoint(p)
	return ts, rate, ok && ts%secondsPerDay == 0
}

// fill sets s's daily points of prices in rows, reading the days it lacks
// from the index; only, when not nil, restricts them to its days. A
// token's point goes only into a day with the coin's rates, converted with
// the coin's rate of that day (noBase counts those without). written counts
// the points set.
func (dl *Downloader) fill(rows map[int64]*db.FiatTicker, prices [][2]float64, s series, only map[int64]bool) (written, noBase int, err error) {
	for _, p := range prices {
		ts, rate, ok := dayPoint(p)
		if !ok || (only != nil && !only[ts]) {
			continue
		}
		row := rows[ts]
		if row == nil {
			if row, err = db.ReadFiatTicker(dl.db, ts); err != nil {
				return written, noBase, err
			}
			if row == nil && s.contract == "" {
				row = &db.FiatTicker{Time: ts, Rates: map[string]float64{}}
			}
		}
		if !dl.setRate(row, s, rate) {
			noBase++
			continue
		}
		rows[ts] = row
		written++
	}
	return written, noBase, nil
}

// setRate sets s's rate in row; false for a token's rate in a day without
// the coin's rates (nil row) to convert it with.
func (dl *Downloader) setRate(row *db.FiatTicker, s series, rate float64) bool {
	if s.contract == "" {
		row.Rates[s.vs] = rate
		return true
	}
	if row == nil {
		return false
	}
	v, ok := dl.toCoins(rate, row.Rates)
	if !ok {
		return false
	}
	if row.TokenRates == nil {
		row.TokenRates = map[string]float64{}
	}
	row.TokenRates[s.contract] = v
	return true
}

// seriesHistory downloads the missing days of one series and stores them
// (so a restart resumes after it); requested is false when nothing was
// missing.
func (dl *Downloader) seriesHistory(ctx context.Context, s series) (requested bool, err error) {
	var last *db.FiatTicker
	if s.contract == "" {
		last, err = dl.db.LastFiatTicker(s.vs)
	} else {
		last, err = dl.db.LastFiatTokenTicker(s.contract)
	}
	if err != nil {
		return false, err
	}
	days, kind := dl.historyDays(last)
	if days == "" {
		return false, nil
	}
	dl.m.cgRanges.WithLabelValues(kind).Inc()
	prices, err := dl.cg.marketChart(ctx, s.id, s.vs, days)
	if err != nil {
		return true, err
	}
	rows := map[int64]*db.FiatTicker{}
	written, noBase, err := dl.fill(rows, prices, s, nil)
	if err != nil {
		return true, err
	}
	phase := phaseOf(kind)
	dl.m.unableTo(phase, unableNoBaseTicker, noBase)
	if len(rows) == 0 {
		return true, nil
	}
	if err := dl.db.WriteFiatTickers(tickerList(rows)); err != nil {
		return true, fmt.Errorf("storing %d days of %s: %w", len(rows), s, err)
	}
	tokens := 0
	if s.contract != "" && written > 0 {
		tokens = 1
	}
	dl.m.fetched(phase, written, tokens)
	return true, nil
}

// tickerList is rows' tickers that have a rate.
func tickerList(rows map[int64]*db.FiatTicker) []*db.FiatTicker {
	out := make([]*db.FiatTicker, 0, len(rows))
	for _, r := range rows {
		if len(r.Rates) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// runSeries brings each series up to date in turn, spacing the requests.
// A series whose request fails is logged (and counted in runFailures) and
// retried next run; running into the plan's history range limit ends the
// run quietly, persistent throttling, a ban or ctx ending ends it with the
// error.
func (dl *Downloader) runSeries(ctx context.Context, list []series) (updated, failed int, err error) {
	for _, s := range list {
		if err := ctx.Err(); err != nil {
			return updated, failed, err
		}
		requested, err := dl.seriesHistory(ctx, s)
		switch {
		case err == nil:
			if requested {
				updated++
			}
		case isRangeLimit(err):
			dl.runFailures.Add(1)
			dl.cfg.Log.Warn("fiat rate history beyond the plan's range; skipping the other series until the next run", "series", s.String(), "err", err)
			return updated, failed, nil
		case errors.Is(err, ErrThrottled), errors.Is(err, ErrBanned), ctx.Err() != nil:
			return updated, failed, err
		default:
			failed++
			dl.runFailures.Add(1) // a bootstrap run is complete only if none failed
			dl.cfg.Log.Warn("fiat rate history of a series failed; retrying next run", "series", s.String(), "id", s.id, "err", err)
		}
		if requested {
			if err := dl.cg.sleep(ctx, dl.historyGap()); err != nil {
				return updated, failed, err
			}
		}
	}
	return updated, failed, nil
}

// updateHistory brings the daily history of every vs-currency up to date,
// one market_chart request per currency that lacks days.
func (dl *Downloader) updateHistory(ctx context.Context) error {
	vs, err := dl.vsCurrencies(ctx, !dl.vsFresh.Swap(false))
	if err != nil {
		return err
	}
	list := make([]series, len(vs))
	for i, cur := range vs {
		list[i] = series{id: dl.cfg.Coin, vs: cur}
	}
	updated, failed, err := dl.runSeries(ctx, list)
	if err != nil {
		return err
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
