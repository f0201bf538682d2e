// Package app wires the program: flags and config, the node backend, the
// store, the services (sync worker, mempools, fiat downloader) and the
// fronts, and shuts them down in order. It is the only package besides
// tests and commands that imports coin packages and store engines.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/bch"  // registers Bitcoin Cash and eCash
	_ "github.com/openexplorer/blockbook/bchain/coins/btc"  // registers Bitcoin-type coins
	_ "github.com/openexplorer/blockbook/bchain/coins/dash" // registers Dash
	_ "github.com/openexplorer/blockbook/bchain/coins/dgb"  // registers DigiByte
	_ "github.com/openexplorer/blockbook/bchain/coins/doge" // registers Dogecoin
	_ "github.com/openexplorer/blockbook/bchain/coins/eth"  // registers Ethereum-type coins
	_ "github.com/openexplorer/blockbook/bchain/coins/grs"  // registers Groestlcoin
	_ "github.com/openexplorer/blockbook/bchain/coins/ltc"  // registers Litecoin
	_ "github.com/openexplorer/blockbook/bchain/coins/nmc"  // registers Namecoin
	_ "github.com/openexplorer/blockbook/bchain/coins/tron" // registers Tron and its Nile testnet
	_ "github.com/openexplorer/blockbook/bchain/coins/vtc"  // registers Vertcoin
	_ "github.com/openexplorer/blockbook/bchain/coins/zec"  // registers Zcash
	"github.com/openexplorer/blockbook/db"
)

// KillAfterWritesEnv is a test-only fault injection: the process SIGKILLs
// itself after that many block writes (see docs/operations.md).
const KillAfterWritesEnv = "BLOCKBOOK_KILL_AFTER_WRITES"

// Build identifies the binary (set by the linker in package main).
type Build struct {
	Version, GitCommit, BuildTime string
}

// build is the running binary's identity, for the status answers.
var build = Build{Version: "devel"}

// Main runs the program with command-line args and returns its exit code:
// 2 for a bad flag, config or incompatible index, 1 for other failures.
func Main(args []string, b Build) int {
	if b.Version != "" {
		build.Version = b.Version
	}
	build.GitCommit, build.BuildTime = b.GitCommit, b.BuildTime
	opts, err := ParseFlags(args, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "blockbook:", err)
		return 2
	}
	log, logFile, err := NewLogger(opts, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "blockbook:", err)
		return 2
	}
	defer logFile.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, opts, log); err != nil {
		log.Error("blockbook stopped", "err", err)
		if errors.Is(err, bchain.ErrConfig) || errors.Is(err, db.ErrIncompatible) {
			return 2
		}
		return 1
	}
	return 0
}

// commit returns the VCS revision the binary was built from, if known.
func commit() string {
	if build.GitCommit != "" {
		return build.GitCommit
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
