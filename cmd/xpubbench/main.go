// Command xpubbench measures account queries: REST xpub/{xpub} latency
// (median and p99) for a BIP84 account with 500 used addresses and 20,000
// txs, with the account cache cold (a fresh service per query: keys derived
// and txid lists read again) and warm (repeated queries), and balance
// history latency for an address with 100,000 txs. The chain is generated
// with chaingen and indexed directly (no node), both once and cached like
// cmd/syncbench's chain. Not run in CI; figures go to docs/performance.md.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

func main() {
	cache := flag.String("cache", "", "where to keep the generated chain and its index (default: the user cache dir)")
	used := flag.Int("used", 500, "used addresses of the account")
	txs := flag.Int("txs", 20_000, "txs of the account")
	histTxs := flag.Int("histtxs", 100_000, "txs of the balance-history address")
	cold := flag.Int("cold", 30, "cold-cache queries")
	warm := flag.Int("warm", 300, "warm-cache queries")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the queries to this file")
	only := flag.String("only", "", "time only the queries whose name matches this regexp (and not the one-address balance history)")
	flag.Parse()
	var onlyRe *regexp.Regexp
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "xpubbench: -only:", err)
			os.Exit(2)
		}
		onlyRe = re
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "xpubbench:", err)
			os.Exit(1)
		}
	}
	err := run(*cache, *used, *txs, *histTxs, *cold, *warm, onlyRe)
	pprof.StopCPUProfile() // a no-op without -cpuprofile
	if err != nil {
		fmt.Fprintln(os.Stderr, "xpubbench:", err)
		os.Exit(1)
	}
}

var params = &chaincfg.RegressionNetParams

// run builds (or reuses) the chain and its index, then times the xpub
// queries cold and warm and prints the report.
//
// Long: a benchmark script, its steps in the order they are timed; split
// up, the timed sequence would be scattered over helpers that run once.
func run(cache string, used, txs, histTxs, cold, warm int, only *regexp.Regexp) error {
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(dir, "openexplorer-blockbook", "bench")
	}
	name := fmt.Sprintf("xpub-%d-%d-%d", used, txs, histTxs)
	chainFile := filepath.Join(cache, name+".blk")
	acct, err := chaingen.NewHDAccount(params, chaingen.HDSeed("xpubbench"), chaingen.BIP84, 0)
	if err != nil {
		return err
	}
	hist, err := acct.Address(1, 1_000_000) // an address outside the gap: only the history query reads it
	if err != nil {
		return err
	}
	if err := generate(chainFile, acct, used, txs, histTxs); err != nil {
		return err
	}
	indexDir := filepath.Join(cache, name+".index")
	if err := buildIndex(chainFile, indexDir); err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	d, err := rocksdb.Open(db.Options{Path: indexDir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
		CacheBytes: 512 << 20, ReadOnly: true, Log: log})
	if err != nil {
		return err
	}
	defer d.Close()
	backend := &bchain.Backend{Type: bchain.ChainBitcoinType,
		Params: bchain.CoinParams{Name: "Regtest", Shortcut: "rBTC", Network: "regtest", Testnet: true, Decimals: 8, Slip44: 1},
		Utxo:   btc.NewParser(params), Addresses: btc.NewParser(params),
		Xpub: btc.NewXpubParser(params, btc.Magics{}, 1)}
	newServer := func() *httptest.Server {
		svc := api.NewUtxoService(d, backend, nil, api.Config{Log: log})
		return httptest.NewServer(server.NewPublic(svc, server.PublicConfig{}, log, prometheus.NewRegistry()).Handler())
	}
	xpub := acct.Xpub()
	queries := []struct{ name, path string }{
		{"xpub details=basic", "/api/v2/xpub/" + xpub + "?details=basic"},
		{"xpub details=txids, 25 per page, tokens=used", "/api/v2/xpub/" + xpub + "?details=txids&pageSize=25&tokens=used"},
		{"xpub details=tokenBalances tokens=derived", "/api/v2/xpub/" + xpub + "?details=tokenBalances&tokens=derived"},
		{"utxo of the account", "/api/v2/utxo/" + xpub},
		{"balancehistory of the account, daily", "/api/v2/balancehistory/" + xpub + "?groupBy=86400"},
	}
	fmt.Printf("account: BIP84 %s, %d used addresses, %d txs; index in %s\n", xpub[:20]+"…", used, txs, indexDir)
	first := true
	for _, q := range queries {
		if only != nil && !only.MatchString(q.name) {
			continue
		}
		var coldTimes, warmTimes []time.Duration
		for range cold {
			srv := newServer()
			d, size, err := benchproc.TimeGet(srv.URL+q.path, new(any))
			srv.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			if first {
				fmt.Printf("  first query after opening the index (RocksDB cache cold too): %s, %d bytes\n", d.Round(time.Microsecond), size)
				first = false
			}
			coldTimes = append(coldTimes, d)
		}
		srv := newServer()
		if _, _, err := benchproc.TimeGet(srv.URL+q.path, new(any)); err != nil {
			return err
		}
		size := 0
		for range warm {
			d, n, err := benchproc.TimeGet(srv.URL+q.path, new(any))
			if err != nil {
				return err
			}
			warmTimes, size = append(warmTimes, d), n
		}
		srv.Close()
		fmt.Printf("  %-48s cold: median %8s p99 %8s | warm: median %8s p99 %8s (%d bytes)\n", q.name,
			benchproc.Percentile(coldTimes, 50), benchproc.Percentile(coldTimes, 99), benchproc.Percentile(warmTimes, 50), benchproc.Percentile(warmTimes, 99), size)
	}
	if only != nil {
		return nil
	}
	srv := newServer()
	defer srv.Close()
	var times []time.Duration
	var buckets []api.BalanceHistory
	for range 11 {
		d, _, err := benchproc.TimeGet(srv.URL+"/api/v2/balancehistory/"+hist+"?groupBy=86400", &buckets)
		if err != nil {
			return err
		}
		times = append(times, d)
	}
	n := 0
	for _, b := range buckets {
		n += int(b.Txs)
	}
	fmt.Printf("balance history of one address with %d txs (%d daily buckets): median %s p99 %s over %d queries\n",
		n, len(buckets), benchproc.Percentile(times, 50), benchproc.Percentile(times, 99), len(times))
	return nil
}
