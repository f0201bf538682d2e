package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// newTxidCache makes the txid cache of -txidcachemb (Bitcoin-type chains
// only: the others keep no blockTxids rows) and exports its figures.
func newTxidCache(e stackEnv) *db.TxidCache {
	if e.backend.Type != bchain.ChainBitcoinType {
		return nil
	}
	c := db.NewTxidCache(e.o.TxidCacheMB << 20)
	if c == nil {
		return nil
	}
	e.reg.MustRegister(&txidCacheCollector{c: c,
		bytes: prometheus.NewDesc("blockbook_txid_cache_bytes", "Bytes held by the txid cache (blockTxids rows, -txidcachemb).", nil, nil),
		rows:  prometheus.NewDesc("blockbook_txid_cache_rows_total", "blockTxids rows looked up in the txid cache, by result (hit, or miss: read from the index).", []string{"result"}, nil),
		resets: prometheus.NewDesc("blockbook_txid_cache_resets_total",
			"Times the txid cache was emptied for a tip on another branch (a reorg).", nil, nil)})
	return c
}

// txidCacheCollector reads the cache's counters once per scrape.
type txidCacheCollector struct {
	c                   *db.TxidCache
	bytes, rows, resets *prometheus.Desc
}

func (t *txidCacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- t.bytes
	ch <- t.rows
	ch <- t.resets
}

func (t *txidCacheCollector) Collect(ch chan<- prometheus.Metric) {
	s := t.c.Stats()
	ch <- prometheus.MustNewConstMetric(t.bytes, prometheus.GaugeValue, float64(s.Bytes))
	ch <- prometheus.MustNewConstMetric(t.rows, prometheus.CounterValue, float64(s.Hits), "hit")
	ch <- prometheus.MustNewConstMetric(t.rows, prometheus.CounterValue, float64(s.Misses), "miss")
	ch <- prometheus.MustNewConstMetric(t.resets, prometheus.CounterValue, float64(s.Resets))
}
