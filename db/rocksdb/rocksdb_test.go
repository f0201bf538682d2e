package rocksdb

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/dbtest"
)

func TestConformance(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Engine {
		e, err := openEngine(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType})
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}
