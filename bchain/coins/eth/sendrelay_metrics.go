package eth

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/internal/promreg"
)

// Reasons a tx leaves the relay's pending-tx cache (the reason label of
// blockbook_sendrelay_cache_removed_total).
const (
	relayGoneMined      = "mined"      // a provider reports it in a block
	relayGoneSuperseded = "superseded" // the sender's confirmed nonce passed it
	relayGoneBlock      = "block"      // a block the index connected has it
	relayGoneTimeout    = "timeout"    // older than alternativeMempoolTxTimeout
	relayGoneReplaced   = "replaced"   // a fee bump of the same sender and nonce
)

// relayMetrics are the Prometheus series of the pending-tx cache.
type relayMetrics struct {
	cached    prometheus.Gauge
	added     prometheus.Counter
	removed   *prometheus.CounterVec
	checkErrs prometheus.Counter
}

func newRelayMetrics(reg prometheus.Registerer) *relayMetrics {
	m := &relayMetrics{
		cached: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blockbook_sendrelay_cached_txs", Help: "Pending txs sent through the alternative providers that the relay's cache holds.",
		}),
		added: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "blockbook_sendrelay_cache_added_total", Help: "Sent txs read back from the accepting alternative provider and cached as pending.",
		}),
		removed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_sendrelay_cache_removed_total", Help: "Txs that left the relay's pending-tx cache, by reason (mined, superseded, block, timeout, replaced).",
		}, []string{"reason"}),
		checkErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "blockbook_sendrelay_cache_check_errors_total", Help: "Checks of a cached tx against the alternative providers that failed (the tx stays until its timeout).",
		}),
	}
	if reg == nil {
		return m
	}
	m.cached = promreg.Register(reg, m.cached)
	m.added = promreg.Register(reg, m.added)
	m.removed = promreg.Register(reg, m.removed)
	m.checkErrs = promreg.Register(reg, m.checkErrs)
	return m
}
