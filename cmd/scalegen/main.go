// Command scalegen writes a mainnet-shaped regtest chain of many millions
// of transactions as raw blocks (blk files and an index) into a directory
// outside the repository; cmd/blockserver serves it and cmd/scalebench
// measures blockbook's sync of it. See docs/performance.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/openexplorer/blockbook/tools/scalegen"
)

func main() {
	dir := flag.String("dir", "", "output directory (required; must not exist)")
	txs := flag.Int("txs", 20_000_000, "number of transactions")
	full := flag.Int("blocktxs", 2500, "transactions of a full block")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *dir == "" || *txs < 1 {
		fmt.Fprintln(os.Stderr, "scalegen: -dir and a positive -txs are required")
		os.Exit(2)
	}
	if _, err := os.Stat(*dir); err == nil {
		fmt.Fprintln(os.Stderr, "scalegen:", *dir, "exists")
		os.Exit(2)
	}
	start, last := time.Now(), time.Now()
	st, err := scalegen.Generate(*dir, scalegen.Options{Txs: *txs, MaxBlockTxs: *full, Seed: *seed}, func(s scalegen.Stats) {
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "%d blocks, %d txs, %.1f GB, %.0f tx/s\n", s.Blocks, s.Txs, float64(s.Bytes)/1e9, float64(s.Txs)/time.Since(start).Seconds())
		}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "scalegen:", err)
		os.Exit(1)
	}
	out, _ := json.MarshalIndent(st, "", "  ")
	fmt.Printf("%s\ngenerated in %.1f s\n", out, time.Since(start).Seconds())
}
