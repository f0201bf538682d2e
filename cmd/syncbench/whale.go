package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// chainKind is the generated chain's mix (-chain): "bench" or "whale".
var chainKind = "bench"

// chainName names the cached chain file and node directory; each mix has
// its own, so switching -chain never reuses the other's node.
func chainName(blocks, txs int) string {
	if chainKind == "whale" || chainKind == "runes" {
		return fmt.Sprintf("%s-%d-%d", chainKind, blocks, txs)
	}
	return fmt.Sprintf("regtest-%d-%d", blocks, txs)
}

// generateWhale writes the whale-heavy chain (chaingen.Whale) to path.
func generateWhale(path string, blocks, txs int) error {
	g := chaingen.New(&chaincfg.RegressionNetParams, "whale")
	if err := g.Whale(chaingen.WhaleBenchSpec(&chaincfg.RegressionNetParams, blocks, txs)); err != nil {
		return err
	}
	return chaingen.WriteBlocksFile(path, g.Blocks())
}

// crashTest (-crash) runs the kill -9 check after the timed sync. A
// one-round sync (a large -syncmemory) has no moment between rounds to
// kill it at, so it needs -crash=false.
var crashTest = flag.Bool("crash", true, "after the timed sync, kill -9 a second sync mid bulk load and compare the indexes (needs more than one round)")

// boundProfile (-boundprofile FILE) only computes the lower bound on the
// cached chain, with a CPU profile of it written to FILE: where the time of
// the unavoidable work goes, without a node or a sync.
var cfStats = flag.Bool("cfstats", false, "after the clean stop, print each column family's rows and bytes (blockbook -computedbstats)")

// printColumnStats prints blockbook -computedbstats of the stopped index
// (-cfstats): where the datadir's bytes are, per column family.
func printColumnStats(bin, cfg, dataDir string) {
	if !*cfStats {
		return
	}
	out, err := exec.Command(bin, "-blockchaincfg="+cfg, "-datadir="+dataDir, "-computedbstats").CombinedOutput()
	if err != nil {
		fmt.Printf("  column stats failed: %v\n", err)
	}
	fmt.Print(string(out))
}

var boundProfile = flag.String("boundprofile", "", "only run the lower bound on the cached chain and write its CPU profile to this file")

// profileBound runs lowerBound under the CPU profiler.
func profileBound(chainFile, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // a failed write shows as an unreadable profile
	dir, err := os.MkdirTemp("", "syncbench-bound-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	t, err := lowerBound(chainFile, dir, benchFilters)
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	fmt.Printf("lower bound: decode %.2f s + build rows %.2f s + sort, write and ingest SST %.2f s = %.2f s; profile in %s\n",
		t.decode.Seconds(), t.build.Seconds(), t.ingest.Seconds(), t.total().Seconds(), out)
	return nil
}

// syncProfile (-cpuprofile FILE) profiles blockbook's own timed sync: it
// gets -prof and the first -cpuprofilesecs seconds are fetched from its
// pprof endpoint into FILE.
var (
	syncProfile     = flag.String("cpuprofile", "", "write a CPU profile of blockbook's timed sync to this file (served by its -prof)")
	syncProfileSecs = flag.Int("cpuprofilesecs", 20, "seconds of the sync that -cpuprofile covers, from the start")
)

// profArgs returns the -prof flag for the timed run and a function that
// starts fetching the profile once the process runs; the returned wait
// blocks until the file is written.
func profArgs() (args []string, start func() (wait func() error)) {
	if *syncProfile == "" {
		return nil, func() func() error { return func() error { return nil } }
	}
	addr, err := benchproc.FreeAddr()
	if err != nil {
		return nil, func() func() error { return func() error { return err } }
	}
	return []string{"-prof=" + addr}, func() func() error {
		done := make(chan error, 1)
		go func() { done <- fetchProfile("http://"+addr, *syncProfile, *syncProfileSecs) }()
		return func() error { return <-done }
	}
}

// fetchProfile saves the CPU profile of the next secs seconds, retrying
// until the endpoint is up.
func fetchProfile(base, out string, secs int) error {
	var resp *http.Response
	var err error
	for range 200 {
		if resp, err = http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs)); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("cpu profile: %w", err)
	}
	return f.Close()
}
