// Package apitest is the test kit of the api and server packages: a
// deterministic regtest chain (tools/chaingen) parsed by the real Bitcoin
// parser and connected through the real index code into a store, an
// in-memory node serving the same blocks and txs, and the real mempool fed
// from that node. Only tests import it. It deliberately does not import
// package api, so that api's internal tests can use it too.
package apitest

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
)

// openStore is the one place api and server tests open a store. Blank
// fields of o give a Bitcoin-type regtest store.
func openStore(o db.Options) (*db.DB, error) {
	if o.Coin == "" {
		o.ChainType, o.Coin, o.Network = bchain.ChainBitcoinType, "Regtest", "regtest"
	}
	if o.Log == nil {
		o.Log = Quiet()
	}
	d, err := memdb.Open(o)
	if err != nil {
		return nil, fmt.Errorf("open the test store: %w", err)
	}
	return d, nil
}

// OpenStore opens an empty store in a temporary directory for one test
// and closes it when the test ends (see openStore for o's defaults).
func OpenStore(tb testing.TB, o db.Options) *db.DB {
	tb.Helper()
	if o.Path == "" {
		o.Path = tb.TempDir()
	}
	d, err := openStore(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(d.Close)
	return d
}

// Quiet is a logger that drops everything, for the services under test.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }
