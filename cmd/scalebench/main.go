// Command scalebench measures blockbook's initial sync of a chain written
// by cmd/scalegen: it serves the chain from an in-process block server
// (JSON-RPC plus the P2P port), runs the blockbook binary from an empty
// datadir with -syncmemory (2048 by default) and samples, as the index
// grows, transactions indexed, RSS, the datadir's bytes and RocksDB's
// compaction debt. It writes the samples as CSV, a table of throughput per
// million transactions and an SVG plot of throughput and memory against
// chain size. Results go to docs/performance.md.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/scalegen"
)

type options struct {
	chain, bin, work, csv, svg string
	syncMem, workers           int
	interval, limit            time.Duration
	keep                       bool
	report, prof               string
}

func main() {
	var o options
	flag.StringVar(&o.chain, "chain", "", "directory written by cmd/scalegen (required)")
	flag.StringVar(&o.bin, "blockbook", "bin/blockbook", "blockbook binary")
	flag.StringVar(&o.work, "work", "", "directory for the index, config and log (default: a new temp dir)")
	flag.StringVar(&o.csv, "csv", "scalebench.csv", "where to write the samples")
	flag.StringVar(&o.svg, "svg", "scalebench.svg", "where to write the plot")
	flag.IntVar(&o.syncMem, "syncmemory", 2048, "blockbook -syncmemory (MB)")
	flag.IntVar(&o.workers, "workers", runtime.NumCPU(), "blockbook -workers")
	flag.DurationVar(&o.interval, "interval", 5*time.Second, "sampling interval")
	flag.DurationVar(&o.limit, "limit", 0, "stop after this long even if not in sync (0: no limit)")
	flag.BoolVar(&o.keep, "keep", false, "keep the index after the run")
	flag.StringVar(&o.prof, "prof", "", "pass -prof to blockbook: serve its pprof profiles on this address (heap profiles while it syncs)")
	flag.StringVar(&o.report, "report", "", "only rebuild the table and -svg from the samples of an earlier run (its CSV)")
	flag.Parse()
	run := run
	if o.report != "" {
		run = rereport
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

// sample is one observation of the running indexer.
type sample struct {
	elapsed       time.Duration
	height        int64
	txs           int64
	rss, hwm      int64
	dbBytes       int64
	level0        int64
	pendingBytes  int64
	cpuUser, cpuS float64 // seconds of CPU used so far
	mem           memParts
	probe         time.Duration // the CPU probe's median since the last sample (0: none)
}

// memParts splits the RSS: the Go runtime's mapped memory (less what it
// returned) and the index's native parts (blockbook_db_memory_bytes).
type memParts struct {
	goBytes, blockCache, memtables, tableReaders, mallocInUse, mallocFree int64
}

func memFromMetrics(m map[string]float64) memParts {
	part := func(p string) int64 { return int64(m[`blockbook_db_memory_bytes{part="`+p+`"}`]) }
	return memParts{goBytes: int64(m["go_memstats_sys_bytes"] - m["go_memstats_heap_released_bytes"]),
		blockCache: part("block_cache"), memtables: part("memtables"), tableReaders: part("table_readers"),
		mallocInUse: part("malloc_in_use"), mallocFree: part("malloc_free")}
}

// run starts the server and blockbook, samples until in sync (or -limit)
// and writes the report.
//
// Long: a benchmark script whose steps run once, in order.
func run(o options) error {
	if o.chain == "" {
		return fmt.Errorf("-chain is required")
	}
	srv, err := scalegen.Open(o.chain)
	if err != nil {
		return err
	}
	defer srv.Close()
	rpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	p2pLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.ServeRPC(rpcLn) }()
	go func() { _ = srv.ServeP2P(p2pLn) }()
	defer rpcLn.Close()
	defer p2pLn.Close()

	if o.work == "" {
		if o.work, err = os.MkdirTemp("", "scalebench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(o.work)
	}
	cfg := filepath.Join(o.work, "blockchaincfg.json")
	data, _ := json.Marshal(map[string]any{"coin_name": "Regtest", "rpc_url": "http://" + rpcLn.Addr().String(),
		"rpc_user": "bench", "rpc_pass": "bench", "parse": true, "block_addresses_to_keep": 300,
		"p2p_address": p2pLn.Addr().String()})
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		return err
	}
	public, err := benchproc.FreeAddr()
	if err != nil {
		return err
	}
	internal, err := benchproc.FreeAddr()
	if err != nil {
		return err
	}
	dataDir := filepath.Join(o.work, "index")
	logPath := filepath.Join(o.work, "blockbook.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close() //nolint:errcheck // the child writes it; nothing to flush here
	cmd := exec.Command(o.bin, "-blockchaincfg="+cfg, "-datadir="+dataDir, "-sync", "-public="+public,
		"-internal="+internal, "-workers="+strconv.Itoa(o.workers), "-syncmemory="+strconv.Itoa(o.syncMem))
	if o.prof != "" {
		cmd.Args = append(cmd.Args, "-prof="+o.prof)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited: //nolint:errcheck // stopping after the run: its exit status says nothing
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	fmt.Fprintf(os.Stderr, "serving %d blocks; blockbook -syncmemory=%d -workers=%d, log %s\n", srv.Tip()+1, o.syncMem, o.workers, logPath)

	prog := followProgress("http://"+internal+"/metrics", start)
	samples, synced, err := sampleUntilSynced(o, cmd.Process.Pid, public, internal, dataDir, srv.Tip(), start, exited)
	points := prog.Stop()
	if err != nil {
		return fmt.Errorf("%w (log: %s)", err, logPath)
	}
	if err := errors.Join(writeCSV(o.csv, samples), writeProgressCSV(progressPath(o.csv), points)); err != nil {
		return err
	}
	end := endLimit
	if synced {
		end = endSynced
	}
	rep := summarize(samples, points, o.syncMem, end)
	if err := os.WriteFile(o.svg, []byte(plotSVG(samples, rep, o.syncMem)), 0o644); err != nil {
		return err
	}
	fmt.Print(rep.text)
	return nil
}

// sampleUntilSynced polls the indexer every interval until its status is
// in sync at tip, -limit passes or it exits.
func sampleUntilSynced(o options, pid int, public, internal, dataDir string, tip int32, start time.Time, exited <-chan error) ([]sample, bool, error) {
	var out []sample
	probe := startCPUProbe(start)
	defer probe.Stop()
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return out, false, fmt.Errorf("blockbook exited: %v", err)
		case <-tick.C:
		}
		m := metrics("http://" + internal + "/metrics")
		s := sample{elapsed: time.Since(start), height: int64(m["blockbook_best_height"]), txs: int64(m["blockbook_index_txs_total"]),
			level0: int64(m["blockbook_db_level0_files"]), pendingBytes: int64(m["blockbook_db_pending_compaction_bytes"]),
			dbBytes: benchproc.DirSize(dataDir), mem: memFromMetrics(m)}
		s.rss, s.hwm = benchproc.Mem(pid)
		s.cpuUser, s.cpuS = cpuTimes(pid)
		var prev time.Duration
		if len(out) > 0 {
			prev = out[len(out)-1].elapsed
		}
		s.probe = probe.median(prev, s.elapsed)
		out = append(out, s)
		fmt.Fprintf(os.Stderr, "%6.0f s  height %d  %.2f M txs  RSS %.0f MB (peak %.0f; Go %.0f, cache %.0f, memtables %.0f, readers %.0f, malloc %.0f + %.0f free)  DB %.2f GB  L0 %d  pending %.2f GB\n",
			s.elapsed.Seconds(), s.height, float64(s.txs)/1e6, mb(s.rss), mb(s.hwm), mb(s.mem.goBytes), mb(s.mem.blockCache), mb(s.mem.memtables),
			mb(s.mem.tableReaders), mb(s.mem.mallocInUse), mb(s.mem.mallocFree), float64(s.dbBytes)/1e9, s.level0, float64(s.pendingBytes)/1e9)
		if benchproc.Synced("http://"+public, uint32(tip), false) {
			return out, true, nil
		}
		if o.limit > 0 && s.elapsed > o.limit {
			return out, false, nil
		}
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// cpuTimes reads the user and system CPU seconds of pid from /proc.
func cpuTimes(pid int) (user, sys float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// Fields after the command name (which may hold spaces) in ")".
	i := len(data) - 1
	for i > 0 && data[i] != ')' {
		i--
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return u / 100, s / 100 // clock ticks (USER_HZ is 100 on Linux)
}

// rereport rebuilds the table and the plot from an earlier run's CSV.
func rereport(o options) error {
	samples, err := readCSV(o.report)
	if err != nil {
		return err
	}
	points, err := readProgressCSV(progressPath(o.report))
	if err != nil {
		return err
	}
	rep := summarize(samples, points, o.syncMem, endRebuilt)
	if err := os.WriteFile(o.svg, []byte(plotSVG(samples, rep, o.syncMem)), 0o644); err != nil {
		return err
	}
	fmt.Print(rep.text)
	return nil
}
