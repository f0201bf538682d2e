package app

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
)

// Each part of the index's native memory is one sample of one metric.
func TestMemoryUseMetricHasEachPart(t *testing.T) {
	d, err := memdb.Open(db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	reg := prometheus.NewRegistry()
	registerMemoryUse(reg, d)
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || families[0].GetName() != "blockbook_db_memory_bytes" {
		t.Fatalf("gathered %v, %v", families, err)
	}
	var parts []string
	for _, m := range families[0].GetMetric() {
		parts = append(parts, m.GetLabel()[0].GetValue())
	}
	slices.Sort(parts)
	if want := []string{"block_cache", "malloc_free", "malloc_in_use", "memtables", "pinned", "table_readers"}; !slices.Equal(parts, want) {
		t.Fatalf("parts %v, want %v", parts, want)
	}
}
