package fiat

// The history bootstrap, as Blockbook runs it: the first population of
// the daily history asks each vs-currency's whole history ("max") from
// the bootstrap URL (a mirror of the API, fiat_rates_params' url). A
// marker in the index says whether the bootstrap is complete and counts
// failed runs, so a restart resumes it (currencies already stored ask only
// their missing days), and after maxBootstrapAttempts failed runs it is
// given up (marked complete), so full-history downloads are not retried
// forever; what is missing then is asked as later days are, bounded by the
// plan's range.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openexplorer/blockbook/db"
)

// maxBootstrapAttempts is how many failed runs end the bootstrap
// (Blockbook's).
const maxBootstrapAttempts = 3

// errBootstrapIncomplete: some vs-currency's history failed in a bootstrap
// run.
var errBootstrapIncomplete = errors.New("fiat rate history bootstrap incomplete: one or more currencies failed")

// bootstrapInProgress reads the marker; without one (a new index, or one
// from before the marker), the bootstrap is due when no history is stored
// (Blockbook's rule). found tells whether the marker exists.
func (dl *Downloader) bootstrapInProgress() (inProgress, found bool, err error) {
	st, found, err := db.ReadFiatBootstrap(dl.db)
	if err != nil || found {
		return !st.Complete, found, err
	}
	last, err := dl.db.LastFiatTicker("")
	if err != nil {
		return false, false, err
	}
	return last == nil, false, nil
}

// ensureBootstrapState writes the marker when there is none, so that a
// bootstrap interrupted after its first stored days resumes as one.
func (dl *Downloader) ensureBootstrapState() (inProgress bool, err error) {
	inProgress, found, err := dl.bootstrapInProgress()
	if err != nil || found {
		return inProgress, err
	}
	return inProgress, dl.db.WriteFiatBootstrap(db.FiatBootstrap{Complete: !inProgress})
}

// historyGap spaces history requests: the bootstrap URL has its own
// interval (it is not the plan's rate-limited API).
func (dl *Downloader) historyGap() time.Duration {
	if dl.cfg.BootstrapURL != "" {
		return dl.cfg.BootstrapGap
	}
	return dl.cfg.RequestGap
}

// historyCycle is one history run: the coin's days, then the tokens' (into
// the coin's days), with the bootstrap's bookkeeping. A bootstrap run
// completes when every currency's and the tokens' runs succeeded; a run
// ended by ctx (shutdown) is not counted as failed. The error is nil when
// the next run is due the next day.
func (dl *Downloader) historyCycle(ctx context.Context) error {
	// The reconcile's lists serve this run only: when it skipped the
	// token pass, the next run (a period or a day later) reloads them.
	defer dl.vsFresh.Store(false)
	defer dl.tokFresh.Store(false)
	boot, err := dl.ensureBootstrapState()
	if err != nil {
		return fmt.Errorf("fiat bootstrap marker: %w", err)
	}
	dl.booting.Store(boot)
	defer dl.booting.Store(false)
	dl.runFailures.Store(0)
	if boot {
		dl.cfg.Log.Info("fiat rate history bootstrap running", "bootstrap_url", dl.cfg.BootstrapURL != "")
	}
	start := time.Now()
	err = dl.updateHistory(ctx)
	if ctx.Err() == nil {
		// A bootstrap run with a failed currency is Blockbook's error
		// (bootstrap incomplete), though updateHistory only counts it.
		serr := err
		if serr == nil && boot && dl.runFailures.Load() > 0 {
			serr = errBootstrapIncomplete
		}
		dl.m.stage("historical_tickers", start, serr)
	}
	if dl.cfg.TokenRates() && ctx.Err() == nil && !errors.Is(err, ErrThrottled) && !errors.Is(err, ErrBanned) {
		// After the coin's days, which the tokens' days are stored into.
		start = time.Now()
		terr := dl.updateTokenHistory(ctx)
		if ctx.Err() == nil {
			dl.m.stage("historical_token_tickers", start, terr)
		}
		if terr != nil && err == nil {
			err = fmt.Errorf("token rates: %w", terr)
		}
	}
	if !boot || ctx.Err() != nil {
		return err
	}
	if err == nil && dl.runFailures.Load() > 0 {
		err = errBootstrapIncomplete
	}
	if err == nil {
		if werr := dl.db.WriteFiatBootstrap(db.FiatBootstrap{Complete: true}); werr != nil {
			return fmt.Errorf("fiat bootstrap marker: %w", werr)
		}
		dl.cfg.Log.Info("fiat rate history bootstrap complete")
		return nil
	}
	return dl.bootstrapFailed(err)
}

// bootstrapFailed counts a failed bootstrap run; at maxBootstrapAttempts
// the bootstrap is finalized (complete, attempts reset) and nil returned,
// so the next run is the next day's, as Blockbook does.
func (dl *Downloader) bootstrapFailed(runErr error) error {
	st, _, err := db.ReadFiatBootstrap(dl.db)
	if err != nil {
		return errors.Join(runErr, err)
	}
	st.Attempts++
	if st.Attempts < maxBootstrapAttempts {
		dl.cfg.Log.Warn("fiat rate history bootstrap attempt failed", "attempt", st.Attempts, "of", maxBootstrapAttempts, "err", runErr)
		return errors.Join(runErr, dl.db.WriteFiatBootstrap(st))
	}
	dl.m.errors.WithLabelValues("bootstrap").Inc()
	dl.cfg.Log.Warn("fiat rate history bootstrap failed too often; giving it up", "attempts", st.Attempts, "err", runErr)
	if err := dl.db.WriteFiatBootstrap(db.FiatBootstrap{Complete: true}); err != nil {
		return errors.Join(runErr, err)
	}
	return nil
}
