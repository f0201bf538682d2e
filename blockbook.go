// Command blockbook indexes a blockchain node into RocksDB and serves
// Blockbook's REST API (and, in later releases, its websocket API and HTML
// explorer). See README.md for running it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/btc" // registers Bitcoin-type coins
	_ "github.com/openexplorer/blockbook/bchain/coins/eth" // registers Ethereum-type coins
	"github.com/openexplorer/blockbook/db"
)

// Set at build time with -ldflags "-X main.version=...".
var (
	version   = "devel"
	gitCommit = ""
	buildTime = ""
)

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "blockbook:", err)
		os.Exit(2)
	}
	log := newLogger(opts, os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, log); err != nil {
		log.Error("blockbook stopped", "err", err)
		if errors.Is(err, bchain.ErrConfig) || errors.Is(err, db.ErrIncompatible) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// commit returns the VCS revision the binary was built from, if known.
func commit() string {
	if gitCommit != "" {
		return gitCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 8 {
				return s.Value[:8]
			}
		}
	}
	return "unknown"
}
