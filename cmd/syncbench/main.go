// Command syncbench measures blockbook's initial sync on a generated regtest
// chain: it generates the chain once (cached), loads it into a btcd node once
// (cached), then runs the blockbook binary from an empty datadir to in-sync
// at the tip and prints time, blocks/s, tx/s, peak RSS and DB size. It is
// what `make bench` runs; results go to docs/performance.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

func main() {
	bin := flag.String("blockbook", "bin/blockbook", "blockbook binary")
	blocks := flag.Int("blocks", 800, "chain length")
	txs := flag.Int("txs", 150_000, "approximate number of transactions")
	workers := flag.Int("workers", runtime.NumCPU(), "blockbook -workers")
	syncMem := flag.Int("syncmemory", 512, "blockbook -syncmemory (MB)")
	cache := flag.String("cache", "", "where to keep the generated chain and node (default: the user cache dir)")
	p2p := flag.Bool("p2p", true, "download blocks over the node's P2P port (p2p_address) instead of RPC (false: p2p_address \"none\")")
	flag.BoolVar(&autoP2P, "autop2p", false, "no p2p_address: btcd listens on regtest's default P2P port on a loopback IP of its own and blockbook finds it (overrides -p2p)")
	bulk := flag.Int("bulkthreshold", 500, "blockbook -bulkthreshold (0: connect blocks one by one)")
	pushdataIndex := flag.Bool("pushdataindex", false, "blockbook -pushdataindex: keep the pushdata index too")
	spIndex := flag.Bool("silentpaymentsindex", false, "blockbook -silentpaymentsindex: keep the Silent Payments tweak index too")
	runesIndex := flag.Bool("runesindex", false, "blockbook -runesindex: keep the Runes index too")
	flag.StringVar(&chainKind, "chain", "bench", "generated chain: bench (the demo mix), whale (whale-heavy mix, see tools/chaingen/whale.go) or runes (rune txs mixed with payments, tools/chaingen/runes.go)")
	filters := flag.Bool("filters", true, "build block filters with Blockbook's production settings (block_golomb_filter_p 20, taproot-noordinals, zeroed key)")
	coin := flag.String("coin", "bitcoin", "bitcoin: a chaingen chain on btcd; litecoin: a wallet-made MWEB chain on litecoind (-txs wallet payments; -blocks and the lower bound do not apply)")
	flag.Parse()
	if chainKind != "bench" && chainKind != "whale" && chainKind != "runes" {
		fmt.Fprintln(os.Stderr, "syncbench: -chain must be bench, whale or runes")
		os.Exit(2)
	}
	extraArgs = []string{"-bulkthreshold=" + strconv.Itoa(*bulk)}
	if *pushdataIndex {
		extraArgs = append(extraArgs, "-pushdataindex")
	}
	if *spIndex {
		extraArgs = append(extraArgs, "-silentpaymentsindex")
	}
	if *runesIndex {
		extraArgs = append(extraArgs, "-runesindex")
	}
	if *filters {
		benchFilters = db.FilterParams{P: 20, Scripts: db.FilterScriptsTaprootNoOrdinals, ZeroedKey: true}
	}
	var err error
	if *coin == "litecoin" {
		err = runLtc(*bin, *txs, *workers, *syncMem, *cache, *p2p)
	} else {
		err = run(*bin, *blocks, *txs, *workers, *syncMem, *cache, *p2p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "syncbench:", err)
		os.Exit(1)
	}
}

// benchFilters are the block filter settings of the sync (-filters).
var benchFilters db.FilterParams

// autoP2P is -autop2p.
var autoP2P bool

// run generates (or reuses) the chain, times blockbook's initial sync
// against the node, checks the index and prints the report.
//
// Long: a benchmark script, its steps in the order they are timed; split
// up, the timed sequence would be scattered over helpers that run once.
func run(bin string, blocks, txs, workers, syncMem int, cache string, p2p bool) error {
	ctx := context.Background()
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(dir, "openexplorer-blockbook", "bench")
	}
	name := chainName(blocks, txs)
	chainFile := filepath.Join(cache, name+".blk")
	if err := generate(chainFile, blocks, txs); err != nil {
		return err
	}
	if *boundProfile != "" {
		return profileBound(chainFile, *boundProfile)
	}
	node, height, txCount, err := loadedNode(ctx, filepath.Join(cache, name+".node"), chainFile)
	if err != nil {
		return err
	}
	defer node.Stop()

	work, err := os.MkdirTemp("", "syncbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	cfg := filepath.Join(work, "blockchaincfg.json")
	cfgMap := map[string]any{"coin_name": "Regtest", "rpc_url": node.RPCURL, "rpc_user": node.RPCUser,
		"rpc_pass": node.RPCPass, "parse": true, "block_addresses_to_keep": 300}
	switch {
	case autoP2P: // Blockbook's blockchaincfg.json has no p2p_address
	case p2p:
		cfgMap["p2p_address"] = node.P2PAddr
	default:
		cfgMap["p2p_address"] = "none"
	}
	if benchFilters.Enabled() {
		cfgMap["block_golomb_filter_p"] = benchFilters.P
		cfgMap["block_filter_scripts"] = benchFilters.Scripts
		cfgMap["block_filter_use_zeroed_key"] = benchFilters.ZeroedKey
	}
	data, _ := json.Marshal(cfgMap)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		return err
	}
	addr, err := benchproc.FreeAddr()
	if err != nil {
		return err
	}
	dataDir := filepath.Join(work, "index")
	binPath = bin
	prof, startProf := profArgs()
	cmd := exec.Command(bin, append(append([]string{"-blockchaincfg=" + cfg, "-datadir=" + dataDir, "-public=" + addr}, syncArgs(workers, syncMem)...), prof...)...)
	logFile, err := os.Create(filepath.Join(work, "blockbook.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill() //nolint:errcheck // after a clean stop it has exited already
	profWait := startProf()
	err = waitInSync(ctx, "http://"+addr, height, cmd)
	elapsed := time.Since(start)
	if err != nil {
		return fmt.Errorf("%w (log: %s)", err, logFile.Name())
	}
	_, hwm := benchproc.Mem(cmd.Process.Pid)
	// Queries after the sync: give the background compaction time to end.
	compaction := "none (no bulk load)"
	if logs, _ := os.ReadFile(logFile.Name()); strings.Contains(string(logs), "bulk sync finished") {
		compaction = waitLogLine(logFile.Name(), "compaction after bulk load finished", time.Minute)
	}
	if err := profWait(); err != nil {
		return err
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	// CPU of the whole run (sync, compaction after it, stop): steadier
	// than the wall time on a shared machine.
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	size := benchproc.DirSize(dataDir)
	printColumnStats(bin, cfg, dataDir)
	printRunesRows(dataDir)
	if logs, err := os.ReadFile(logFile.Name()); err == nil {
		for _, line := range strings.Split(string(logs), "\n") {
			if strings.Contains(line, "bulk") || strings.Contains(line, "sync finished") {
				fmt.Println("  log:", line)
			}
		}
	}

	l0, err := level0Files(dataDir)
	if err != nil {
		return err
	}
	bound, err := lowerBound(chainFile, filepath.Join(work, "bound"), benchFilters)
	if err != nil {
		return fmt.Errorf("lower bound: %w", err)
	}
	raws, err := rawBlocks(chainFile)
	if err != nil {
		return err
	}
	indep, rows, err := independentBound(raws, filepath.Join(work, "indep"), benchFilters.Enabled())
	if err != nil {
		return fmt.Errorf("independent lower bound: %w", err)
	}
	counts, err := rowCounts(filepath.Join(work, "bound"), filepath.Join(work, "indep"))
	if err != nil {
		return fmt.Errorf("row counts: %w", err)
	}
	crash := "kill -9 run skipped (-crash=false)"
	if *crashTest {
		if crash, err = crashRun(cfg, work, dataDir, height, syncArgs(workers, syncMem)); err != nil {
			return fmt.Errorf("kill -9 run: %w", err)
		}
	}

	via := "RPC"
	switch logs, _ := os.ReadFile(logFile.Name()); {
	case autoP2P && strings.Contains(string(logs), "auto-detected"):
		via = "P2P (auto-detected, no p2p_address)"
	case autoP2P:
		via = "RPC (P2P auto-detection failed, see the log)"
	case p2p:
		via = "P2P (p2p_address)"
	}
	filterNote := "block filters off (-filters=false)"
	if benchFilters.Enabled() {
		filterNote = fmt.Sprintf("block filters P=%d %s", benchFilters.P, benchFilters.Scripts)
	}
	fmt.Printf("initial sync of a generated regtest chain (%d blocks, %d txs) from btcd over %s, blockbook -workers=%d -syncmemory=%d, %s\n", height+1, txCount, via, workers, syncMem, filterNote)
	fmt.Printf("  time to in-sync at tip: %.2f s (from process start)\n", elapsed.Seconds())
	fmt.Printf("  throughput:             %.0f blocks/s, %.0f tx/s\n", float64(height+1)/elapsed.Seconds(), float64(txCount)/elapsed.Seconds())
	fmt.Printf("  peak RSS (VmHWM):       %.1f MB (budget %d MB)\n", float64(hwm)/(1<<20), syncMem)
	fmt.Printf("  CPU (user+system):      %.2f s (the whole run: sync, compaction, stop)\n", cpu.Seconds())
	fmt.Printf("  DB size:                %.1f MB\n", float64(size)/(1<<20))
	printBound(bound, indep, rows, elapsed)
	fmt.Println("rows per family, sync's bound / independent bound:", counts)
	fmt.Printf("background compaction after the sync: %s; level-0 files per column family then: %v\n", compaction, l0)
	fmt.Println(crash)
	return nil
}

// binPath is the blockbook binary under test.
var binPath string

// extraArgs are passed through to blockbook.
var extraArgs []string

func syncArgs(workers, syncMem int) []string {
	return append([]string{"-sync", "-internal=none", "-workers=" + strconv.Itoa(workers), "-syncmemory=" + strconv.Itoa(syncMem)}, extraArgs...)
}

// generate writes the benchmark chain file unless it exists.
func generate(path string, blocks, txs int) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "generating %d blocks with ~%d txs (once; cached in %s)\n", blocks, txs, path)
	switch chainKind {
	case "whale":
		return generateWhale(path, blocks, txs)
	case "runes":
		return generateRunes(path, blocks, txs)
	}
	g := chaingen.New(&chaincfg.RegressionNetParams, "bench")
	if err := g.Demo(chaingen.BenchSpec(&chaincfg.RegressionNetParams, blocks, txs)); err != nil {
		return err
	}
	return chaingen.WriteBlocksFile(path, g.Blocks())
}

// loadedNode starts a btcd node holding the chain, loading it only once. It
// returns the tip height and the number of txs of the chain.
func loadedNode(ctx context.Context, dir, chainFile string) (*regtest.Node, int32, int, error) {
	chain, err := chaingen.ReadBlocksFile(chainFile)
	if err != nil {
		return nil, 0, 0, err
	}
	txs := 0
	for _, b := range chain {
		txs += len(b.Transactions)
	}
	tip := int32(len(chain) - 1)
	o := regtest.Options{Dir: dir, Listen: true}
	if autoP2P {
		o.Host, o.DefaultP2PPort = regtest.RandomLoopback(), true
	}
	node, err := regtest.Start(ctx, o)
	if err != nil {
		return nil, 0, 0, err
	}
	h, _, err := node.BestBlock(ctx)
	if err != nil {
		node.Stop()
		return nil, 0, 0, err
	}
	if h < tip {
		fmt.Fprintf(os.Stderr, "loading the chain into btcd (once; cached in %s)\n", dir)
		if err := chaingen.SubmitBlocks(ctx, node, chain, h+1); err != nil {
			node.Stop()
			return nil, 0, 0, err
		}
	}
	return node, tip, txs, nil
}

// waitInSync polls the status until the index is in sync at height.
func waitInSync(ctx context.Context, base string, height int32, cmd *exec.Cmd) error {
	for {
		if cmd.ProcessState != nil {
			return errors.New("blockbook exited")
		}
		resp, err := http.Get(base + "/api/v2")
		if err == nil {
			var st struct {
				Blockbook struct {
					InSync     bool  `json:"inSync"`
					BestHeight int32 `json:"bestHeight"`
				} `json:"blockbook"`
			}
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err == nil && st.Blockbook.InSync && st.Blockbook.BestHeight == height {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitLogLine waits for a log line containing s and returns how long the
// wait took, or a note that it did not appear.
func waitLogLine(path, s string, limit time.Duration) string {
	start := time.Now()
	for time.Since(start) < limit {
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), s) {
			return fmt.Sprintf("done %.1f s after in-sync", time.Since(start).Seconds())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "not finished within " + limit.String()
}
