package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// memAtSync reads blockbook's /metrics on its internal port right after it
// reports in sync: the Go heap (in use, and the size the collector lets it
// reach before the next cycle) and RocksDB's and the C allocator's memory
// by part, so that the peak RSS can be told apart by owner. These are
// figures at that moment, not peaks.
func memAtSync(internal string) string {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + internal + "/metrics")
	if err != nil {
		return "metrics: " + err.Error()
	}
	defer resp.Body.Close()
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
	got := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.LastIndexByte(line, ' '); i > 0 && !strings.HasPrefix(line, "#") {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				got[line[:i]] = v
			}
		}
	}
	var parts []string
	for _, w := range want {
		if v, ok := got[w.metric]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f MB", w.label, v/(1<<20)))
		}
	}
	return strings.Join(parts, ", ")
}
