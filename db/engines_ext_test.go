package db_test

import (
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
	"github.com/openexplorer/blockbook/db/rocksdb"
)

func init() {
	db.OpenMemDB = memdb.Open
	db.OpenRocksDB = rocksdb.Open
}
