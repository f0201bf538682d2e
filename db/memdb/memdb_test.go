package memdb

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/dbtest"
)

func TestConformance(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Engine {
		return NewEngine("", db.ColumnFamilies(bchain.ChainBitcoinType))
	})
}
