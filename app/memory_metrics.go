package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/db"
)

// memoryUseCollector exports the index's native memory by part, so that an
// RSS above -syncmemory can be traced to the part of the plan it exceeds.
// One collector reads db.MemoryUse once per scrape for all parts.
type memoryUseCollector struct {
	d    *db.DB
	desc *prometheus.Desc
}

func registerMemoryUse(reg prometheus.Registerer, d *db.DB) {
	reg.MustRegister(&memoryUseCollector{d: d, desc: prometheus.NewDesc("blockbook_db_memory_bytes",
		"Native memory of the index by part: RocksDB's block cache (pinned: held by readers), memtables and table readers; the C allocator's bytes in use and free.",
		[]string{"part"}, nil)})
}

func (c *memoryUseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *memoryUseCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.d.MemoryUse()
	for _, p := range []struct {
		part  string
		bytes int64
	}{
		{"block_cache", m.BlockCache}, {"pinned", m.Pinned}, {"memtables", m.Memtables},
		{"table_readers", m.TableReaders}, {"malloc_in_use", m.MallocInUse}, {"malloc_free", m.MallocFree},
	} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(p.bytes), p.part)
	}
}
