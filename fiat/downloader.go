package fiat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// ErrRunning is returned by Run when the downloader already runs.
var ErrRunning = errors.New("fiat: already running")

// Downloader keeps the fiatRates column family current. Two loops run
// side by side, each making one request at a time: the current rates every
// Period (aligned to multiples of it, as Blockbook) followed by the finer
// hourly and 5-minute series when due (fine.go), and the daily history
// once a UTC day after 01:00 (when the provider has closed the previous
// day) and at start. Failures are logged, counted and retried at the next
// turn; nothing here ever waits for the sync worker or holds its locks.
type Downloader struct {
	db  *db.DB
	cfg Config
	cg  *client
	m   *metrics
	now func() time.Time

	onCurrent   func(*db.FiatTicker)
	wakeCurrent chan struct{}
	// wakeHistory starts a history run early: tokens the index learned
	// since the last run get their history then, not the next day.
	wakeHistory chan struct{}
	running     atomic.Bool
	// booting: the history run in progress is the bootstrap (bootstrap.go);
	// runFailures counts its currencies that failed.
	booting     atomic.Bool
	runFailures atomic.Int64

	// vsFresh, tokFresh: the startup reconcile has just loaded the
	// vs-currency or the platform's token list, so the first history run
	// uses them instead of asking again.
	vsFresh, tokFresh atomic.Bool

	vsMu sync.Mutex
	vs   []string // the supported vs-currencies we keep; nil until fetched

	tokMu    sync.Mutex
	platform []tokenRef // the platform's tokens (coins/list); nil until fetched
	// historyTokens are the tokens the last history run covered.
	historyTokens map[string]bool
	// knownToken selects the tokens to follow (indexedERC20; tests
	// replace it).
	knownToken func(bchain.AddrDesc) (bool, error)
}

// New returns a downloader storing into d; call Run to start it.
func New(d *db.DB, cfg Config) *Downloader {
	cfg.defaults()
	m := newMetrics(cfg.Metrics)
	dl := &Downloader{db: d, cfg: cfg, m: m, now: cfg.Now,
		wakeCurrent: make(chan struct{}, 1), wakeHistory: make(chan struct{}, 1)}
	dl.cg = &client{cfg: &dl.cfg, m: m, sleep: sleepCtx, now: func() time.Time { return dl.now() }}
	dl.knownToken = dl.indexedERC20
	dl.cfg.Log = cfg.Log.With("subsystem", "fiat")
	return dl
}

// OnCurrent registers fn, called (on the downloader's goroutine) with every
// new current ticker once it is stored. Set it before Run.
func (dl *Downloader) OnCurrent(fn func(*db.FiatTicker)) { dl.onCurrent = fn }

// Refresh makes the current-rates loop download now instead of at the end
// of its period; it never blocks.
func (dl *Downloader) Refresh() {
	select {
	case dl.wakeCurrent <- struct{}{}:
	default:
	}
}

// Run downloads until ctx ends, then returns nil.
func (dl *Downloader) Run(ctx context.Context) error {
	if !dl.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer dl.running.Store(false)
	dl.cfg.Log.Info("fiat rates downloader started", "url", dl.cfg.URL, "bootstrap_url", dl.cfg.BootstrapURL, "coin", dl.cfg.Coin, "plan", dl.cfg.Plan,
		"period", dl.cfg.Period.String(), "api_key", dl.cfg.APIKey != "", "platform", dl.cfg.Platform)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dl.historyLoop(ctx)
	}()
	dl.currentLoop(ctx)
	wg.Wait()
	return nil
}

// initialWait is 0 unless a ticker stored less than a period ago (before a
// restart) is current enough: then the first download waits for the next
// period, as Blockbook's does.
func (dl *Downloader) initialWait() time.Duration {
	cur, err := db.ReadFiatCurrent(dl.db)
	if err != nil || cur == nil || dl.now().Unix()-cur.Time >= int64(dl.cfg.Period/time.Second) {
		return 0
	}
	return dl.untilNextPeriod()
}

func (dl *Downloader) currentLoop(ctx context.Context) {
	wait := dl.initialWait()
	for {
		if !waitOrWake(ctx, wait, dl.wakeCurrent) {
			return
		}
		dl.currentCycle(ctx)
		wait = dl.untilNextPeriod()
	}
}

// currentCycle is one turn of the current loop: the current rates, then
// the finer series when due, unless the provider bans this IP (the finer
// series go to the same API; the next turn tries again).
func (dl *Downloader) currentCycle(ctx context.Context) {
	start, turn := time.Now(), dl.now()
	_, err := dl.updateCurrent(ctx)
	if ctx.Err() != nil {
		return
	}
	dl.m.stage("current_tickers", start, err)
	switch {
	case err == nil:
	case errors.Is(err, ErrBanned):
		dl.m.errors.WithLabelValues("current").Inc()
		dl.cfg.Log.Warn("the rate provider bans this IP; no more requests to it until the next period", "err", err)
	default:
		dl.m.errors.WithLabelValues("current").Inc()
		dl.cfg.Log.Warn("downloading current fiat rates failed; retrying next period", "err", err)
	}
	// A ban of the coin's or the tokens' current rates: the finer series
	// go to the same API.
	if !dl.cg.bannedSince(dl.cfg.URL, turn) {
		dl.updateFine(ctx)
	}
}

func (dl *Downloader) historyLoop(ctx context.Context) {
	ctx = lowPriority(ctx) // the current rates go first through a throttle window
	// Blockbook's startup pass: holes in the daily history first.
	dl.reconcileAtStart(ctx)
	for {
		err := dl.historyCycle(ctx)
		wait := dl.untilHistoryDue()
		if err != nil && ctx.Err() == nil {
			dl.m.errors.WithLabelValues("historical").Inc()
			wait = dl.historyRetryWait(err)
			dl.cfg.Log.Warn("downloading fiat rate history failed; retrying later", "err", err, "wait", wait.String())
		}
		if !waitOrWake(ctx, wait, dl.historyWake(err)) {
			return
		}
	}
}

// banBackoff is the history's wait after a ban (Blockbook's
// historicalBanBackoff).
const banBackoff = 30 * time.Minute

// historyRetryWait is the wait after a failed history run: a period, or
// after a ban at least banBackoff, so that a banned IP is not probed again
// every period.
func (dl *Downloader) historyRetryWait(err error) time.Duration {
	if errors.Is(err, ErrBanned) {
		return max(banBackoff, dl.cfg.Period)
	}
	return dl.cfg.Period
}

// historyWake is what may end the wait after a history run early: newly
// learned tokens, except after a ban, whose backoff (like Blockbook's ban
// sleep) only a shutdown ends, so the banned host is not asked again early.
func (dl *Downloader) historyWake(err error) <-chan struct{} {
	if errors.Is(err, ErrBanned) {
		return nil
	}
	return dl.wakeHistory
}

// waitOrWake waits d (0: not at all) or until woken (a nil wake never
// wakes); false when ctx ended.
func waitOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return true
}

// untilNextPeriod is the wait to the next multiple of Period, plus up to
// two seconds so that many servers do not ask at the same instant.
func (dl *Downloader) untilNextPeriod() time.Duration {
	now := dl.now()
	p := dl.cfg.Period
	next := now.Truncate(p).Add(p)
	return next.Sub(now) + time.Duration(rand.Int64N(int64(2*time.Second)))
}

// untilHistoryDue is the wait from now to 01:00 UTC of the next day.
func (dl *Downloader) untilHistoryDue() time.Duration {
	now := dl.now().UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 1, 0, 0, 0, time.UTC)
	return next.Sub(now)
}

// vsCurrencies returns the vs-currencies to download: CoinGecko's supported
// list, restricted to fiat_rates_vs_currencies when set, fetched once (and
// again with reload, at each history run, as Blockbook does).
func (dl *Downloader) vsCurrencies(ctx context.Context, reload bool) ([]string, error) {
	dl.vsMu.Lock()
	defer dl.vsMu.Unlock()
	if dl.vs != nil && !reload {
		return dl.vs, nil
	}
	all, err := dl.cg.supportedVsCurrencies(ctx)
	if err != nil {
		return nil, err
	}
	vs := make([]string, 0, len(all))
	for _, c := range all {
		if validCurrency(c) && (len(dl.cfg.VsCurrencies) == 0 || slices.Contains(dl.cfg.VsCurrencies, c)) {
			vs = append(vs, c)
		}
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("%w: no supported vs-currency (of %d) is in fiat_rates_vs_currencies", ErrMalformed, len(all))
	}
	dl.vs = vs
	return vs, nil
}

// validCurrency accepts what the index can store as a currency name.
func validCurrency(c string) bool { return c != "" && len(c) <= 32 }

// validRate accepts finite rates that are not negative.
func validRate(r float64) bool { return !math.IsNaN(r) && !math.IsInf(r, 0) && r >= 0 }

// updateCurrent downloads and stores the current rates, then tells the
// OnCurrent callback.
func (dl *Downloader) updateCurrent(ctx context.Context) (*db.FiatTicker, error) {
	vs, err := dl.vsCurrencies(ctx, false)
	if err != nil {
		return nil, err
	}
	rates, err := dl.cg.simplePrice(ctx, vs)
	if err != nil {
		return nil, err
	}
	if len(rates) == 0 {
		return nil, fmt.Errorf("%w: simple/price has no rates for coin %q", ErrMalformed, dl.cfg.Coin)
	}
	t := &db.FiatTicker{Time: dl.now().Unix(), Rates: rates}
	if dl.cfg.TokenRates() {
		t.TokenRates = dl.currentTokens(ctx, rates)
	}
	if err := dl.db.WriteFiatCurrent(t); err != nil {
		return nil, err
	}
	dl.m.updated.WithLabelValues("current").Set(float64(t.Time))
	dl.cfg.Log.Debug("current fiat rates updated", "currencies", len(rates))
	if dl.onCurrent != nil {
		dl.onCurrent(t)
	}
	return t, nil
}

// currentTokens downloads the current token rates; when that fails, the
// coin's new rates are stored with the previous token rates (logged and
// counted), so a throttled token request loses neither.
func (dl *Downloader) currentTokens(ctx context.Context, rates map[string]float64) map[string]float64 {
	tr, err := dl.currentTokenRates(ctx, rates)
	if err == nil {
		return tr
	}
	dl.m.errors.WithLabelValues("tokens").Inc()
	dl.cfg.Log.Warn("downloading current token rates failed; keeping the previous ones until the next period", "err", err)
	prev, perr := db.ReadFiatCurrent(dl.db)
	if perr != nil || prev == nil {
		return nil
	}
	return prev.TokenRates
}
