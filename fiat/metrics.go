package fiat

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/internal/promreg"
)

// metrics are the downloader's Prometheus series: ours (requests, updated,
// errors, tokens) and, beside them, Blockbook's fiat series under its
// names, labels and label values, so that a dashboard built for Blockbook
// keeps working.
type metrics struct {
	requests *prometheus.CounterVec // endpoint, status: success, error, throttled, banned
	updated  *prometheus.GaugeVec   // kind: current, historical, hourly, five_minutes; unix seconds of the last success
	errors   *prometheus.CounterVec // kind
	tokens   prometheus.Gauge       // tokens whose rates are followed

	// Blockbook's.
	cgRequests    *prometheus.CounterVec   // endpoint, status: success, error, throttle, banned
	cgRanges      *prometheus.CounterVec   // range: historical, tip, capped, backfill
	duration      *prometheus.HistogramVec // stage, status: success, error
	fetchedUnits  *prometheus.CounterVec   // phase: daily points stored
	fetchedTokens *prometheus.CounterVec   // phase: token series that stored a point
	unable        *prometheus.CounterVec   // phase, reason
}

// Blockbook's phases of daily fetches (the phase label) and reasons of
// fiat_rates_unable_total.
const (
	phaseTip       = "tip"
	phaseBackfill  = "backfill"
	phaseBootstrap = "bootstrap"
	phaseReconcile = "reconcile"

	unableGapTooLarge     = "gap_too_large"
	unableFetchFailed     = "fetch_failed"
	unableProviderBanned  = "provider_banned"
	unableNoBaseTicker    = "no_base_ticker"
	unableBudgetExhausted = "budget_exhausted"
)

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_fiat_rates_requests_total", Help: "Requests to the fiat rate provider, by endpoint and outcome (success, error, throttled, banned).",
		}, []string{"endpoint", "status"}),
		updated: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blockbook_fiat_rates_last_update_seconds", Help: "Unix time of the last successful fiat rates update, by kind (current, historical, hourly, five_minutes).",
		}, []string{"kind"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_fiat_rates_update_errors_total", Help: "Fiat rates updates that failed (and are retried), by kind (current, historical, tokens, hourly, five_minutes).",
		}, []string{"kind"}),
		tokens: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blockbook_fiat_rates_tokens", Help: "Tokens whose fiat rates are followed: the provider prices them and the index knows them.",
		}),
		// Blockbook's names, without "_total": dashboards query them so.
		cgRequests: prometheus.NewCounterVec(prometheus.CounterOpts{ //nolint:promlinter // Blockbook's name
			Name: "blockbook_coingecko_requests", Help: "External market-data API calls split by endpoint and outcome status (Blockbook's: success, error, throttle, banned)",
		}, []string{"endpoint", "status"}),
		cgRanges: prometheus.NewCounterVec(prometheus.CounterOpts{ //nolint:promlinter // Blockbook's name
			Name: "blockbook_coingecko_range_requests", Help: "Historical ticker download ranges chosen by the fiat updater (historical, tip, capped, backfill)",
		}, []string{"range"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "blockbook_fiat_rates_update_duration_seconds", Help: "Time spent in fiat-rate downloader stages such as current, hourly, historical and token ticker updates",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
		}, []string{"stage", "status"}),
		fetchedUnits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_fiat_rates_fetched_units_total", Help: "Daily fiat-rate time-units fetched and persisted, split by fetch phase (tip, backfill, bootstrap, reconcile)",
		}, []string{"phase"}),
		fetchedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_fiat_rates_fetched_tokens_total", Help: "Token fiat-rate series fetched and persisted, split by fetch phase (backfill, bootstrap, reconcile)",
		}, []string{"phase"}),
		unable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_fiat_rates_unable_total", Help: "Fiat-rate series that could not be fetched, split by phase and reason (gap_too_large, fetch_failed, provider_banned, no_base_ticker, budget_exhausted)",
		}, []string{"phase", "reason"}),
	}
	if reg == nil {
		return m
	}
	m.requests = promreg.Register(reg, m.requests)
	m.updated = promreg.Register(reg, m.updated)
	m.errors = promreg.Register(reg, m.errors)
	m.tokens = promreg.Register(reg, m.tokens)
	m.cgRequests = promreg.Register(reg, m.cgRequests)
	m.cgRanges = promreg.Register(reg, m.cgRanges)
	m.duration = promreg.Register(reg, m.duration)
	m.fetchedUnits = promreg.Register(reg, m.fetchedUnits)
	m.fetchedTokens = promreg.Register(reg, m.fetchedTokens)
	m.unable = promreg.Register(reg, m.unable)
	return m
}

// request counts one answered request in ours and in Blockbook's series
// (whose throttled status is "throttle").
func (m *metrics) request(endpoint, status string) {
	m.requests.WithLabelValues(endpoint, status).Inc()
	if status == "throttled" {
		status = "throttle"
	}
	m.cgRequests.WithLabelValues(endpoint, status).Inc()
}

// stage observes how long a stage (Blockbook's names: current_tickers,
// hourly_tickers, five_minutes_tickers, historical_tickers,
// historical_token_tickers, reconcile) took since start.
func (m *metrics) stage(stage string, start time.Time, err error) {
	status := "success"
	if err != nil {
		status = "error"
	}
	m.duration.WithLabelValues(stage, status).Observe(time.Since(start).Seconds())
}

// stageErr is err for a stage's status, nil when it is one of ok.
func stageErr(err error, ok ...error) error {
	for _, e := range ok {
		if errors.Is(err, e) {
			return nil
		}
	}
	return err
}

// fetched counts stored daily points and the token series that stored
// any.
func (m *metrics) fetched(phase string, units, tokens int) {
	if units > 0 {
		m.fetchedUnits.WithLabelValues(phase).Add(float64(units))
	}
	if tokens > 0 {
		m.fetchedTokens.WithLabelValues(phase).Add(float64(tokens))
	}
}

// unableTo counts n series (or days) that could not be fetched.
func (m *metrics) unableTo(phase, reason string, n int) {
	if n > 0 {
		m.unable.WithLabelValues(phase, reason).Add(float64(n))
	}
}
