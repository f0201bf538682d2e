package main

import (
	"fmt"
	"strings"
)

// memAtSync shows, from blockbook's /metrics read right after it reports
// in sync (m, benchproc's Metrics), the Go heap (in use, and the size the
// collector lets it reach before the next cycle) and RocksDB's and the C
// allocator's memory by part, so that the peak RSS can be told apart by
// owner. These are figures at that moment, not peaks.
func memAtSync(m map[string]float64) string {
	want := []struct{ metric, label string }{
		{"go_memstats_heap_inuse_bytes", "Go heap in use"},
		{"go_memstats_next_gc_bytes", "next GC at"},
		{"go_memstats_sys_bytes", "Go runtime from the OS"},
		{`blockbook_db_memory_bytes{part="memtables"}`, "memtables"},
		{`blockbook_db_memory_bytes{part="block_cache"}`, "block cache"},
		{`blockbook_db_memory_bytes{part="table_readers"}`, "table readers"},
		{`blockbook_db_memory_bytes{part="malloc_in_use"}`, "malloc in use"},
		{`blockbook_db_memory_bytes{part="malloc_free"}`, "malloc free"},
	}
	var parts []string
	for _, w := range want {
		if v, ok := m[w.metric]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f MB", w.label, v/(1<<20)))
		}
	}
	if len(parts) == 0 {
		return "metrics: none read"
	}
	return strings.Join(parts, ", ")
}
