package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"

	"github.com/openexplorer/blockbook/db/fiat"
)

// options are the command-line flags. Names follow Blockbook's so that an
// operator can swap binaries under an existing service unit.
type options struct {
	blockchainCfg  string
	dataDir        string
	sync           bool
	public         string
	internal       string
	workers        int
	dbCache        int64
	dbMaxOpenFiles int
	rollback       int64
	resyncIndexMs  int
	syncMemoryMB   int64
	bulkThreshold  int
	noTxCache      bool
	dryRun         bool
	verbosity      int
	logFormat      string
	prof           string

	// Websocket API and mempool.
	enableSubNewTx   bool
	resyncMempoolMs  int
	wsAllowedOrigins string
	wsMaxConnsPerIP  int
	wsTrustedProxies string

	// Accounts (xpubs, descriptors) and balance histories.
	noXpubCache          bool
	xpubMaxGap           int
	xpubCacheSize        int
	balanceHistoryMaxTxs int

	// Accepted for compatibility; their features come in later releases or
	// do not apply. Set ones are reported at start.
	ignored map[string]*string

	// onListen, when set, is told each server's actual address (tests bind
	// port 0).
	onListen func(server, addr string)
	// fiatConfig and onFiat, when set, adjust the fiat downloader's
	// configuration and receive the downloader (tests: request pacing,
	// Refresh).
	fiatConfig func(*fiat.Config)
	onFiat     func(*fiat.Downloader)
}

// ignoredFlags are Blockbook flags we accept without acting on them yet.
var ignoredFlags = []struct {
	name, why string
	isBool    bool
}{
	{"extendedindex", "extended index is not implemented yet", true},
	{"explorer", "external explorer redirect is not supported; the built-in explorer arrives later", false},
	{"certfile", "TLS is not served directly; terminate TLS in a reverse proxy", false},
	{"logtostderr", "logs always go to stderr", true},
	{"alsologtostderr", "logs always go to stderr", true},
	{"log_dir", "logs go to stderr; let the service manager store them", false},
	{"computecolumnstats", "column statistics are not implemented", true},
	{"template", "not applicable", false},
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{ignored: map[string]*string{}}
	fs := flag.NewFlagSet("blockbook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.blockchainCfg, "blockchaincfg", "", "path to the blockchain configuration file (blockchaincfg.json)")
	fs.StringVar(&o.dataDir, "datadir", "./data", "path to the index database directory")
	fs.BoolVar(&o.sync, "sync", false, "run the sync worker: index new blocks and follow the node")
	fs.StringVar(&o.public, "public", "", "public server binding [address]:port (default: the coin's public port on all interfaces; \"none\" disables it)")
	fs.StringVar(&o.internal, "internal", "", "internal server binding for /metrics and /health (default: the coin's internal port on 127.0.0.1; \"none\" disables it)")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "number of workers fetching and decoding blocks during catch-up")
	fs.Int64Var(&o.dbCache, "dbcache", 1<<29, "RocksDB block cache size in bytes")
	fs.IntVar(&o.dbMaxOpenFiles, "dbmaxopenfiles", 1<<14, "maximum number of files RocksDB keeps open")
	fs.Int64Var(&o.rollback, "rollback", -1, "roll the index back to this height and exit")
	fs.IntVar(&o.resyncIndexMs, "resyncindexperiod", 0, "how often (ms) to poll the node for a new tip besides push notifications (default 1000)")
	fs.Int64Var(&o.syncMemoryMB, "syncmemory", 512, "memory budget in MB of the sync (blocks fetched ahead, UTXO cache, pending rows, RocksDB memtables; the block cache too while bulk loading)")
	fs.IntVar(&o.bulkThreshold, "bulkthreshold", 500, "load blocks in bulk (sorted files ingested per round) when at least this many behind the node; 0 disables")
	fs.BoolVar(&o.noTxCache, "notxcache", false, "do not cache transactions fetched from the node")
	fs.BoolVar(&o.dryRun, "dryrun", false, "check the configuration, the database and the node, then exit")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity: 0 info, 1 or more debug")
	fs.StringVar(&o.logFormat, "logformat", "text", "log format: text or json")
	fs.BoolVar(&o.enableSubNewTx, "enablesubnewtx", false, "allow websocket clients to subscribe to every new mempool tx (subscribeNewTransaction)")
	fs.IntVar(&o.resyncMempoolMs, "resyncmempoolperiod", 60017, "how often (ms) the whole mempool is compared with the node's, besides tx notifications")
	fs.StringVar(&o.wsAllowedOrigins, "wsallowedorigins", "", "comma-separated browser origins allowed to open the websocket (e.g. https://wallet.example); empty allows all")
	fs.IntVar(&o.wsMaxConnsPerIP, "wsmaxconnsperip", 0, "maximum concurrent websocket connections per client IP (IPv6: per /64); 0 means unlimited")
	fs.StringVar(&o.wsTrustedProxies, "wstrustedproxies", "", "comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client IP")
	fs.BoolVar(&o.noXpubCache, "noxpubcache", false, "do not keep accounts (derived addresses, txid lists) between xpub queries")
	fs.IntVar(&o.xpubMaxGap, "xpubmaxgap", 10000, "largest gap limit an xpub query may ask for (larger ones are lowered to it, as Blockbook does)")
	fs.IntVar(&o.xpubCacheSize, "xpubcachesize", 4_000_000, "capacity of the account cache in derived addresses plus txids (about 60 bytes each)")
	fs.IntVar(&o.balanceHistoryMaxTxs, "balancehistorymaxtxs", 1_000_000, "most txs one balance history may go through; more is an error asking to narrow from/to")
	fs.StringVar(&o.prof, "prof", "", "serve Go's pprof profiles on this address (e.g. 127.0.0.1:6060); keep it private")
	for _, f := range ignoredFlags {
		dst := new(string)
		o.ignored[f.name] = dst
		fs.Var(ignoredValue{dst: dst, isBool: f.isBool}, f.name, "accepted for compatibility with Blockbook; no effect: "+f.why)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.blockchainCfg == "" {
		return nil, fmt.Errorf("missing -blockchaincfg: the path to the blockchain configuration file")
	}
	if o.workers < 1 {
		o.workers = 1
	}
	if o.syncMemoryMB < 64 {
		return nil, fmt.Errorf("-syncmemory must be at least 64 (MB)")
	}
	if o.bulkThreshold < 0 {
		return nil, fmt.Errorf("-bulkthreshold must not be negative")
	}
	if o.resyncMempoolMs < 100 {
		return nil, fmt.Errorf("-resyncmempoolperiod must be at least 100 (ms)")
	}
	if o.xpubMaxGap < 1 || o.xpubCacheSize < 1 || o.balanceHistoryMaxTxs < 1 {
		return nil, fmt.Errorf("-xpubmaxgap, -xpubcachesize and -balancehistorymaxtxs must be positive (-noxpubcache turns the cache off)")
	}
	if o.wsMaxConnsPerIP < 0 {
		return nil, fmt.Errorf("-wsmaxconnsperip must not be negative")
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		return nil, fmt.Errorf("-logformat must be text or json")
	}
	return o, nil
}

// ignoredValue records a compatibility flag's value; boolean ones may be
// given without an argument.
type ignoredValue struct {
	dst    *string
	isBool bool
}

func (v ignoredValue) String() string   { return "" }
func (v ignoredValue) IsBoolFlag() bool { return v.isBool }
func (v ignoredValue) Set(s string) error {
	*v.dst = s
	return nil
}

// warnIgnored logs the compatibility flags that were set but do nothing.
func (o *options) warnIgnored(log *slog.Logger) {
	for _, f := range ignoredFlags {
		if v := o.ignored[f.name]; v != nil && *v != "" && *v != "false" {
			log.Warn("flag has no effect in this version", "flag", "-"+f.name, "reason", f.why)
		}
	}
}

func newLogger(o *options, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if o.verbosity > 0 {
		level = slog.LevelDebug
	}
	hopts := &slog.HandlerOptions{Level: level}
	if o.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts))
	}
	return slog.New(slog.NewTextHandler(w, hopts))
}
