// Command blockbook indexes a blockchain node into RocksDB and serves
// Blockbook's REST and websocket APIs and its HTML explorer. The wiring
// lives in package app; see README.md for running it.
package main

import (
	"os"

	"github.com/openexplorer/blockbook/app"
)

// Set at build time with -ldflags "-X main.version=...".
var (
	version   = "devel"
	gitCommit = ""
	buildTime = ""
)

func main() {
	os.Exit(app.Main(os.Args[1:], app.Build{Version: version, GitCommit: gitCommit, BuildTime: buildTime}))
}
