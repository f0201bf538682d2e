package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/btcsuite/btcd/wire/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/scalegen"
)

// scaleStats is what scale mode reads of the chain's stats.json; Account
// is absent in chains from before the generator had an HD account.
type scaleStats struct {
	Txs      int
	WhaleTxs []int
	Account  *struct {
		Xpub string
		Txs  int
	}
}

// runScale times the queries on an index that blockbook synced from a
// scalegen chain (cmd/scalebench -work DIR -keep leaves it in DIR/index):
// page 1 of the largest whale's history and of the HD account's, and tx
// lookups at several heights.
//
// Long: a benchmark script, its steps in the order they run, as run's.
func runScale(chainDir, indexDir string, compact bool, cold, warm int) error {
	if indexDir == "" {
		return errors.New("-scale needs -datadir (the index cmd/scalebench synced)")
	}
	if compact {
		if err := compactIndex(indexDir); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(filepath.Join(chainDir, "stats.json"))
	if err != nil {
		return err
	}
	var st scaleStats
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("stats.json: %w", err)
	}
	chain, err := scalegen.Open(chainDir)
	if err != nil {
		return err
	}
	defer chain.Close()
	parser := btc.NewParser(params)
	whale, _, err := parser.AddressesFromAddrDesc(parser.OutputAddrDesc(scalegen.WhaleScript(0)))
	if err != nil || len(whale) == 0 {
		return fmt.Errorf("address of whale 0: %v", err)
	}
	txs := &blockTxs{chain: chain}
	probes, err := pickProbes(chain)
	if err != nil {
		return err
	}
	// Read the probes' blocks into the fake node's cache now: cold
	// queries should find the index cold, not the node.
	for _, p := range probes {
		if _, err := txs.RawTx(context.Background(), p.txid, p.block); err != nil {
			return fmt.Errorf("tx %s: %w", p.txid, err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	backend := &bchain.Backend{Type: bchain.ChainBitcoinType,
		Params: bchain.CoinParams{Name: "Regtest", Shortcut: "rBTC", Network: "regtest", Testnet: true, Decimals: 8, Slip44: 1},
		Utxo:   parser, Addresses: parser, Txs: txs, Xpub: btc.NewXpubParser(params, btc.Magics{}, 1)}
	open := func(cfg api.Config) opener {
		return func() (*db.DB, *httptest.Server, error) {
			d, err := rocksdb.Open(db.Options{Path: indexDir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
				ReadOnly: true, CacheBytes: dbCache, Log: log})
			if err != nil {
				return nil, nil, err
			}
			cfg.Log, cfg.TxidCache = log, db.NewTxidCache(txidCacheMB<<20)
			svc := api.NewUtxoService(d, backend, nil, cfg)
			return d, httptest.NewServer(server.NewPublic(svc, server.PublicConfig{}, log, prometheus.NewRegistry()).Handler()), nil
		}
	}
	cached, uncached := open(api.Config{}), open(api.Config{DisableXpubCache: true})

	fmt.Printf("chain %s: tip %d, %d txs; index format %d in %s, %.2f GB\n", chainDir, chain.Tip(), st.Txs, db.FormatVersion, indexDir, float64(benchproc.DirSize(indexDir))/1e9)
	type query struct {
		name  string
		open  opener
		paths []string
		warm  int
	}
	wp := "/api/v2/address/" + whale[0]
	n, err := txCount(cached, wp)
	if err != nil {
		return err
	}
	fmt.Printf("whale 0 %s: %d txs (stats.json: %d)\n", whale[0], n, st.WhaleTxs[0])
	queries := []query{
		{"whale page 1 (details=txids, 1000 per page)", cached, []string{wp + "?page=1"}, warm},
		{"whale page 1 (details=txslight, 50 per page)", cached, []string{wp + "?page=1&pageSize=50&details=txslight"}, warm},
	}
	if st.Account == nil || st.Account.Xpub == "" {
		fmt.Println("xpub: stats.json has no Account (a chain from before the HD account); xpub queries skipped")
	} else {
		xp := "/api/v2/xpub/" + st.Account.Xpub
		n, err := txCount(cached, xp)
		if err != nil {
			return err
		}
		// Without the cache every query costs about a cold one (keys
		// derived, txid lists read): as few warm ones as cold ones.
		slow := min(warm, cold)
		fmt.Printf("xpub %s…: %d txs (stats.json: %d); \"cache off\": warm without the xpub cache, %d queries (cold is always a fresh cache)\n",
			st.Account.Xpub[:20], n, st.Account.Txs, slow)
		queries = append(queries,
			query{"xpub page 1 (details=txids, 1000 per page)", cached, []string{xp + "?page=1"}, warm},
			query{"xpub page 1 (details=txids), cache off", uncached, []string{xp + "?page=1"}, slow},
			query{"xpub page 1 (details=txslight, 50 per page)", cached, []string{xp + "?page=1&pageSize=50&details=txslight"}, warm},
			query{"xpub page 1 (txslight, 50 per page), cache off", uncached, []string{xp + "?page=1&pageSize=50&details=txslight"}, slow})
	}
	tq := query{name: fmt.Sprintf("tx lookup (%d txs, 10%%..90%% of the tip)", len(probes)), open: cached, warm: warm}
	for _, p := range probes {
		fmt.Printf("tx %s: %s\n", p.txid, p.what)
		tq.paths = append(tq.paths, "/api/v2/tx/"+p.txid.String())
	}
	for _, q := range append(queries, tq) {
		if err := timeQuery(q.open, q.name, q.paths, cold, q.warm); err != nil {
			return err
		}
	}
	return nil
}

// txCount is an address's or account's tx count as the API reports it.
func txCount(open opener, path string) (int, error) {
	d, srv, err := open()
	if err != nil {
		return 0, err
	}
	defer d.Close()
	defer srv.Close()
	var a struct {
		Txs int `json:"txs"`
	}
	if _, _, err := benchproc.TimeGet(srv.URL+path+"?details=basic", &a); err != nil {
		return 0, err
	}
	return a.Txs, nil
}

// probe is a tx to look up and the block the index will name for it.
type probe struct {
	txid, block bchain.Hash
	what        string
}

// pickProbes picks a tx in each of the blocks at 10, 30, 50, 70 and 90%
// of the tip, as the whale-chain mode picks its one: the block's last tx
// spending more than one output, else its first non-coinbase tx.
func pickProbes(chain *scalegen.Server) ([]probe, error) {
	var out []probe
	for _, pct := range []int32{10, 30, 50, 70, 90} {
		h := chain.Tip() * pct / 100
		raw, err := chain.Block(h)
		if err != nil {
			return nil, err
		}
		var b wire.MsgBlock
		if err := b.Deserialize(bytes.NewReader(raw)); err != nil {
			return nil, fmt.Errorf("block %d: %w", h, err)
		}
		var pick *wire.MsgTx
		for _, tx := range b.Transactions[1:] {
			if pick == nil || len(tx.TxIn) > 1 {
				pick = tx
			}
		}
		if pick == nil {
			continue // a coinbase-only block
		}
		out = append(out, probe{txid: btc.DisplayHash(pick.TxHash()), block: btc.DisplayHash(b.BlockHash()),
			what: fmt.Sprintf("%d inputs, %d outputs, block %d", len(pick.TxIn), len(pick.TxOut), h)})
	}
	if len(out) == 0 {
		return nil, errors.New("no tx to look up: the chain's probe blocks hold only coinbases")
	}
	return out, nil
}

// blockTxs plays the node for the API's confirmed-tx reads: the index
// names the tx's block, which is read from the chain directory and split
// into txs. The node is not what this benchmark measures, so the last few
// blocks stay parsed in memory: warm queries (and cold ones, which run
// after the blocks were read once) do not time block reads and parsing.
type blockTxs struct {
	chain  *scalegen.Server
	mu     sync.Mutex
	recent []cachedBlock // most recently used first
}

type cachedBlock struct {
	hash bchain.Hash
	txs  map[bchain.Hash][]byte
}

// blockCacheSize holds the tx lookups' blocks with room to spare.
const blockCacheSize = 8

func (b *blockTxs) RawTx(_ context.Context, txid, inBlock bchain.Hash) ([]byte, error) {
	if inBlock.IsZero() {
		return nil, bchain.ErrTxNotFound // as a node without -txindex: no mempool here
	}
	txs, err := b.block(inBlock)
	if err != nil {
		return nil, err
	}
	raw, ok := txs[txid]
	if !ok {
		return nil, bchain.ErrTxNotFound
	}
	return raw, nil
}

func (b *blockTxs) TxSpecific(context.Context, bchain.Hash, bchain.Hash) (json.RawMessage, error) {
	return nil, errors.New("querybench: no node-specific tx JSON")
}

// block returns the txs of a block by txid, from the cache or the chain.
func (b *blockTxs) block(hash bchain.Hash) (map[bchain.Hash][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, c := range b.recent {
		if c.hash == hash {
			copy(b.recent[1:i+1], b.recent[:i])
			b.recent[0] = c
			return c.txs, nil
		}
	}
	h, ok := b.chain.Height(btc.InternalHash(hash))
	if !ok {
		return nil, bchain.ErrTxNotFound
	}
	raw, err := b.chain.Block(h)
	if err != nil {
		return nil, err
	}
	var msg wire.MsgBlock
	locs, err := msg.DeserializeTxLoc(bytes.NewBuffer(raw))
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", h, err)
	}
	txs := make(map[bchain.Hash][]byte, len(locs))
	for i, l := range locs {
		txs[btc.DisplayHash(msg.Transactions[i].TxHash())] = raw[l.TxStart : l.TxStart+l.TxLen]
	}
	b.recent = append([]cachedBlock{{hash, txs}}, b.recent[:min(len(b.recent), blockCacheSize-1)]...)
	return txs, nil
}

// compactIndex does what blockbook does after a bulk sync and scalebench,
// which stops at the tip, leaves undone: a full compaction. Queries on a
// served index meet one file per level, not a bulk load's overlapping
// level-0 files, each with its own filter to read.
func compactIndex(indexDir string) error {
	start := time.Now()
	d, err := rocksdb.Open(db.Options{Path: indexDir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	l0, pending := d.CompactionDebt()
	cf, err := d.CompactAll()
	d.Close()
	if err != nil {
		return fmt.Errorf("compacting %s: %w", cf, err)
	}
	fmt.Printf("index compacted in %.0f s (it had %d level-0 files, %.2f GB pending compaction)\n", time.Since(start).Seconds(), l0, float64(pending)/1e9)
	return nil
}
