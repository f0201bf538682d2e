package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/db"
)

// registerMemoryUse exports the index's native memory by part, so that an
// RSS above -syncmemory can be traced to the part of the plan it exceeds.
func registerMemoryUse(reg prometheus.Registerer, d *db.DB) {
	parts := map[string]func(db.MemoryUse) int64{
		"block_cache":   func(m db.MemoryUse) int64 { return m.BlockCache },
		"pinned":        func(m db.MemoryUse) int64 { return m.Pinned },
		"memtables":     func(m db.MemoryUse) int64 { return m.Memtables },
		"table_readers": func(m db.MemoryUse) int64 { return m.TableReaders },
		"malloc_in_use": func(m db.MemoryUse) int64 { return m.MallocInUse },
		"malloc_free":   func(m db.MemoryUse) int64 { return m.MallocFree },
	}
	for part, get := range parts {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "blockbook_db_memory_bytes",
			Help: "Native memory of the index by part: RocksDB's block cache (pinned: held by readers), memtables and table readers; the C allocator's bytes in use and free.", ConstLabels: prometheus.Labels{"part": part}},
			func() float64 { return float64(get(d.MemoryUse())) }))
	}
}
