// Command routebench times a list of REST queries (cmd/querybench -scale
// -queries writes the list) on an index cmd/scalebench synced from a
// cmd/scalegen chain, through the REST server in its own process, cold
// and warm, in alternating runs (tools/querytime, querybench's harness).
// It uses only APIs an older tree has too (rocksdb.Open,
// api.NewUtxoService, server.NewPublic, scalegen), so that the same
// source, copied into a worktree of an older commit and built there,
// times the same queries over that commit's server: the "before" of a
// before/after on one index. Not run in CI; figures go to
// docs/performance.md.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime/pprof"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/querytime"
	"github.com/openexplorer/blockbook/tools/scalegen"
)

// configure completes each service's configuration as blockbook's
// defaults would (txidcache.go: the txid cache, in trees that have it).
var configure = func(*api.Config) {}

func main() {
	chainDir := flag.String("scale", "", "the cmd/scalegen chain directory (required)")
	indexDir := flag.String("datadir", "", "the index cmd/scalebench synced from it (required; opened read-only)")
	specsFile := flag.String("queries", "", "the query list, as cmd/querybench -queries writes it (required)")
	cold := flag.Int("cold", 20, "cold queries per query")
	warm := flag.Int("warm", 200, "warm queries per query (one without the xpub cache: as many as -cold)")
	runs := flag.Int("runs", 3, "time the list this many times, alternating the queries")
	onlyRe := flag.String("only", "", "time only the queries whose name matches this regexp")
	dbCache := flag.Int64("dbcache", 1<<29, "RocksDB block cache in bytes, as blockbook's -dbcache (same default)")
	samples := flag.String("samples", "", "append every sample to this CSV file: label,query,cold|warm,µs")
	label := flag.String("label", "", "the samples' label (the build)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *chainDir == "" || *indexDir == "" || *specsFile == "" || *cold < 1 || *warm < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "routebench: -scale, -datadir and -queries are required; -cold, -warm and -runs at least 1")
		os.Exit(2)
	}
	o := querytime.Options{Runs: *runs, Label: *label}
	if *onlyRe != "" {
		o.Only = regexp.MustCompile(*onlyRe)
	}
	if err := profiled(*cpuProfile, *samples, func() error {
		return run(*chainDir, *indexDir, *specsFile, *dbCache, *cold, *warm, o)
	}, &o); err != nil {
		fmt.Fprintln(os.Stderr, "routebench:", err)
		os.Exit(1)
	}
}

// profiled runs f with the samples file open in o (when named) and a CPU
// profile written (when named), closing both before it returns.
func profiled(cpuProfile, samples string, f func() error, o *querytime.Options) (err error) {
	if samples != "" {
		sf, err := os.OpenFile(samples, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := sf.Close(); err == nil {
				err = cerr
			}
		}()
		o.Samples = sf
	}
	if cpuProfile != "" {
		pf, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close() //nolint:errcheck // a profile's close error loses only the profile
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return f()
}

func run(chainDir, indexDir, specsFile string, dbCache int64, cold, warm int, o querytime.Options) error {
	specs, err := querytime.ReadSpecs(specsFile)
	if err != nil {
		return err
	}
	chain, err := scalegen.Open(chainDir)
	if err != nil {
		return err
	}
	defer chain.Close()
	params := &chaincfg.RegressionNetParams
	parser := btc.NewParser(params)
	log := slog.New(slog.DiscardHandler)
	backend := &bchain.Backend{Type: bchain.ChainBitcoinType,
		Params: bchain.CoinParams{Name: "Regtest", Shortcut: "rBTC", Network: "regtest", Testnet: true, Decimals: 8, Slip44: 1},
		Utxo:   parser, Addresses: parser, Txs: scalegen.NewTxSource(chain), Xpub: btc.NewXpubParser(params, btc.Magics{}, 1)}
	open := func(noXpubCache bool) querytime.Opener {
		return func() (*db.DB, *httptest.Server, error) {
			d, err := rocksdb.Open(db.Options{Path: indexDir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
				ReadOnly: true, CacheBytes: dbCache, Log: log})
			if err != nil {
				return nil, nil, err
			}
			cfg := api.Config{Log: log, DisableXpubCache: noXpubCache}
			configure(&cfg)
			svc := api.NewUtxoService(d, backend, nil, cfg)
			return d, httptest.NewServer(server.NewPublic(svc, server.PublicConfig{}, log, prometheus.NewRegistry()).Handler()), nil
		}
	}
	queries := make([]querytime.Query, len(specs))
	for i, s := range specs {
		queries[i] = querytime.Query{Name: s.Name, Paths: s.Paths}
		if s.NoXpubCache {
			queries[i].Open, queries[i].Warm = open(true), min(warm, cold)
		}
	}
	fmt.Printf("chain %s, index %s (format %d), %d queries from %s\n", chainDir, indexDir, db.FormatVersion, len(queries), specsFile)
	// The stand-in node's txs of every query are read now: cold queries
	// should find the index cold, not the node.
	if err := querytime.Prime(open(false), queries, o); err != nil {
		return err
	}
	return querytime.TimeQueries(open(false), queries, cold, warm, o)
}
