// Command querybench measures REST query latency against an index of a
// cached generated chain (by default cmd/syncbench's whale chain): page 1
// of the busiest address's history (details=txids and details=txslight)
// and a tx lookup, each cold (the index reopened and a fresh service
// before every query, so RocksDB's block cache is empty; the OS page cache
// is not dropped) and warm (repeated queries on one service). It prints the
// median and p99. The index is built once per index format version
// (db.FormatVersion) with the bulk loader, so the same command measures two
// builds with different formats side by side. With -scale it queries
// instead an index synced by cmd/scalebench from a cmd/scalegen chain
// (scale.go). Not run in CI; figures go to docs/performance.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/benchindex"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

var params = &chaincfg.RegressionNetParams

// dbCache is the block cache of every index open (-dbcache).
var dbCache int64

// txidCacheMB is -txidcachemb: the txid cache of every service.
var txidCacheMB int64

func main() {
	chain := flag.String("chain", "", "chain file (default: the whale chain of -whaleblocks and -whaletxs, whale-<blocks>-<txs>.blk in the user cache dir, generated if absent)")
	flag.IntVar(&whaleBlocks, "whaleblocks", 800, "without -chain: the whale chain's length (syncbench's: 800)")
	flag.IntVar(&whaleTxs, "whaletxs", 150_000, "without -chain: the whale chain's approximate tx count (syncbench's: 150000)")
	index := flag.String("index", "", "where to keep the index (default: beside the chain file, named by chain and format version)")
	cold := flag.Int("cold", 20, "cold queries per query kind")
	warm := flag.Int("warm", 200, "warm queries per query kind")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.StringVar(&memProfile, "memprofile", "", "write an allocation profile of the whole run to this file")
	flag.IntVar(&runs, "runs", 3, "time the query list this many times, alternating the queries")
	onlyRe := flag.String("only", "", "time only the queries whose name matches this regexp")
	flag.Int64Var(&dbCache, "dbcache", 1<<29, "RocksDB block cache in bytes, as blockbook's -dbcache (same default)")
	flag.Int64Var(&txidCacheMB, "txidcachemb", db.DefaultTxidCacheMB, "the txid cache in MB, as blockbook's -txidcachemb (same default; 0: none); each service (so each cold query) starts with an empty one")
	flag.BoolVar(&meshBench, "mesh", false, "also time the Mesh front: /block of the largest block, /account/balance of the busiest address at past blocks, /search/transactions for it")
	scale := flag.String("scale", "", "scale mode: query the index in -datadir of this cmd/scalegen chain directory")
	dataDir := flag.String("datadir", "", "scale mode: the index cmd/scalebench synced (its -work dir's index)")
	specs := flag.String("queries", "", "scale mode: also write the query list to this file (JSON) for cmd/routebench")
	compact := flag.Bool("compact", true, "scale mode: compact the index fully first, as blockbook does after a bulk sync (this changes -datadir); false times it as it was left")
	flag.Parse()
	if *onlyRe != "" {
		only = regexp.MustCompile(*onlyRe)
	}
	if *cold < 1 || runs < 1 || *warm < 1 {
		fmt.Fprintln(os.Stderr, "querybench: -cold and -warm must be at least 1 (medians of nothing)")
		os.Exit(2)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "querybench:", err)
			os.Exit(1)
		}
	}
	var err error
	if *scale != "" {
		err = runScale(*scale, *dataDir, *compact, *cold, *warm, *specs)
	} else {
		err = run(*chain, *index, *cold, *warm)
	}
	pprof.StopCPUProfile() // a no-op without -cpuprofile
	if err != nil {
		fmt.Fprintln(os.Stderr, "querybench:", err)
		os.Exit(1)
	}
}

// chainTxs serves the chain's raw txs by txid, as the node would for
// confirmed txs (the API reads the tx itself from the node, the rest from
// the index). The txs are kept in one buffer, placed by a map without
// pointers, so that the garbage collector has nothing to mark in them: the
// node is another process, and 151,000 slices here made every GC cycle
// of the server's process mark them.
type chainTxs struct {
	at  map[bchain.Hash][2]int // offset and length in raw
	raw []byte
}

func (c *chainTxs) add(txid bchain.Hash, raw []byte) {
	c.at[txid] = [2]int{len(c.raw), len(raw)}
	c.raw = append(c.raw, raw...)
}

func (c *chainTxs) RawTx(_ context.Context, txid bchain.Hash, _ bchain.Hash) ([]byte, error) {
	if p, ok := c.at[txid]; ok {
		return c.raw[p[0] : p[0]+p[1] : p[0]+p[1]], nil
	}
	return nil, bchain.ErrTxNotFound
}

func (c *chainTxs) TxSpecific(context.Context, bchain.Hash, bchain.Hash) (json.RawMessage, error) {
	return nil, errors.New("querybench: no node-specific tx JSON")
}

// run builds (or reuses) the index, picks the queries and times them.
//
// Long: a benchmark script, its steps in the order they are timed; split
// up, the timed sequence would be scattered over helpers that run once.
func run(chainFile, indexDir string, cold, warm int) error {
	if chainFile == "" {
		var err error
		if chainFile, err = whaleChain(); err != nil {
			return err
		}
	}
	if indexDir == "" {
		indexDir = fmt.Sprintf("%s.querybench-v%d.index", chainFile[:len(chainFile)-len(filepath.Ext(chainFile))], db.FormatVersion)
	}
	blocks, err := chaingen.ReadBlocksFile(chainFile)
	if err != nil {
		return err
	}
	parser := btc.NewParser(params)
	txs, whale, probe, utxoAddr, err := survey(parser, blocks)
	if err != nil {
		return err
	}
	if err := benchindex.Build(indexDir, parser, blocks); err != nil {
		return err
	}
	// The parsed chain is dead while timing (only its tx counts are kept):
	// millions of pointers the GC would mark in the server's process,
	// where blockbook holds none.
	chainLen := len(blocks)
	blockTxs := make([]int, len(blocks))
	for h, b := range blocks {
		blockTxs[h] = len(b.Transactions)
	}
	addrs, _, err := parser.AddressesFromAddrDesc(whale.desc)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("address of the busiest descriptor %x: %v", whale.desc, err)
	}
	log := slog.New(slog.DiscardHandler)
	backend := &bchain.Backend{Type: bchain.ChainBitcoinType,
		Params: bchain.CoinParams{Name: "Regtest", Shortcut: "rBTC", Network: "regtest", Testnet: true, Decimals: 8, Slip44: 1},
		Utxo:   parser, Addresses: parser, Txs: txs}
	front := func(handler func(*api.UtxoService) http.Handler) opener {
		return func() (*db.DB, *httptest.Server, error) {
			d, err := rocksdb.Open(db.Options{Path: indexDir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
				ReadOnly: true, CacheBytes: dbCache, Log: log})
			if err != nil {
				return nil, nil, err
			}
			return d, httptest.NewServer(handler(api.NewUtxoService(d, backend, nil, api.Config{Log: log, TxidCache: db.NewTxidCache(txidCacheMB << 20)}))), nil
		}
	}
	open := front(func(svc *api.UtxoService) http.Handler {
		return server.NewPublic(svc, server.PublicConfig{}, log, prometheus.NewRegistry()).Handler()
	})
	utxoAddrs, _, err := parser.AddressesFromAddrDesc(utxoAddr.desc)
	if err != nil || len(utxoAddrs) == 0 {
		return fmt.Errorf("address of descriptor %x: %v", utxoAddr.desc, err)
	}
	queries := issueQueries(issueTargets{busiest: addrs[0],
		utxoWhale: addrs[0], utxoName: "utxo of the busiest address", utxoBound: utxoBound(open, whale.desc),
		near: utxoAddrs[0], nearUtxos: utxoAddr.txs,
		txName: "tx lookup (" + probe.what + ")", txPaths: []string{"/api/v2/tx/" + probe.txid.String()}}, nil)
	fmt.Printf("chain %s: %d blocks, %d txs; index format %d in %s\n", filepath.Base(chainFile), chainLen, len(txs.at), db.FormatVersion, indexDir)
	fmt.Printf("busiest address %s: %d txs\n", addrs[0], whale.txs)
	if err := timeQueries(open, queries, cold, warm); err != nil {
		return err
	}
	if meshBench {
		return timeMesh(front, blockTxs, addrs[0], cold, warm)
	}
	return nil
}

type busiest struct {
	desc bchain.AddrDesc
	txs  int
}

type probeTx struct {
	txid bchain.Hash
	what string
}

// survey serializes the chain's txs for the tx source and finds the
// descriptor paid or spent from by the most txs (by its outputs and the
// outputs its inputs spend), the tx to look up: the last tx of the
// middle block that spends more than one output (else its first
// non-coinbase tx), and the descriptor whose unspent outputs number
// closest to utxoTarget (in its busiest's txs field: the UTXO count).
func survey(parser *btc.Parser, blocks []*wire.MsgBlock) (*chainTxs, busiest, probeTx, busiest, error) {
	txs := &chainTxs{at: map[bchain.Hash][2]int{}}
	outDesc := map[wire.OutPoint]string{}
	count := map[string]int{}
	var probe probeTx
	// The middle block, or on a chain whose first half is coinbases only
	// (a short whale chain) the middle of the blocks with txs.
	mid := len(blocks) / 2
	if len(blocks[mid].Transactions) < 2 {
		first := mid
		for first < len(blocks)-1 && len(blocks[first].Transactions) < 2 {
			first++
		}
		mid = first + (len(blocks)-first)/2
	}
	for h, b := range blocks {
		for i, tx := range b.Transactions {
			var buf bytes.Buffer
			if err := tx.Serialize(&buf); err != nil {
				return nil, busiest{}, probeTx{}, busiest{}, err
			}
			txid := tx.TxHash()
			txs.add(btc.DisplayHash(txid), buf.Bytes())
			touched := map[string]bool{}
			if i > 0 {
				for _, in := range tx.TxIn {
					if d, ok := outDesc[in.PreviousOutPoint]; ok {
						touched[d] = true
						delete(outDesc, in.PreviousOutPoint)
					}
				}
			}
			for n, o := range tx.TxOut {
				if d := parser.OutputAddrDesc(o.PkScript); d != nil {
					outDesc[wire.OutPoint{Hash: txid, Index: uint32(n)}] = string(d)
					touched[string(d)] = true
				}
			}
			for d := range touched {
				count[d]++
			}
			if h == mid && i > 0 && (probe.what == "" || len(tx.TxIn) > 1) {
				probe = probeTx{txid: btc.DisplayHash(txid), what: fmt.Sprintf("%d inputs, %d outputs, block %d", len(tx.TxIn), len(tx.TxOut), h)}
			}
		}
	}
	var top busiest
	for d, n := range count {
		if n > top.txs || (n == top.txs && d < string(top.desc)) {
			top = busiest{desc: bchain.AddrDesc(d), txs: n}
		}
	}
	if top.txs == 0 || probe.what == "" {
		return nil, busiest{}, probeTx{}, busiest{}, errors.New("chain has no address or no tx to query")
	}
	return txs, top, probe, closestUtxoCount(outDesc), nil
}
