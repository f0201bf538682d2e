package mempool

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/internal/promreg"
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
	m.size = promreg.Register(reg, m.size)
	m.unresolved = promreg.Register(reg, m.unresolved)
	m.resync = promreg.Register(reg, m.resync)
	m.resyncErrs = promreg.Register(reg, m.resyncErrs)
	m.added = promreg.Register(reg, m.added)
	m.removed = promreg.Register(reg, m.removed)
	return m
}
