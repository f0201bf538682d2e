// Command ethbench measures Ethereum-type indexing: it generates, once, a
// go-ethereum dev chain of -txs txs (ETH transfers between -accounts
// accounts, ERC20, ERC721 and ERC1155 transfers, Splitter calls moving value
// in internal transfers, failing txs), keeping the node's data dir in the
// user cache dir; then it serves that chain from an in-process dev node and
// runs the blockbook binary with processInternalTransactions (every block
// traced with callTracer) from an empty datadir until it is in sync at the
// tip. It prints blocks/s, txs/s, peak RSS and index size, a lower bound
// (fetching the same blocks with receipts and traces through the same
// backend, without indexing) and checks the index against the generator's
// ledger. Not run in CI; figures go to docs/performance.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/eth"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == boundArg {
		if err := fetchChild(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "ethbench fetch-only child:", err)
			os.Exit(1)
		}
		return
	}
	bin := flag.String("blockbook", "bin/blockbook", "blockbook binary")
	txs := flag.Int("txs", 20_000, "txs of the generated chain")
	accounts := flag.Int("accounts", 200, "accounts sending and receiving")
	perBlock := flag.Int("perblock", 100, "txs per block (each account sends at most one per block)")
	workers := flag.Int("workers", runtime.NumCPU(), "blockbook -workers, and the fetch bound's workers")
	cache := flag.String("cache", "", "where to keep the generated chain (default: the user cache dir)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of blockbook's first -profsec seconds of sync here (go tool pprof)")
	flag.DurationVar(&profDuration, "profsec", 5*time.Second, "length of the -cpuprofile profile")
	flag.StringVar(&extraArgs, "args", "", "more blockbook flags, space-separated (e.g. -bulkthreshold=0: the catch-up connects block by block)")
	flag.Parse()
	if *optimism { // the OP-stack figure, optimism.go
		if err := optimismMain(*bin, *txs, *accounts, *perBlock, *workers, *cache); err != nil {
			fmt.Fprintln(os.Stderr, "ethbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*bin, *txs, *accounts, *perBlock, *workers, *cache); err != nil {
		fmt.Fprintln(os.Stderr, "ethbench:", err)
		os.Exit(1)
	}
}

var quiet = slog.New(slog.DiscardHandler)

// run generates (or reuses) the chain, measures blockbook's indexing and
// the fetch lower bound, checks the index and REST answers against the
// generator's ledger and prints the report.
//
// Long: a benchmark script, its steps in the order they are timed; split
// up, the timed sequence would be scattered over helpers that run once.
func run(bin string, txs, accounts, perBlock, workers int, cache string) (err error) {
	if accounts < 3 || perBlock < 3 || txs < 1 {
		return fmt.Errorf("need -accounts >= 3, -perblock >= 3, -txs >= 1")
	}
	ctx := context.Background()
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(dir, "openexplorer-blockbook", "bench")
	}
	dir := filepath.Join(cache, fmt.Sprintf("eth-%d-%d-%d", txs, accounts, perBlock))
	exp, cached, err := loadOrGenerate(ctx, dir, txs, accounts, perBlock)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	how := "generated now"
	if cached {
		how = "cached; generated earlier"
	}
	fmt.Printf("chain: %d blocks (tip %d, %d with txs), %d txs (%d failed), %d token transfers, %d internal transfers; generation took %.1f s (%s, %s)\n",
		exp.Height+1, exp.Height, exp.Blocks, exp.Txs, exp.Failed, exp.TokenTransfers, exp.InternalTransfers, exp.GenSeconds, how, dir)
	fmt.Printf("  mix: %s\n", mix(exp.Kinds))

	// The node runs in this process and serves the stored chain.
	node, err := gethdev.Start(ctx, gethdev.Options{Dir: dir})
	if err != nil {
		return err
	}
	defer node.Stop()
	if h, hash := node.Head(); h != exp.Height || hash != exp.Head {
		return fmt.Errorf("the node's head is %d %s, the generator recorded %d %s: remove %s", h, hash, exp.Height, exp.Head, dir)
	}
	work, err := os.MkdirTemp("", "ethbench-")
	if err != nil {
		return err
	}
	defer func() {
		if err == nil { // kept after a failure, for blockbook's log
			os.RemoveAll(work)
		}
	}()
	cfg := map[string]any{"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": node.HTTPURL, "rpc_url_ws": node.WSURL,
		"rpc_timeout": 25, "block_addresses_to_keep": 300, "eip1559Fees": true, "processInternalTransactions": true}

	// A first pass brings the node's caches to the state a second reader
	// sees, so that indexing and the timed fetch meet the same node.
	cold, err := fetchBound(ctx, node, exp.Height, workers)
	if err != nil {
		return fmt.Errorf("fetch bound: %w", err)
	}

	var args []string
	var profDone <-chan error
	if cpuProfile != "" {
		if args, profDone, err = profileChild(cpuProfile, profDuration); err != nil {
			return err
		}
	}
	args = append(args, strings.Fields(extraArgs)...)
	selfCPU := cpuSelf()
	start := time.Now()
	p, err := benchproc.Start(ctx, benchproc.Options{Bin: bin, Work: work, Config: cfg, Workers: workers, Args: args,
		Height: uint32(exp.Height), Timeout: 30 * time.Minute})
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	if profDone != nil {
		if err := <-profDone; err != nil {
			fmt.Println("cpu profile:", err)
		}
	}
	_, hwm := benchproc.Mem(p.Pid()) // the high-water mark: the peak of the whole sync
	// CPU time says more than wall time on a shared machine: blockbook's
	// own, and this process's (mostly the node serving and tracing).
	childCPU, nodeCPU := cpuOf(p.Pid()), cpuSelf()-selfCPU
	memNow := memAtSync(p.Metrics(""))
	restErrs := checkREST(p.Public, exp)
	stopStart := time.Now()
	p.Stop()
	stopTook := time.Since(stopStart)
	logs, _ := os.ReadFile(p.LogPath)
	traceFails := strings.Count(string(logs), "block trace failed")
	indexDir := filepath.Join(work, "index")
	size, sizeParts := benchproc.DirSize(indexDir), benchproc.DirParts(indexDir)
	idx, err := countIndex(indexDir, exp)
	if err != nil {
		return fmt.Errorf("reading the index: %w", err)
	}

	fetch, err := fetchBound(ctx, node, exp.Height, workers)
	if err != nil {
		return fmt.Errorf("fetch bound: %w", err)
	}

	blocks := float64(exp.Height + 1)
	flags := strings.Join(append([]string{fmt.Sprintf("-workers=%d", workers)}, strings.Fields(extraArgs)...), " ")
	fmt.Printf("indexing by %s %s (processInternalTransactions, callTracer on every block) from an empty datadir; dev node in-process in ethbench\n", bin, flags)
	fmt.Printf("  time to in-sync at tip: %.2f s (from process start)\n", elapsed.Seconds())
	fmt.Printf("  throughput:             %.0f blocks/s, %.0f txs/s\n", blocks/elapsed.Seconds(), float64(exp.Txs)/elapsed.Seconds())
	fmt.Printf("  indexed:                %d txs, %d token transfers, %d internal transfers (from the index's address rows)\n", idx.txs, idx.tokens, idx.internal)
	fmt.Printf("  CPU time:               blockbook %.2f s, dev node (the ethbench process) %.2f s\n", childCPU.Seconds(), nodeCPU.Seconds())
	fmt.Printf("  peak RSS (VmHWM):       %.1f MB (largest sampled every 50 ms: anonymous %.1f MB, file-backed %.1f MB)\n",
		float64(hwm)/(1<<20), float64(p.PeakAnon)/(1<<20), float64(p.PeakFile)/(1<<20))
	fmt.Printf("  memory at in-sync:      %s\n", memNow)
	fmt.Printf("  index size:             %.1f MB (after a clean stop, which took %.2f s: %s)\n", float64(size)/(1<<20), stopTook.Seconds(), benchproc.FormatParts(sizeParts))
	fmt.Printf("  bytes per tx:           %.0f (index size / %d txs)\n", float64(size)/float64(exp.Txs), exp.Txs)
	fmt.Printf("lower bound, the same blocks with receipts and traces fetched by the sync worker's fetch pipeline (syncer.FetchOnly, %d workers, batched runs) in a child process, not indexed: %.2f s (%.0f blocks/s, %.0f txs/s), peak RSS %.1f MB; first pass, node just started: %.2f s\n",
		workers, fetch.d.Seconds(), blocks/fetch.d.Seconds(), float64(fetch.txs)/fetch.d.Seconds(), float64(fetch.rss)/(1<<20), cold.d.Seconds())
	fmt.Printf("  CPU time: fetch-only child %.2f s, dev node %.2f s\n", fetch.childCPU.Seconds(), (fetch.cpu - fetch.childCPU).Seconds())
	fmt.Printf("ratio sync / fetch-only bound: %.2f wall time; %.2f CPU time (fetch: %.2f s in node and client; sync: blockbook + node)\n",
		elapsed.Seconds()/fetch.d.Seconds(), (childCPU+nodeCPU).Seconds()/fetch.cpu.Seconds(), fetch.cpu.Seconds())

	var errs []string
	errs = append(errs, restErrs...)
	if traceFails > 0 {
		errs = append(errs, fmt.Sprintf("%d block traces failed (log %s)", traceFails, p.LogPath))
	}
	if idx.txs != exp.Txs || idx.tokens != exp.TokenTransfers || idx.internal != exp.InternalTransfers {
		errs = append(errs, fmt.Sprintf("index has %d txs, %d token and %d internal transfers; the generator made %d, %d, %d",
			idx.txs, idx.tokens, idx.internal, exp.Txs, exp.TokenTransfers, exp.InternalTransfers))
	}
	if fetch.txs != exp.Txs || fetch.traceErrs > 0 {
		errs = append(errs, fmt.Sprintf("fetch bound got %d txs (want %d), %d blocks with trace errors", fetch.txs, exp.Txs, fetch.traceErrs))
	}
	if len(errs) > 0 {
		for _, e := range errs[:min(len(errs), 20)] {
			fmt.Println("MISMATCH:", e)
		}
		return fmt.Errorf("%d checks failed: the run is not valid (blockbook's log: %s)", len(errs), p.LogPath)
	}
	fmt.Printf("check: the index and REST answers of all %d addresses (txs, nonTokenTxs, internalTxs, balance, nonce) match the generator's ledger\n", len(exp.Addresses))
	return nil
}

func mix(kinds map[string]int) string {
	var parts []string
	for _, k := range []string{"funding", "deploy", "ETH transfer", "erc20 transfer", "erc721 mint", "erc721 transfer", "erc1155 mint",
		"erc1155 transfer", "erc1155 batch transfer", "Splitter call (internal transfers)", "Reverter.tryInner", "failed (revert)", "failed (ERC20 above balance)"} {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}

// checkREST compares the address answer of every address the generator
// knows with its ledger.
func checkREST(public string, exp *expect) []string {
	var errs []string
	for _, want := range exp.Addresses {
		var got api.Address
		resp, err := http.Get("http://" + public + "/api/v2/address/" + want.Addr.Hex() + "?details=basic")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", want.Name, err))
			continue
		}
		bal := ""
		if got.Balance != nil {
			bal = got.Balance.String()
		}
		if got.Txs != want.Txs || got.NonTokenTxs != want.NonTokenTxs || got.InternalTxs != want.InternalTxs ||
			bal != want.Balance.String() || got.Nonce != strconv.FormatUint(want.Nonce, 10) {
			errs = append(errs, fmt.Sprintf("%s %s: txs %d/%d/%d balance %s nonce %s, want %d/%d/%d %s %d", want.Name, want.Addr.Hex(),
				got.Txs, got.NonTokenTxs, got.InternalTxs, bal, got.Nonce, want.Txs, want.NonTokenTxs, want.InternalTxs, want.Balance, want.Nonce))
		}
	}
	return errs
}

type indexCounts struct{ txs, tokens, internal int }

// countIndex opens the stopped index read-only and counts the distinct
// txs, token transfers and internal transfers its address rows file under
// the generator's addresses (every party of every tx is one of them).
func countIndex(dir string, exp *expect) (indexCounts, error) {
	var c indexCounts
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainEthereumType, Coin: "Ethereum Regtest", Network: "regtest", ReadOnly: true, Log: quiet})
	if err != nil {
		return c, err
	}
	defer d.Close()
	type role struct {
		tx    bchain.Hash
		index uint32
	}
	txs := map[bchain.Hash]bool{}
	tokens, internal := map[role]bool{}, map[role]bool{}
	for _, a := range exp.Addresses {
		err := db.IterateEthAddrTxs(d, bchain.AddrDesc(a.Addr.Bytes()), uint32(exp.Height), 0, func(at db.EthAddrTxsAt) (bool, error) {
			for _, t := range at.Txs {
				txs[t.Txid] = true
				for _, r := range t.Roles {
					switch r.Kind {
					case db.EthRoleToken:
						tokens[role{t.Txid, r.Index}] = true
					case db.EthRoleInternal:
						internal[role{t.Txid, r.Index}] = true
					}
				}
			}
			return true, nil
		})
		if err != nil {
			return c, err
		}
	}
	return indexCounts{len(txs), len(tokens), len(internal)}, nil
}

// cpuSelf is this process's CPU time (user and system).
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuOf is a running process's CPU time from /proc/<pid>/stat (utime and
// stime, in clock ticks of 1/100 s on Linux).
func cpuOf(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name, which may hold spaces.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}
