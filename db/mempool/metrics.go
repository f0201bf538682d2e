package mempool

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the mempool's Prometheus series.
type metrics struct {
	size       prometheus.Gauge
	unresolved prometheus.Gauge
	resync     prometheus.Histogram
	resyncErrs prometheus.Counter
	added      prometheus.Counter
	removed    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		size: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blockbook_mempool_size", Help: "Number of transactions in the mempool.",
		}),
		unresolved: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blockbook_mempool_unresolved_txs", Help: "Mempool transactions with an input whose previous output is not known yet.",
		}),
		resync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "blockbook_mempool_resync_duration_seconds", Help: "Duration of full mempool resyncs (the first one is the initial load).",
			Buckets: prometheus.ExponentialBuckets(0.001, 3, 14),
		}),
		resyncErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "blockbook_mempool_resync_errors_total", Help: "Mempool resyncs that failed (and were retried).",
		}),
		added: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "blockbook_mempool_txs_added_total", Help: "Transactions added to the mempool.",
		}),
		removed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_mempool_txs_removed_total", Help: "Transactions removed from the mempool, by reason.",
		}, []string{"reason"}),
	}
	if reg == nil {
		return m
	}
	m.size = register(reg, m.size)
	m.unresolved = register(reg, m.unresolved)
	m.resync = register(reg, m.resync)
	m.resyncErrs = register(reg, m.resyncErrs)
	m.added = register(reg, m.added)
	m.removed = register(reg, m.removed)
	return m
}

// register registers c, or returns the collector already registered under
// its name (a second mempool on the same registry, as in tests).
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if ex, ok := are.ExistingCollector.(T); ok {
				return ex
			}
		}
	}
	return c
}
