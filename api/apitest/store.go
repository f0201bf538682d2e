// Package apitest is the test kit of the api and server packages: a
// deterministic regtest chain (tools/chaingen) parsed by the real Bitcoin
// parser and connected through the real index code into a store, an
// in-memory node serving the same blocks and txs, and the real mempool fed
// from that node. Only tests import it. It deliberately does not import
// package api, so that api's internal tests can use it too.
package apitest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// OpenStore opens an empty index store for one test and closes it when the
// test ends. It is the one place api and server tests open a store: blank
// fields of o get a Bitcoin-type regtest store in a temporary directory.
func OpenStore(tb testing.TB, o db.Options) *db.DB {
	tb.Helper()
	if o.Path == "" {
		o.Path = tb.TempDir()
	}
	if o.Coin == "" {
		o.ChainType, o.Coin, o.Network = bchain.ChainBitcoinType, "Regtest", "regtest"
	}
	if o.Log == nil {
		o.Log = Quiet()
	}
	d, err := db.Open(o)
	if err != nil {
		tb.Fatalf("open the test store: %v", err)
	}
	tb.Cleanup(d.Close)
	return d
}

// Quiet is a logger that drops everything, for the services under test.
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
