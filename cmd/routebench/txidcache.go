package main

import (
	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/db"
)

// A tree with the txid cache gives each service blockbook's default one
// (-txidcachemb); left out of a copy into an older tree, which has none.
func init() {
	configure = func(cfg *api.Config) { cfg.TxidCache = db.NewTxidCache(db.DefaultTxidCacheMB << 20) }
}
