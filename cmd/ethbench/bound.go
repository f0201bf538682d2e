package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// boundArg, as the first argument, makes ethbench the fetch-only child:
// ethbench -fetch-child <rpc url> <tip> <workers>.
const boundArg = "-fetch-child"

type fetchResult struct {
	d, cpu         time.Duration // the child's wall time; its CPU time and the node's
	childCPU       time.Duration // the child's CPU time alone
	rss            int64         // the child's peak RSS (VmHWM)
	txs, traceErrs int
}

// childReport is what the fetch-only child prints on stdout.
type childReport struct {
	Txs, TraceErrs int
	PeakRSS        int64 // VmHWM at the end
}

// fetchBound runs the fetch-only lower bound in a child process, as
// blockbook runs beside the node: the same blocks 0..tip fetched with
// receipts and traces through the sync worker's own fetch pipeline
// (syncer.FetchOnly: the same workers, batched runs and window), decoded
// and discarded. Its time runs from the child's start to its exit, as the
// sync's runs from blockbook's start to in-sync.
func fetchBound(ctx context.Context, node *gethdev.Node, tip uint64, workers int) (fetchResult, error) {
	var r fetchResult
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, self, boundArg, node.HTTPURL, strconv.FormatUint(tip, 10), strconv.Itoa(workers))
	cmd.Stderr = os.Stderr
	nodeCPU, start := cpuSelf(), time.Now()
	out, err := cmd.Output()
	r.d = time.Since(start)
	if err != nil {
		return r, fmt.Errorf("fetch-only child: %w", err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r.childCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	r.cpu = r.childCPU + cpuSelf() - nodeCPU
	var rep childReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return r, fmt.Errorf("fetch-only child said %q: %w", out, err)
	}
	r.txs, r.traceErrs, r.rss = rep.Txs, rep.TraceErrs, rep.PeakRSS
	return r, nil
}

// fetchChild is the fetch-only child's main.
func fetchChild(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: ethbench %s <rpc url> <tip> <workers>", boundArg)
	}
	tip, err1 := strconv.ParseUint(args[1], 10, 32)
	workers, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("bad tip %q or workers %q", args[1], args[2])
	}
	raw, _ := json.Marshal(map[string]any{"coin_name": "Ethereum Regtest", "rpc_url": args[0], "rpc_timeout": 25,
		"eip1559Fees": true, "processInternalTransactions": true})
	cfg, err := bchain.ParseConfig(raw)
	if err != nil {
		return err
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: quiet})
	if err != nil {
		return err
	}
	defer b.Close() //nolint:errcheck // closing the node connection after the measurement
	var txs, traceErrs atomic.Int64
	err = syncer.FetchOnly(context.Background(), b.Chain, 0, uint32(tip), syncer.Config{Workers: workers}, quiet, func(blk *bchain.Block) error {
		txs.Add(int64(len(blk.Eth.Txs)))
		if blk.Eth.TraceError != "" {
			traceErrs.Add(1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, hwm := benchproc.Mem(os.Getpid())
	return json.NewEncoder(os.Stdout).Encode(childReport{Txs: int(txs.Load()), TraceErrs: int(traceErrs.Load()), PeakRSS: hwm})
}

var (
	cpuProfile   string
	profDuration time.Duration
	extraArgs    string // -args: more blockbook flags
)

// profileChild returns blockbook's extra arguments serving pprof on a free
// port, and starts fetching a CPU profile of its first d into path as soon
// as the port answers.
func profileChild(path string, d time.Duration) ([]string, <-chan error, error) {
	addr, err := benchproc.FreeAddr()
	if err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() {
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))
		for range 200 {
			resp, err := http.Get(url)
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			defer resp.Body.Close()
			f, err := os.Create(path)
			if err == nil {
				_, err = io.Copy(f, resp.Body)
				err = errors.Join(err, f.Close())
			}
			done <- err
			return
		}
		done <- fmt.Errorf("blockbook's pprof server at %s did not answer", addr)
	}()
	return []string{"-prof=" + addr}, done, nil
}
