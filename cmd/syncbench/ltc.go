package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/bchain/coins/ltc"
	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

// The -coin=litecoin bench syncs a chain made on a real litecoind by its
// wallet (tools/ltcregtest's scenario, MWEB from block 432, then -txs
// wallet payments of many outputs, peg-ins every few txs), generated once
// and cached as the node's directory. The figures are the Bitcoin bench's;
// the lower bound decodes the node's raw blocks with the Litecoin parser.

// ltcNode starts litecoind on the cached chain, generating it first if
// the cache has none. It returns the tip height and the number of txs.
func ltcNode(ctx context.Context, dir string, txs int) (*ltcregtest.Node, int32, int, error) {
	fresh := false
	if _, err := ltcregtest.LoadScenario(dir); err != nil {
		fresh = true
		if err := os.RemoveAll(dir); err != nil {
			return nil, 0, 0, err
		}
	}
	o := ltcregtest.Options{Dir: dir, Listen: true}
	if !fresh {
		o.Wallets = []string{ltcregtest.W, ltcregtest.MW}
	}
	n, err := ltcregtest.Start(ctx, o)
	if err != nil {
		return nil, 0, 0, err
	}
	if fresh {
		fmt.Fprintf(os.Stderr, "generating a litecoind chain with ~%d txs (once; cached in %s)\n", txs, dir)
		if err := ltcLoad(ctx, n, txs); err != nil {
			_ = n.Stop()
			return nil, 0, 0, err
		}
	}
	var info struct {
		Blocks int32 `json:"blocks"`
	}
	if err := n.CallResult(ctx, &info, "getblockchaininfo"); err != nil {
		_ = n.Stop()
		return nil, 0, 0, err
	}
	var stats struct {
		TxCount int `json:"txcount"`
	}
	if err := n.CallResult(ctx, &stats, "getchaintxstats"); err != nil {
		_ = n.Stop()
		return nil, 0, 0, err
	}
	return n, info.Blocks, stats.TxCount - 1, nil // less the genesis coinbase
}

// ltcLoad runs the scenario, then sends txs payments of 30 outputs each
// (a peg-in every 10th), mining a block every 40 txs. The scenario file is
// written last, so an interrupted generation is started over.
func ltcLoad(ctx context.Context, n *ltcregtest.Node, txs int) error {
	if _, err := ltcregtest.Generate(ctx, n); err != nil {
		return err
	}
	sc, err := ltcregtest.LoadScenario(n.Dir)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(n.Dir, "scenario.json")); err != nil {
		return err
	}
	w := n.Wallet(ltcregtest.W)
	var pool []string
	for i := 0; i < 300; i++ {
		var a string
		if err := w.CallResult(ctx, &a, "getnewaddress", "", []string{"bech32", "legacy", "p2sh-segwit"}[i%3]); err != nil {
			return err
		}
		pool = append(pool, a)
	}
	miner := pool[0]
	for i := 0; i < txs; i++ {
		var txid string
		if i%10 == 9 {
			err = w.CallResult(ctx, &txid, "sendtoaddress", sc.MWEBAddresses[i%2], "0.01")
		} else {
			outs := map[string]string{}
			for k := 0; k < 30; k++ {
				outs[pool[(i*31+k)%len(pool)]] = fmt.Sprintf("0.%07d", 1000+i%9000+k)
			}
			err = w.CallResult(ctx, &txid, "sendmany", "", outs)
		}
		if err != nil {
			return fmt.Errorf("tx %d: %w", i, err)
		}
		if i%40 == 39 || i == txs-1 {
			if _, err := n.Call(ctx, "generatetoaddress", 1, miner); err != nil {
				return err
			}
		}
		if i%1000 == 999 {
			fmt.Fprintf(os.Stderr, "  %d txs\n", i+1)
		}
	}
	data, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.Dir, "scenario.json"), data, 0o644)
}

// runLtc is run for -coin=litecoin: the same timed sync, RSS, DB size and
// kill -9 run on the litecoind chain.
func runLtc(bin string, txs, workers, syncMem int, cache string, p2p bool) error {
	ctx := context.Background()
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(dir, "openexplorer-blockbook", "bench")
	}
	node, height, txCount, err := ltcNode(ctx, filepath.Join(cache, fmt.Sprintf("litecoin-%d.node", txs)), txs)
	if err != nil {
		return err
	}
	defer node.Stop() //nolint:errcheck // the bench is over
	benchCoin, benchNetwork = "Litecoin Regtest", "litecoin-regtest"
	work, err := os.MkdirTemp("", "syncbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	cfgMap := map[string]any{"coin_name": benchCoin, "rpc_url": node.RPCURL, "rpc_user": node.RPCUser,
		"rpc_pass": node.RPCPass, "parse": true, "block_addresses_to_keep": 300, "message_queue_binding": "", "p2p_address": "none"}
	via := "RPC"
	if p2p {
		cfgMap["p2p_address"], via = node.P2PAddr, "P2P (p2p_address)"
	}
	cfg := filepath.Join(work, "blockchaincfg.json")
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
	cmd := exec.Command(bin, append([]string{"-blockchaincfg=" + cfg, "-datadir=" + dataDir, "-public=" + addr}, syncArgs(workers, syncMem)...)...)
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
	if err := waitInSync(ctx, "http://"+addr, height, cmd); err != nil {
		return fmt.Errorf("%w (log: %s)", err, logFile.Name())
	}
	elapsed := time.Since(start)
	_, hwm := benchproc.Mem(cmd.Process.Pid)
	compaction := "none (no bulk load)"
	if logs, _ := os.ReadFile(logFile.Name()); strings.Contains(string(logs), "bulk sync finished") {
		compaction = waitLogLine(logFile.Name(), "compaction after bulk load finished", time.Minute)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	size := benchproc.DirSize(dataDir)
	crash, err := crashRun(cfg, work, dataDir, height, syncArgs(workers, syncMem))
	if err != nil {
		return fmt.Errorf("kill -9 run: %w", err)
	}
	bound, err := ltcLowerBound(ctx, node, height, filepath.Join(work, "bound"))
	if err != nil {
		return fmt.Errorf("lower bound: %w", err)
	}
	fmt.Printf("initial sync of a litecoind regtest chain (%d blocks, %d txs, MWEB from %d) over %s, blockbook -workers=%d -syncmemory=%d\n",
		height+1, txCount, ltcregtest.MWEBHeight, via, workers, syncMem)
	fmt.Printf("  time to in-sync at tip: %.2f s (from process start)\n", elapsed.Seconds())
	fmt.Printf("  throughput:             %.0f blocks/s, %.0f tx/s\n", float64(height+1)/elapsed.Seconds(), float64(txCount)/elapsed.Seconds())
	fmt.Printf("  peak RSS (VmHWM):       %.1f MB (budget %d MB)\n", float64(hwm)/(1<<20), syncMem)
	fmt.Printf("  DB size:                %.1f MB\n", float64(size)/(1<<20))
	fmt.Printf("background compaction after the sync: %s\n", compaction)
	fmt.Println(crash)
	printBound(bound, indepTimes{}, 0, elapsed)
	return nil
}

// ltcLowerBound is the lower bound on the node's blocks 0..height.
func ltcLowerBound(ctx context.Context, n *ltcregtest.Node, height int32, dir string) (boundTimes, error) {
	raws, err := ltcRawBlocks(ctx, n, height)
	if err != nil {
		return boundTimes{}, err
	}
	return lowerBoundRaw(raws, ltc.NewParser(ltc.RegtestParams), benchCoin, benchNetwork, dir, benchFilters)
}

// ltcRawBlocks reads the node's blocks 0..height as it serializes them.
func ltcRawBlocks(ctx context.Context, n *ltcregtest.Node, height int32) ([][]byte, error) {
	raws := make([][]byte, height+1)
	for h := range raws {
		var hash, hexBlock string
		if err := n.CallResult(ctx, &hash, "getblockhash", h); err != nil {
			return nil, err
		}
		if err := n.CallResult(ctx, &hexBlock, "getblock", hash, 0); err != nil {
			return nil, err
		}
		raw, err := hex.DecodeString(hexBlock)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", h, err)
		}
		raws[h] = raw
	}
	return raws, nil
}
