package fiat

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/internal/promreg"
)

// metrics are the downloader's Prometheus series.
type metrics struct {
	requests *prometheus.CounterVec // endpoint, status: success, error, throttled
	updated  *prometheus.GaugeVec   // kind: current, historical, hourly, five_minutes; unix seconds of the last success
	errors   *prometheus.CounterVec // kind
	tokens   prometheus.Gauge       // tokens whose rates are followed
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_fiat_rates_requests_total", Help: "Requests to the fiat rate provider, by endpoint and outcome (success, error, throttled).",
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
	}
	if reg == nil {
		return m
	}
	m.requests = promreg.Register(reg, m.requests)
	m.updated = promreg.Register(reg, m.updated)
	m.errors = promreg.Register(reg, m.errors)
	m.tokens = promreg.Register(reg, m.tokens)
	return m
}
