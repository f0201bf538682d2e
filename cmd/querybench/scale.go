package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	"github.com/openexplorer/blockbook/tools/querytime"
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

// runScale times issue 46's queries (issueQueries) and the HD account's
// on an index that blockbook synced from a scalegen chain (cmd/scalebench
// -work DIR -keep leaves it in DIR/index); specsFile, if set, gets the
// list for cmd/routebench.
//
// Long: a benchmark script, its steps in the order they run, as run's.
func runScale(chainDir, indexDir string, compact bool, cold, warm int, specsFile string) error {
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
	probes, err := pickProbes(chain)
	if err != nil {
		return err
	}
	open := scaleOpener(indexDir, parser, scalegen.NewTxSource(chain))
	cached, uncached := open(api.Config{}), open(api.Config{DisableXpubCache: true})
	fmt.Printf("chain %s: tip %d, %d txs; index format %d in %s, %.2f GB\n", chainDir, chain.Tip(), st.Txs, db.FormatVersion, indexDir, float64(benchproc.DirSize(indexDir))/1e9)
	t, err := scaleTargets(cached, parser, st)
	if err != nil {
		return err
	}
	t.txName = fmt.Sprintf("tx lookup (%d txs, 10%%..90%% of the tip)", len(probes))
	for _, p := range probes {
		fmt.Printf("tx %s: %s\n", p.txid, p.what)
		t.txPaths = append(t.txPaths, "/api/v2/tx/"+p.txid.String())
	}
	var xpub []query
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
		fmt.Printf("xpub %s…: %d txs (stats.json: %d), BIP84, gap 20; \"cache off\": warm without the xpub cache, %d queries (cold is always a fresh cache)\n",
			st.Account.Xpub[:20], n, st.Account.Txs, slow)
		xpub = []query{
			{Name: "xpub page 1 (details=txids, 1000 per page)", Paths: []string{xp + "?page=1"}},
			{Name: "xpub page 1 (details=txids), cache off", Paths: []string{xp + "?page=1"}, Open: uncached, Warm: slow},
			{Name: "xpub page 1 (details=txslight, 50 per page)", Paths: []string{xp + "?page=1&pageSize=50&details=txslight"}},
			{Name: "xpub page 1 (txslight, 50 per page), cache off", Paths: []string{xp + "?page=1&pageSize=50&details=txslight"}, Open: uncached, Warm: slow},
		}
	}
	queries := issueQueries(t, xpub)
	if specsFile != "" {
		if err := writeSpecs(specsFile, queries); err != nil {
			return err
		}
	}
	// The stand-in node's txs of every query (a 1,000-tx page's from as
	// many blocks) are read now: cold queries should find the index
	// cold, not the node.
	if err := querytime.Prime(cached, queries, querytime.Options{Only: only}); err != nil {
		return err
	}
	return timeQueries(cached, queries, cold, warm)
}

// scaleOpener returns openers of the index, read-only, with a service
// over it configured by cfg (a txid cache of -txidcachemb added).
func scaleOpener(indexDir string, parser *btc.Parser, txs *scalegen.TxSource) func(api.Config) opener {
	log := slog.New(slog.DiscardHandler)
	backend := &bchain.Backend{Type: bchain.ChainBitcoinType,
		Params: bchain.CoinParams{Name: "Regtest", Shortcut: "rBTC", Network: "regtest", Testnet: true, Decimals: 8, Slip44: 1},
		Utxo:   parser, Addresses: parser, Txs: txs, Xpub: btc.NewXpubParser(params, btc.Magics{}, 1)}
	return func(cfg api.Config) opener {
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
}

// writeSpecs writes the queries for cmd/routebench. The only queries
// with an opener of their own are those without the xpub cache.
func writeSpecs(path string, queries []query) error {
	specs := make([]querytime.Spec, len(queries))
	for i, q := range queries {
		specs[i] = querytime.Spec{Name: q.Name, Paths: q.Paths, NoXpubCache: q.Open != nil}
	}
	return querytime.WriteSpecs(path, specs)
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
