package app

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"

	"github.com/openexplorer/blockbook/fiat"
)

// Options are the command-line flags. Names follow Blockbook's so that an
// operator can swap binaries under an existing service unit.
type Options struct {
	BlockchainCfg  string
	DataDir        string
	Sync           bool
	Public         string
	Internal       string
	Workers        int
	DBCache        int64
	DBMaxOpenFiles int
	Rollback       int64
	ResyncIndexMs  int
	SyncMemoryMB   int64
	BulkThreshold  int
	NoTxCache      bool
	DryRun         bool
	Verbosity      int
	LogFormat      string
	Prof           string

	// Websocket API and mempool.
	EnableSubNewTx   bool
	ResyncMempoolMs  int
	WsAllowedOrigins string
	WsMaxConnsPerIP  int
	WsTrustedProxies string

	// Accounts (xpubs, descriptors) and balance histories.
	NoXpubCache          bool
	XpubMaxGap           int
	XpubCacheSize        int
	BalanceHistoryMaxTxs int

	// Accepted for compatibility; their features come in later releases or
	// do not apply. Set ones are reported at start.
	ignored map[string]*string

	// OnListen, when set, is told each server's actual address (tests bind
	// port 0).
	OnListen func(server, addr string)
	// FiatConfig and onFiat, when set, adjust the fiat downloader's
	// configuration and receive the downloader (tests: request pacing,
	// Refresh).
	FiatConfig func(*fiat.Config)
	OnFiat     func(*fiat.Downloader)
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

func ParseFlags(args []string, stderr io.Writer) (*Options, error) {
	o := &Options{ignored: map[string]*string{}}
	fs := flag.NewFlagSet("blockbook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.BlockchainCfg, "blockchaincfg", "", "path to the blockchain configuration file (blockchaincfg.json)")
	fs.StringVar(&o.DataDir, "datadir", "./data", "path to the index database directory")
	fs.BoolVar(&o.Sync, "sync", false, "run the sync worker: index new blocks and follow the node")
	fs.StringVar(&o.Public, "public", "", "public server binding [address]:port (default: the coin's public port on all interfaces; \"none\" disables it)")
	fs.StringVar(&o.Internal, "internal", "", "internal server binding for /metrics and /health (default: the coin's internal port on 127.0.0.1; \"none\" disables it)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "number of workers fetching and decoding blocks during catch-up")
	fs.Int64Var(&o.DBCache, "dbcache", 1<<29, "RocksDB block cache size in bytes")
	fs.IntVar(&o.DBMaxOpenFiles, "dbmaxopenfiles", 1<<14, "maximum number of files RocksDB keeps open")
	fs.Int64Var(&o.Rollback, "rollback", -1, "roll the index back to this height and exit")
	fs.IntVar(&o.ResyncIndexMs, "resyncindexperiod", 0, "how often (ms) to poll the node for a new tip besides push notifications (default 1000)")
	fs.Int64Var(&o.SyncMemoryMB, "syncmemory", 512, "memory budget in MB of the sync (blocks fetched ahead, UTXO cache, pending rows, RocksDB memtables; the block cache too while bulk loading)")
	fs.IntVar(&o.BulkThreshold, "bulkthreshold", 500, "load blocks in bulk (sorted files ingested per round) when at least this many behind the node; 0 disables")
	fs.BoolVar(&o.NoTxCache, "notxcache", false, "do not cache transactions fetched from the node")
	fs.BoolVar(&o.DryRun, "dryrun", false, "check the configuration, the database and the node, then exit")
	fs.IntVar(&o.Verbosity, "v", 0, "log verbosity: 0 info, 1 or more debug")
	fs.StringVar(&o.LogFormat, "logformat", "text", "log format: text or json")
	fs.BoolVar(&o.EnableSubNewTx, "enablesubnewtx", false, "allow websocket clients to subscribe to every new mempool tx (subscribeNewTransaction)")
	fs.IntVar(&o.ResyncMempoolMs, "resyncmempoolperiod", 60017, "how often (ms) the whole mempool is compared with the node's, besides tx notifications")
	fs.StringVar(&o.WsAllowedOrigins, "wsallowedorigins", "", "comma-separated browser origins allowed to open the websocket (e.g. https://wallet.example); empty allows all")
	fs.IntVar(&o.WsMaxConnsPerIP, "wsmaxconnsperip", 0, "maximum concurrent websocket connections per client IP (IPv6: per /64); 0 means unlimited")
	fs.StringVar(&o.WsTrustedProxies, "wstrustedproxies", "", "comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client IP")
	fs.BoolVar(&o.NoXpubCache, "noxpubcache", false, "do not keep accounts (derived addresses, txid lists) between xpub queries")
	fs.IntVar(&o.XpubMaxGap, "xpubmaxgap", 10000, "largest gap limit an xpub query may ask for (larger ones are lowered to it, as Blockbook does)")
	fs.IntVar(&o.XpubCacheSize, "xpubcachesize", 4_000_000, "capacity of the account cache in derived addresses plus txids (about 60 bytes each)")
	fs.IntVar(&o.BalanceHistoryMaxTxs, "balancehistorymaxtxs", 1_000_000, "most txs one balance history may go through; more is an error asking to narrow from/to")
	fs.StringVar(&o.Prof, "prof", "", "serve Go's pprof profiles on this address (e.g. 127.0.0.1:6060); keep it private")
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
	if o.BlockchainCfg == "" {
		return nil, fmt.Errorf("missing -blockchaincfg: the path to the blockchain configuration file")
	}
	if o.Workers < 1 {
		o.Workers = 1
	}
	if o.SyncMemoryMB < 64 {
		return nil, fmt.Errorf("-syncmemory must be at least 64 (MB)")
	}
	if o.BulkThreshold < 0 {
		return nil, fmt.Errorf("-bulkthreshold must not be negative")
	}
	if o.ResyncMempoolMs < 100 {
		return nil, fmt.Errorf("-resyncmempoolperiod must be at least 100 (ms)")
	}
	if o.XpubMaxGap < 1 || o.XpubCacheSize < 1 || o.BalanceHistoryMaxTxs < 1 {
		return nil, fmt.Errorf("-xpubmaxgap, -xpubcachesize and -balancehistorymaxtxs must be positive (-noxpubcache turns the cache off)")
	}
	if o.WsMaxConnsPerIP < 0 {
		return nil, fmt.Errorf("-wsmaxconnsperip must not be negative")
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
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
func (o *Options) warnIgnored(log *slog.Logger) {
	for _, f := range ignoredFlags {
		if v := o.ignored[f.name]; v != nil && *v != "" && *v != "false" {
			log.Warn("flag has no effect in this version", "flag", "-"+f.name, "reason", f.why)
		}
	}
}

func NewLogger(o *Options, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if o.Verbosity > 0 {
		level = slog.LevelDebug
	}
	hopts := &slog.HandlerOptions{Level: level}
	if o.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts))
	}
	return slog.New(slog.NewTextHandler(w, hopts))
}
