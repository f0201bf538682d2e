package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/eth"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
)

// Every flag Blockbook's packaging passes is accepted; ones without effect
// are reported, not fatal.
func TestFlagsAcceptBlockbookPackaging(t *testing.T) {
	args := strings.Fields(`-blockchaincfg=/etc/blockbook/blockchaincfg.json -datadir=/opt/data -sync -internal=:9030 -public=:9130
		-certfile=/opt/cert/blockbook -explorer= -log_dir=/opt/logs -prof=127.0.0.1:0 -resyncindexperiod=30011 -resyncmempoolperiod=2011
		-workers=4 -dbcache=1073741824 -dbmaxopenfiles=4096 -extendedindex -enablesubnewtx -notxcache -logtostderr -dryrun -rollback=-1 -v=1
		-chunk=50 -blockheight=7`)
	o, err := ParseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Sync || o.Workers != 4 || o.DBCache != 1<<30 || o.ResyncIndexMs != 30011 || !o.NoTxCache || !o.DryRun ||
		!o.EnableSubNewTx || o.ResyncMempoolMs != 2011 || o.CertFile != "/opt/cert/blockbook" || o.LogDir != "/opt/logs" || !o.LogToStderr {
		t.Fatalf("parsed %+v", o)
	}
	var logs bytes.Buffer
	o.warnNoEffect(slog.New(slog.NewTextHandler(&logs, nil)))
	for _, f := range []string{"-chunk", "-blockheight", "-dryrun"} {
		if strings.Count(logs.String(), f) != 1 {
			t.Errorf("want one warning for %s:\n%s", f, logs.String())
		}
	}
	for _, f := range []string{"-explorer", "-enablesubnewtx", "-resyncmempoolperiod", "-certfile", "-log_dir", "-extendedindex"} {
		if strings.Contains(logs.String(), f) {
			t.Errorf("%s should not warn (empty, or it takes effect):\n%s", f, logs.String())
		}
	}
	if _, err := ParseFlags([]string{"-datadir=x"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-blockchaincfg") {
		t.Fatalf("missing -blockchaincfg: %v", err)
	}
	for _, bad := range []string{"-nosuchflag", "-computecolumnstats", "-template=x", "-chunk=many", "-stderrthreshold=LOUD"} {
		if _, err := ParseFlags([]string{"-blockchaincfg=x", bad}, io.Discard); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func runWith(t *testing.T, cfg string, dataDir string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cfg.json")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &Options{BlockchainCfg: path, DataDir: dataDir, Public: "none", Internal: "none", Workers: 1,
		DBCache: 8 << 20, Rollback: -1, SyncMemoryMB: 64, ResyncMempoolMs: 60017, DryRun: true}
	return Run(context.Background(), o, slog.New(slog.DiscardHandler))
}

// Configuration mistakes stop the program with a message naming the key.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ cfg, want string }{
		{`{"coin_name":"Bitcoin"}`, "rpc_url"},
		{`{"rpc_url":"http://127.0.0.1:1"}`, "coin_name"},
		{`{"coin_name":"Bitcoinz","rpc_url":"http://127.0.0.1:1"}`, `unknown coin_name "Bitcoinz" (supported: Arbitrum, Arbitrum Archive, `}, // the list grows with every coin
		{`{"coin_name":"Bitcoin","rpc_url":"not a url"}`, "rpc_url"},
		{`{"coin_name":"Bitcoin","rpc_url":"http://x","block_notifications":"carrier-pigeon"}`, "block_notifications"},
		{`{"coin_name":"Bitcoin","rpc_url":"http://x","block_notifications":"zmq"}`, "message_queue_binding"},
		{`{"coin_name": "Bitcoin", `, "not valid JSON"},
	} {
		err := runWith(t, c.cfg, t.TempDir())
		if !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a config error mentioning %q", c.cfg, err, c.want)
		}
	}
}

// An Ethereum-type config is served (index and API): a dry run gets as far
// as asking the node.
func TestEthereumConfigAccepted(t *testing.T) {
	err := runWith(t, `{"coin_name":"Ethereum Regtest","rpc_url":"http://127.0.0.1:1"}`, t.TempDir())
	if err == nil || errors.Is(err, bchain.ErrConfig) || !strings.HasPrefix(err.Error(), "node:") {
		t.Fatalf("got %v, want the dry run to fail only at the unreachable node", err)
	}
}

// A datadir written by Blockbook itself, or for another coin or network, is
// refused with a clear message and left untouched.
func TestForeignDatadirStopsTheProgram(t *testing.T) {
	// Blockbook's own layout is refused by rocksdb.Open (db/rocksdb's
	// foreign-datadir tests); here: the refusal stops the program with
	// ErrIncompatible (exit code 2), not a crash or a resync.
	cfg := `{"coin_name":"Bitcoin","rpc_url":"http://127.0.0.1:1"}`
	// An index of ours for Regtest refuses to serve as Bitcoin.
	dir := t.TempDir()
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest"})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	err = runWith(t, cfg, dir)
	if !errors.Is(err, db.ErrIncompatible) || !strings.Contains(err.Error(), `created for coin "Regtest"`) {
		t.Fatalf("other coin: %v", err)
	}
}

// Every shipped config loads, names a registered coin whose parser accepts
// that network's addresses, and every registered coin has a config and a
// parser check here.
func TestShippedConfigs(t *testing.T) {
	validAddress := map[string]string{
		"Bitcoin":          "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		"Testnet":          "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
		"Testnet4":         "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
		"Signet":           "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
		"Regtest":          "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
		"Litecoin":         "ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9",
		"Litecoin Testnet": "tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7klfsuq0",
		"Litecoin Regtest": "rltc1qw508d6qejxtdg4y5r3zarvary0c5xw7k693xs3",
		"Bcash":            "bitcoincash:qqxgjelx8qk85t9xfk8g2zlunxmhxms6p55xarv2r5",
		"Bcash Testnet":    "bchtest:qp86jfla8084048rckpv85ht90falr050s03ejaesm",
		"ECash":            "ecash:qrcl220pxeec78vnchwyh6fsdyf60uv9tca7668slm",
		"Dash":             "XkycBX1ykVXXs92pAi6ZQwZPEre9kSHHKH",
		"Dash Testnet":     "yZw2EYuVkTNUzUqd7mfXRNhCMReonL99tu",
		"DigiByte":         "dgb1qwdzu3cxvcte7g5f8ze4dsn83wf6x8zdvw927dx",
		"DigiByte Testnet": "dgbt1qwdzu3cxvcte7g5f8ze4dsn83wf6x8zdvm0qxst",
		// Groestlcoin and Vertcoin: addresses recorded in Blockbook's parser tests.
		"Groestlcoin":         "FtM4zAn9aVYgHgxmamWBgWPyZsb6RhvkA9",
		"Groestlcoin Testnet": "tgrs1qejqxwzfld7zr6mf7ygqy5s5se5xq7vmt9lkd57",
		"Groestlcoin Signet":  "tgrs1qejqxwzfld7zr6mf7ygqy5s5se5xq7vmt9lkd57",
		"Groestlcoin Regtest": "grsrt1qejqxwzfld7zr6mf7ygqy5s5se5xq7vmtpe8j53",
		"Vertcoin":            "vtc1qd80qaputavyhtvszlz9zprueqch0qd003g520j",
		"Vertcoin Testnet":    "tvtc1qd80qaputavyhtvszlz9zprueqch0qd00x6hruc",
		"Zcash":               "t1Y4yL14ACHaAbjemkdpW7nYNHWnv1yQbDA",
		"Zcash Testnet":       "tmGz4M4P2m3aPTriH3b1pzukMxhWykpVGni",
	}
	validAddress["Dogecoin"] = "DHZYinsaM9nW5piCMN639ELRKbZomThPnZ"
	validAddress["Dogecoin Testnet"] = "neYNjrnowpYrbS4QanPngXBi6MQcX6FsWV"
	validAddress["Namecoin"] = "N9dLs1zHRfZr5cJNjSrvhWrrUcmNSthdmz"
	validAddress["Tron"] = "TJngGWiRMLgNFScEybQxLEKQMNdB4nR6Vx"              // Blockbook's parser test
	validAddress["Tron Testnet Nile"] = "TXyYbRRkixvU3YYDvmt4seDRNv2ErqPLV1" // Blockbook's Nile fixtures
	for _, name := range eth.NetworkNames() {
		validAddress[name] = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" // EIP-55
	}
	files, err := filepath.Glob("../configs/coins/*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("configs: %v %v", files, err)
	}
	configured := map[string]bchain.ChainType{}
	for _, f := range files {
		cfg, err := bchain.LoadConfig(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		configured[cfg.CoinName] = b.Type
		if _, err := b.Addresses.AddrDescFromAddress(validAddress[cfg.CoinName]); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if _, err := b.Addresses.AddrDescFromAddress(validAddress["Bitcoin"]); cfg.CoinName != "Bitcoin" && err == nil {
			t.Errorf("%s accepts a Bitcoin mainnet address", f)
		}
		if b.Type == bchain.ChainEthereumType && (b.Eth == nil || b.Utxo != nil) {
			t.Errorf("%s: an Ethereum-type backend without its Ethereum part", f)
		}
		if b.Params.PublicPort == 0 || b.Params.InternalPort == 0 {
			t.Errorf("%s: no default ports", f)
		}
	}
	for _, name := range bchain.CoinNames() {
		if _, ok := validAddress[name]; !ok {
			t.Errorf("coin %s has no parser check in this test", name)
		}
		typ, ok := configured[name]
		if _, isBtc := btc.ParamsFor(name); typ == bchain.ChainBitcoinType && !isBtc {
			t.Errorf("coin %s is not a Bitcoin-type network", name)
		}
		if !ok && name != "Testnet4" {
			t.Errorf("coin %s has no configs/coins file", name)
		}
	}
}

// Mistakes in the fiat keys stop the program at start (-dryrun too) with
// the key named.
func TestFiatConfigErrors(t *testing.T) {
	for _, c := range []struct{ keys, want string }{
		{`"fiat_rates":"coinmarketcap","fiat_rates_params":"{\"coin\":\"bitcoin\",\"periodSeconds\":900}"`, `fiat_rates: unknown provider "coinmarketcap"`},
		{`"fiat_rates":"coingecko","fiat_rates_params":"{\"coin\":\"bitcoin\"}"`, "fiat_rates_params: missing periodSeconds"},
		{`"fiat_rates":"coingecko","fiat_rates_params":"coin=bitcoin"`, "fiat_rates_params is not a valid JSON object"},
	} {
		err := runWith(t, `{"coin_name":"Bitcoin","rpc_url":"http://127.0.0.1:1",`+c.keys+`}`, t.TempDir())
		if !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a config error mentioning %q", c.keys, err, c.want)
		}
	}
}
