package syncer

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the sync worker's Prometheus collectors.
type Metrics struct {
	bestHeight, nodeHeight, lagBlocks prometheus.Gauge
	connected, disconnected, txs      prometheus.Counter
	errors                            prometheus.Counter
}

// NewMetrics creates the collectors and registers them with reg (if non-nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		bestHeight:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "blockbook_best_height", Help: "Height of the last indexed block."}),
		nodeHeight:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "blockbook_backend_best_height", Help: "Height of the node's tip at the last check."}),
		lagBlocks:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "blockbook_sync_lag_blocks", Help: "Blocks the index is behind the node."}),
		connected:    prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_index_blocks_connected_total", Help: "Blocks connected to the index."}),
		disconnected: prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_index_blocks_disconnected_total", Help: "Blocks disconnected by reorgs and rollbacks."}),
		txs:          prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_index_txs_total", Help: "Transactions indexed."}),
		errors:       prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_sync_errors_total", Help: "Failed sync passes (retried)."}),
	}
	if reg != nil {
		reg.MustRegister(m.bestHeight, m.nodeHeight, m.lagBlocks, m.connected, m.disconnected, m.txs, m.errors)
	}
	return m
}

// get returns m, or unregistered collectors when m is nil (tests).
func (m *Metrics) get() *Metrics {
	if m == nil {
		return NewMetrics(nil)
	}
	return m
}

func (m *Metrics) lag(tip uint32, hasTip bool, node uint32) {
	switch {
	case !hasTip:
		m.lagBlocks.Set(float64(node) + 1)
	case node > tip:
		m.lagBlocks.Set(float64(node - tip))
	default:
		m.lagBlocks.Set(0)
	}
}
