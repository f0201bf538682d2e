package dbtest

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// RequireIdentical fails t with each difference between two Bitcoin-type
// indexes' families (at most 10): the dump comparison of the optional
// indexes' reorg and bulk tests.
func RequireIdentical(t *testing.T, a, b *db.UtxoIndex) {
	t.Helper()
	diffs, err := db.Diff(a.DB(), b.DB(), db.ColumnFamilies(bchain.ChainBitcoinType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}
