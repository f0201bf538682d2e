package app

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/db"
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
	CertFile       string // serve both ports over TLS from <CertFile>.crt and .key
	Workers        int
	DBCache        int64
	DBMaxOpenFiles int
	Rollback       int64
	ResyncIndexMs  int
	SyncMemoryMB   int64
	DBReserveMB    int64
	BulkThreshold  int
	NoTxCache      bool
	// PushdataIndex is -pushdataindex (or the config's pushdata_index):
	// keep the pushdata index (optional.go).
	PushdataIndex bool
	// RunesIndex is -runesindex (or the config's runes_index): keep the
	// Runes index (db/optional/runes).
	RunesIndex bool
	DryRun     bool
	Prof       string

	// Replica runs an API-only process over the index of a primary
	// process on the same datadir (replica.go).
	Replica replicaOptions

	// One-shot maintenance modes (the program exits after them).
	ComputeDBStats bool // print each column family's rows and bytes
	Repair         bool // verify the index (-repair, -fixutxo, -forcerepair)
	// Checkpoint is a new directory to write a checkpoint of the index
	// into (checkpoint.go); not a Blockbook 0.6.0 flag.
	Checkpoint string

	// ExplorerURL is Blockbook's -explorer: an external explorer the
	// built-in one's tx and address pages redirect to.
	ExplorerURL string
	// NFTGateway is the IPFS gateway of the explorer's NFT page.
	NFTGateway string

	// Logging (glog's flags as Blockbook's binary has them; see log.go).
	Verbosity       int
	LogFormat       string
	LogDir          string
	LogLink         string
	LogToStderr     bool
	AlsoLogToStderr bool
	StderrThreshold severity

	// Websocket API and mempool.
	EnableSubNewTx   bool
	ResyncMempoolMs  int
	WsAllowedOrigins string
	WsMaxConnsPerIP  int
	WsTrustedProxies string
	// Limits are the per-client limits (limits.go).
	Limits limitOptions
	// Esplora is the Esplora REST listener (esplora.go).
	Esplora esploraOptions
	// Mesh is the Mesh (Rosetta) listener (mesh.go).
	Mesh meshOptions
	// Ord is ord's JSON API listener for runes (ord.go).
	Ord ordOptions
	// Listen is the listener kit's settings for every HTTP listener
	// (listen.go).
	Listen listenOptions
	// Electrum is the Electrum server (electrum.go).
	Electrum electrumOptions
	// SilentPayments is the Silent Payments index and its listener
	// (silentpayments.go).
	SilentPayments silentPaymentsOptions

	// Accounts (xpubs, descriptors) and balance histories.
	NoXpubCache          bool
	XpubMaxGap           int
	XpubCacheSize        int // deprecated: entries, converted by xpubCacheBytes
	XpubCacheMB          int64
	BalanceHistoryMaxTxs int
	// TxidCacheMB sizes the cache of blockTxids rows (db.TxidCache).
	TxidCacheMB int64

	// set records the flags given on the command line (where a flag and an
	// environment variable set the same thing, the flag wins only if set).
	set map[string]bool
	// noEffect lists the given flags that do nothing here, with why.
	noEffect []noEffectFlag

	// OnListen, when set, is told each server's actual address (tests bind
	// port 0).
	OnListen func(server, addr string)
	// FiatConfig and onFiat, when set, adjust the fiat downloader's
	// configuration and receive the downloader (tests: request pacing,
	// Refresh).
	FiatConfig func(*fiat.Config)
	OnFiat     func(*fiat.Downloader)
	// ProjectedBlockWeight, when set, replaces the coin's block weight as
	// the capacity of the mempool's projected blocks (tests: a node that
	// assembles small blocks, whose templates judge the projection).
	ProjectedBlockWeight uint32
}

// noEffectFlag is a Blockbook flag that was set but does nothing here.
type noEffectFlag struct{ name, value, why string }

// acceptedFlags are Blockbook 0.6.0 flags that are parsed with Blockbook's
// types and defaults but do nothing here; setting one logs its reason once
// at start.
var acceptedFlags = []struct {
	name, def, usage, why string
	kind                  byte // 'b' bool, 'i' int, 's' string
}{
	{"blockheight", "-1", "height of the starting block", "blocks are always indexed from the node's genesis block to its tip", 'i'},
	{"blockuntil", "-1", "height of the final block", "blocks are always indexed up to the node's tip", 'i'},
	{"chunk", "100", "block chunk size for processing in bulk mode", "bulk rounds are sized by the memory budget (-syncmemory)", 'i'},
	{"computefeestats", "false", "compute fee stats for blocks in blockheight-blockuntil range and exit", "fee statistics are not stored; estimates come from the node", 'b'},
	{"dbstatsperiod", "24", "period of db stats collection in hours, 0 disables stats collection", "column statistics are computed on demand (-computedbstats); the database size is the blockbook_db_size_bytes metric", 'i'},
	{"debug", "false", "debug mode, return more verbose errors, reload templates on each request", "errors are always logged in full and templates are compiled in; use -v=1 for debug logs", 'b'},
	{"resyncindexdebounce", "1009", "debounce for push-triggered index resync requests in milliseconds", "the sync worker reacts to each block notification directly", 'i'},
	{"log_backtrace_at", "", "when logging hits line file:N, emit a stack trace", "panics are logged with their stack; no per-line traces", 's'},
	{"logbuflevel", "0", "buffer log messages logged at this level or lower (-1 means don't buffer; 0 means buffer INFO only)", "log records are written at once", 'i'},
	{"vmodule", "", "comma-separated list of pattern=N settings for file-filtered logging", "verbosity is global (-v)", 's'},
}

// ParseFlags parses the command line. Unknown flags are an error (as in
// Blockbook); flags that do nothing here are recorded for warnNoEffect.
//
// Long: one declaration per flag, Blockbook's and ours, kept together so
// that -help lists them in one place.
func ParseFlags(args []string, stderr io.Writer) (*Options, error) {
	o := &Options{set: map[string]bool{}, StderrThreshold: sevError}
	fs := flag.NewFlagSet("blockbook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.BlockchainCfg, "blockchaincfg", "", "path to the blockchain configuration file (blockchaincfg.json)")
	fs.StringVar(&o.DataDir, "datadir", "./data", "path to the index database directory")
	fs.BoolVar(&o.Sync, "sync", false, "run the sync worker: index new blocks and follow the node")
	o.Esplora.register(fs)
	o.Ord.register(fs)
	o.SilentPayments.register(fs)
	o.Mesh.register(fs)
	fs.StringVar(&o.Public, "public", "", "public server binding [address]:port[/path] (default: the coin's public port on all interfaces; \"none\" disables it)")
	fs.StringVar(&o.Internal, "internal", "", "internal server binding [address]:port[/path] for /metrics and /health (default: the coin's internal port on 127.0.0.1; \"none\" disables it)")
	fs.StringVar(&o.CertFile, "certfile", "", "serve the public and internal ports over TLS from <certfile>.crt and <certfile>.key (default: plain HTTP)")
	fs.StringVar(&o.ExplorerURL, "explorer", "", "address of an external blockchain explorer")
	fs.StringVar(&o.NFTGateway, "nftgateway", "", "IPFS gateway the explorer's NFT page reads ipfs:// token metadata through (default Blockbook's https://ipfs.io/ipfs/; \"none\": not read)")
	fs.IntVar(&o.Workers, "workers", max(runtime.NumCPU(), 2), "number of workers fetching and decoding blocks during catch-up; 1 also turns bulk import off")
	fs.Int64Var(&o.DBCache, "dbcache", 1<<29, "RocksDB block cache size in bytes")
	fs.IntVar(&o.DBMaxOpenFiles, "dbmaxopenfiles", 1<<14, "maximum number of files RocksDB keeps open")
	fs.Int64Var(&o.Rollback, "rollback", -1, "roll the index back to this height and exit")
	fs.IntVar(&o.ResyncIndexMs, "resyncindexperiod", 0, "how often (ms) to poll the node for a new tip besides push notifications (default 1000)")
	fs.Int64Var(&o.SyncMemoryMB, "syncmemory", 512, "memory budget in MB of the sync (blocks fetched ahead, UTXO cache, pending rows, RocksDB memtables; the block cache too while bulk loading)")
	fs.Int64Var(&o.DBReserveMB, "dbreservemb", 256, "free space in MB the datadir's filesystem keeps: index writes that would leave less pause (reads go on) until there is space; 0 turns the check off")
	fs.IntVar(&o.BulkThreshold, "bulkthreshold", 500, "load blocks in bulk (sorted files ingested per round) when at least this many behind the node; 0 disables")
	fs.BoolVar(&o.NoTxCache, "notxcache", false, "do not cache transactions fetched from the node")
	fs.BoolVar(&o.RunesIndex, "runesindex", false, "keep the Runes index that /api/v2/rune and the runes parameter read (Bitcoin networks only; also the config key runes_index; an empty datadir only; default: off)")
	fs.BoolVar(&o.PushdataIndex, "pushdataindex", false, "keep the pushdata index that POST /api/v2/pushdata/search reads (Bitcoin-type coins; also the config key pushdata_index; an empty datadir only; default: off)")
	fs.BoolVar(&o.DryRun, "dryrun", false, "check the configuration, the database and the node, then exit (Blockbook's downloads blocks without indexing them)")
	fs.BoolVar(&o.ComputeDBStats, "computedbstats", false, "print the rows and bytes of each column family and the database size on disk, then exit")
	fs.StringVar(&o.Checkpoint, "checkpoint", "", "write a consistent copy of the index of -datadir into this new directory, then exit (hard links on the same filesystem; a running indexer takes one with POST /admin/checkpoint on the internal port)")
	fs.BoolVar(&o.Repair, "repair", false, "verify the index, report what is damaged or that nothing needs repair, then exit")
	fs.BoolVar(&o.Repair, "fixutxo", false, "same as -repair (the UTXO rows are written atomically with their block)")
	fs.BoolVar(&o.Repair, "forcerepair", false, "same as -repair")
	fs.BoolFunc("extendedindex", "accepted: the index always holds the spending tx of every output", func(string) error { return nil })
	fs.IntVar(&o.Verbosity, "v", 0, "log verbosity: 0 info, 1 or more debug")
	fs.StringVar(&o.LogFormat, "logformat", "text", "log format: text or json")
	fs.StringVar(&o.LogDir, "log_dir", "", "write the log to a file in this directory (default: stderr only)")
	fs.StringVar(&o.LogLink, "log_link", "", "put the link to the current log file in this directory (default: -log_dir)")
	fs.BoolVar(&o.LogToStderr, "logtostderr", false, "log to stderr only, not to the -log_dir file")
	fs.BoolVar(&o.AlsoLogToStderr, "alsologtostderr", false, "with -log_dir, log every record to stderr as well")
	fs.Var(&o.StderrThreshold, "stderrthreshold", "with -log_dir, records at or above this severity also go to stderr (INFO, WARNING, ERROR, FATAL or 0-3)")
	fs.BoolVar(&o.EnableSubNewTx, "enablesubnewtx", false, "allow websocket clients to subscribe to every new mempool tx (subscribeNewTransaction)")
	fs.IntVar(&o.ResyncMempoolMs, "resyncmempoolperiod", 60017, "how often (ms) the whole mempool is compared with the node's, besides tx notifications")
	fs.StringVar(&o.WsAllowedOrigins, "wsallowedorigins", "", "comma-separated browser origins allowed to open the websocket (e.g. https://wallet.example); empty allows all (overrides <NET>_WS_ALLOWED_ORIGINS)")
	fs.IntVar(&o.WsMaxConnsPerIP, "wsmaxconnsperip", defaultWSMaxConnsPerIP, "maximum concurrent websocket connections per client IP (IPv6: per /64); 0 means unlimited")
	declareLimitFlags(fs, &o.Limits)
	fs.StringVar(&o.WsTrustedProxies, "wstrustedproxies", "", "comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client IP")
	fs.BoolVar(&o.NoXpubCache, "noxpubcache", false, "do not keep accounts (derived addresses, txid lists) between xpub queries")
	fs.IntVar(&o.XpubMaxGap, "xpubmaxgap", 10000, "largest gap limit an xpub query may ask for (larger ones are lowered to it, as Blockbook does)")
	fs.Int64Var(&o.XpubCacheMB, "xpubcachemb", api.DefaultXpubCacheMB, "memory in MB of the account cache (derived addresses, txid lists of recently queried xpubs), counted in bytes held")
	fs.IntVar(&o.XpubCacheSize, "xpubcachesize", 0, "deprecated, use -xpubcachemb: account cache capacity in entries, converted at 60 bytes each")
	fs.Int64Var(&o.TxidCacheMB, "txidcachemb", db.DefaultTxidCacheMB, "memory in MB of the txid cache (the index's rows of block txids, shared by address pages; 0 turns it off), counted in bytes held")
	fs.IntVar(&o.BalanceHistoryMaxTxs, "balancehistorymaxtxs", 0, "most txs one balance history may go through, on REST and websocket alike (overrides the <NET>_*BALANCE_HISTORY_MAX_TXS variables; default 250000 REST, 1000000 websocket)")
	declareReplicaFlags(fs, &o.Replica)
	fs.StringVar(&o.Prof, "prof", "", "serve Go's pprof profiles on this address (e.g. 127.0.0.1:6060); keep it private")
	declareElectrumFlags(fs, &o.Electrum)
	declareListenFlags(fs, &o.Listen)
	values := map[string]*string{}
	for _, f := range acceptedFlags {
		values[f.name] = declareAccepted(fs, f.name, f.def, f.usage, f.kind)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	for _, f := range acceptedFlags {
		if v := *values[f.name]; o.set[f.name] && v != f.def {
			o.noEffect = append(o.noEffect, noEffectFlag{name: f.name, value: v, why: f.why})
		}
	}
	if err := o.validate(fs); err != nil {
		return nil, err
	}
	return o, nil
}

// declareAccepted declares a flag that does nothing here with Blockbook's
// type and default, so that a malformed value is still an error.
func declareAccepted(fs *flag.FlagSet, name, def, usage string, kind byte) *string {
	v := &acceptedValue{s: def, kind: kind}
	fs.Var(v, name, usage+" (accepted for compatibility; no effect)")
	return &v.s
}

// acceptedValue is a flag value checked for its Blockbook type and kept as
// text.
type acceptedValue struct {
	s    string
	kind byte
}

func (v *acceptedValue) String() string {
	if v == nil {
		return ""
	}
	return v.s
}
func (v *acceptedValue) IsBoolFlag() bool { return v.kind == 'b' }
func (v *acceptedValue) Set(s string) error {
	switch v.kind {
	case 'b':
		if _, err := parseBoolFlag(s); err != nil {
			return err
		}
	case 'i':
		if _, err := parseIntFlag(s); err != nil {
			return err
		}
	}
	v.s = s
	return nil
}

// validate checks the parsed values.
func (o *Options) validate(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.BlockchainCfg == "" {
		return fmt.Errorf("missing -blockchaincfg: the path to the blockchain configuration file")
	}
	if o.Workers < 1 {
		o.Workers = 1
	}
	if o.SyncMemoryMB < 64 {
		return fmt.Errorf("-syncmemory must be at least 64 (MB)")
	}
	if o.DBReserveMB < 0 {
		return fmt.Errorf("-dbreservemb must not be negative")
	}
	if o.BulkThreshold < 0 {
		return fmt.Errorf("-bulkthreshold must not be negative")
	}
	if o.ResyncMempoolMs < 100 {
		return fmt.Errorf("-resyncmempoolperiod must be at least 100 (ms)")
	}
	if o.XpubMaxGap < 1 || o.XpubCacheMB < 1 || o.XpubCacheSize < 0 || o.IsSet("xpubcachesize") && o.XpubCacheSize < 1 || o.BalanceHistoryMaxTxs < 0 {
		return fmt.Errorf("-xpubmaxgap, -xpubcachemb and -xpubcachesize must be positive (-noxpubcache turns the cache off), -balancehistorymaxtxs must not be negative")
	}
	if o.TxidCacheMB < 0 {
		return fmt.Errorf("-txidcachemb must not be negative (0 turns the cache off)")
	}
	if o.WsMaxConnsPerIP < 0 {
		return fmt.Errorf("-wsmaxconnsperip must not be negative")
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
		return fmt.Errorf("-logformat must be text or json")
	}
	return o.validateReplica()
}

// xpubCacheEntryBytes converts the deprecated -xpubcachesize (entries) to
// bytes at the size its help text promised per entry.
const xpubCacheEntryBytes = 60

// xpubCacheBytes is the account cache's size: -xpubcachemb, or the
// deprecated -xpubcachesize converted (with a warning) when only it is set.
func (o *Options) xpubCacheBytes(log *slog.Logger) int64 {
	if !o.IsSet("xpubcachesize") {
		return o.XpubCacheMB << 20
	}
	if o.IsSet("xpubcachemb") {
		log.Warn("-xpubcachesize is deprecated and ignored as -xpubcachemb is set", "xpubcachemb", o.XpubCacheMB)
		return o.XpubCacheMB << 20
	}
	b := int64(o.XpubCacheSize) * xpubCacheEntryBytes
	log.Warn("-xpubcachesize is deprecated: use -xpubcachemb; converted at 60 bytes per entry",
		"xpubcachesize", o.XpubCacheSize, "xpubcachemb", float64(b)/(1<<20))
	return b
}

// IsSet reports whether the flag was given on the command line.
func (o *Options) IsSet(name string) bool { return o.set[name] }
