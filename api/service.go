// Package api answers queries about blocks, transactions and addresses from
// the index and the node, in the wire shapes of Blockbook's API. It is shared
// by the REST and websocket servers; servers only parse transport details and
// map errors.
package api

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/syncer"
)

// Service is what the servers call: the queries every chain type answers.
// The optional ones (xpubs, UTXOs, filters, raw data, contracts, fee
// estimation...) are in Capabilities. Ids and numbers arrive as the user
// typed them and are validated here.
type Service interface {
	Status(ctx context.Context) (*SystemInfo, error)
	BlockIndex(ctx context.Context, height string) (*BlockIndex, error)
	Block(ctx context.Context, id string, page, pageSize int) (*Block, error)
	Tx(ctx context.Context, txid string) (*Tx, error)
	Address(ctx context.Context, address string, q AddressQuery) (*Address, error)
	// BalanceHistory takes an address, or an xpub or a descriptor where
	// the service offers accounts.
	BalanceHistory(ctx context.Context, descriptor string, q BalanceHistoryQuery) ([]BalanceHistory, error)
	SendTx(ctx context.Context, hex string) (*Result, error)
	// Lists and search of the HTML explorer.
	Blocks(ctx context.Context, page, pageSize int) (*Blocks, error)
	MempoolTxs(ctx context.Context, page, pageSize int) (*MempoolTxs, error)
	Search(ctx context.Context, q string) (*SearchResult, error)

	// Calls of the websocket API.
	Info(ctx context.Context) (*WsInfo, error)
	BlockHash(ctx context.Context, height int) (string, error)
	// CheckFeeTargets validates estimateFee's confirmation targets as the
	// chain type reads them, before (and whether or not) an estimator is
	// asked.
	CheckFeeTargets(blocks []int) error
	CurrentFiatRates(ctx context.Context, currencies []string, token string) (*FiatTicker, error)
	FiatRatesForTimestamps(ctx context.Context, timestamps []int64, currencies []string, token string) (*FiatTickers, error)
	FiatRatesTickersList(ctx context.Context, timestamp int64, token string) (*AvailableVsCurrencies, error)
	FiatRatesForBlock(ctx context.Context, block string, currencies []string, token string) (*FiatTicker, error)

	// Notifications: what a block's txs touch, rendered only when someone
	// listens (each mempool type has its own notice, see the services).
	BlockTxNotices(ctx context.Context, blk *bchain.Block) ([]TxNotice, error)
	AddrDesc(address string) (bchain.AddrDesc, error)
	DescAddress(desc bchain.AddrDesc) (string, bool)
	HashString(h bchain.Hash) string

	// Capabilities are the optional parts this service value offers,
	// fixed when it is built.
	Capabilities() Capabilities
}

// Store is the index as queries read it: consistent snapshots, read with
// db's typed accessors (db.ReadX(snap, ...)).
type Store interface {
	Snapshot() (*db.Snapshot, error)
	// LastFiatTicker is the newest daily ticker with a rate for currency
	// ("" any): a backwards seek the snapshot accessors do not offer.
	LastFiatTicker(currency string) (*db.FiatTicker, error)
	// LastFiatTokenTicker is the newest daily ticker with a rate of token
	// ("": of any token), nil if none.
	LastFiatTokenTicker(token string) (*db.FiatTicker, error)
	// Size is the index's size on disk, for the status answer.
	Size() int64
}

// TxCache keeps txs fetched from the node, so that they are read from the
// index next time (Config.TxCache).
type TxCache interface {
	WriteCachedTx(txid bchain.Hash, raw []byte) error
}

// Mempool is the read side of the mempool that answers show.
type Mempool interface {
	Tx(txid bchain.Hash) (*mempool.Tx, bool)
	AddrTxs(desc bchain.AddrDesc) []mempool.AddrTx
	SpentBy(op mempool.Outpoint) (txid bchain.Hash, vin uint32, ok bool)
	Status() mempool.Status
	FilterEntries(fromTimestamp int64) map[bchain.Hash][]byte
	Txs() []*mempool.Tx // every pending tx, newest first
	// ScriptByHash finds a descriptor pending txs touch by its sha256.
	ScriptByHash(sh [32]byte) (bchain.AddrDesc, bool)
}

// SyncStatus reports the sync worker's state.
type SyncStatus interface {
	State() SyncState
}

// ReplicaStatus is a SyncStatus of a replica (the process follows a
// primary's index instead of syncing it); the status answer shows it.
type ReplicaStatus interface {
	ReplicaState() ReplicaInfo
}

// SyncState is what the sync worker reports (the servers read it through
// SyncStatus without depending on the worker's package).
type SyncState = syncer.State

// BuildInfo describes the running binary for the status answer.
type BuildInfo struct {
	Version, GitCommit, BuildTime, About string
	Host                                 string // defaults to the hostname
	SyncMode                             bool   // the process runs the sync worker (-sync)
}

// Limits cap the work of one request.
type Limits struct {
	// MaxPageSize caps pageSize (Blockbook: 1000).
	MaxPageSize int
	// MaxTxOffset caps how deep paging may skip into an address's history;
	// deeper pages are clamped and from/to should be used instead.
	MaxTxOffset int
	// MaxUtxos caps the UTXOs one answer lists.
	MaxUtxos int
	// MaxFullTxs caps how many txs with full details one answer renders.
	MaxFullTxs int
	// MaxXpubGap caps an account query's gap limit (Blockbook: 10000).
	MaxXpubGap int
	// XpubCacheBytes bounds the account cache by the bytes its accounts
	// hold (derived addresses, scripts, names, txid lists).
	XpubCacheBytes int64
	// MaxHistoryTxs caps the txs one balance history asked over the
	// websocket may visit, MaxHistoryTxsREST one asked over REST
	// (Blockbook's split caps); negative means no cap.
	MaxHistoryTxs, MaxHistoryTxsREST int
}

// historyCap is the balance-history cap of the surface that asks (0: none),
// lowered to the query's own MaxTxs when it has one.
func (l *Limits) historyCap(q BalanceHistoryQuery) int {
	c := max(l.MaxHistoryTxs, 0)
	if q.REST {
		c = max(l.MaxHistoryTxsREST, 0)
	}
	if q.MaxTxs > 0 && (c == 0 || q.MaxTxs < c) {
		return q.MaxTxs
	}
	return c
}

func (l *Limits) defaults() {
	if l.MaxPageSize <= 0 {
		l.MaxPageSize = 1000
	}
	if l.MaxTxOffset <= 0 {
		l.MaxTxOffset = 200_000
	}
	if l.MaxUtxos <= 0 {
		l.MaxUtxos = 500_000
	}
	if l.MaxFullTxs <= 0 {
		l.MaxFullTxs = 1000
	}
	if l.MaxXpubGap <= 0 {
		l.MaxXpubGap = 10_000
	}
	if l.XpubCacheBytes == 0 {
		l.XpubCacheBytes = DefaultXpubCacheMB << 20
	}
	if l.MaxHistoryTxs == 0 {
		l.MaxHistoryTxs = 1_000_000
	}
	if l.MaxHistoryTxsREST == 0 {
		l.MaxHistoryTxsREST = 250_000
	}
}

// Config configures a Service.
type Config struct {
	Build  BuildInfo
	Limits Limits
	// TxCache, when set, caches the confirmed txs fetched from the node
	// (nil with -notxcache).
	TxCache TxCache
	// TxidCache, when set, keeps blockTxids rows between queries
	// (Bitcoin-type chains: every read of a view that resolves positions
	// to txids goes through it; -txidcachemb).
	TxidCache *db.TxidCache
	// DisableXpubCache stops caching accounts between requests (-noxpubcache).
	DisableXpubCache bool
	// BlockFilters and MempoolFilters are the Golomb filter parameters the
	// index and the mempool were configured with (P = 0: no filters).
	BlockFilters, MempoolFilters db.FilterParams
	// Mempool, when set, adds unconfirmed txs to answers.
	Mempool Mempool
	// RunesNetwork is the Runes network of a Bitcoin chain (activation
	// and name unlocking), for decoding pending txs' runestones.
	RunesNetwork runestone.Network
	// Projection, when set (Bitcoin-type chains with a node that gives its
	// minimum fee), answers ProjectedFees from the mempool's projected
	// blocks.
	Projection MempoolProjection
	// Replacements, when set, answers Replacements from the mempool's
	// RBF history.
	Replacements MempoolReplacements
	// AltFees is Blockbook's alternative fee provider
	// (alternative_estimate_fee): estimateFee and the confirmation ETAs ask
	// it first and the node when it fails; longTermFeeRate asks the node.
	AltFees bchain.FeeEstimator
	// EthMempool is the Ethereum-type mempool (nil: none).
	EthMempool EthMempool
	// FiatRates: fiat_rates is configured, so answers read rates from the
	// fiatRates column family (which fiat fills).
	FiatRates bool
	// TokenFiatRates: fiat also downloads token rates (Ethereum-type
	// chains with platformIdentifier and platformVsCurrency).
	TokenFiatRates bool
	// StakingPools (Ethereum-type chains) are the configured staking
	// pools, "<pool name>/<contract>" (<NETWORK>_STAKING_POOL_CONTRACT).
	StakingPools []string
	// Eip1559Fees (Ethereum-type chains) adds EIP-1559 fee tiers to the
	// websocket's estimateFee.
	Eip1559Fees bool
	// AddressAliases (Ethereum-type chains, address_aliases) adds the
	// addressAliases map to tx, address and block answers (eth_alias.go).
	AddressAliases bool
	// ENS (Ethereum-type chains) are the ENS contracts that .eth names are
	// resolved through (eth_ens.go); nil: mainnet's on chain id 1.
	ENS *ENSContracts
	// Node is the node liveness probe; with it, node calls fail fast while
	// the node does not answer and status reads the node's part from it.
	// Nil (unit tests) calls the node directly.
	Node NodeProbe
	Log  *slog.Logger
}

// core is what every chain type's service shares: the index, the node,
// the sync state, the configuration, and the chain-neutral answers built
// on them (status, block lookups, fiat rates).
type core struct {
	db      Store
	backend *bchain.Backend
	sync    SyncStatus
	cfg     Config
	log     *slog.Logger
	info    *chainInfoCache
	// hexPrefix is put before block and tx hashes in answers ("0x" on
	// Ethereum-type chains) and accepted before them in requests.
	hexPrefix string
	// inPrefix is accepted before hashes in requests when hexPrefix is
	// not ("0x" on Tron, which shows hashes without it).
	inPrefix string
}

// hashString renders a block or tx hash for answers.
func (s *core) hashString(h bchain.Hash) string { return s.hexPrefix + h.String() }

// HashString renders a block or tx hash as answers show it (0x-prefixed on
// Ethereum-type chains), for notifications built outside the api.
func (s *core) HashString(h bchain.Hash) string { return s.hashString(h) }

// trimHex removes the hash prefix from a request parameter.
func (s *core) trimHex(id string) string {
	p := s.hexPrefix
	if p == "" {
		p = s.inPrefix
	}
	if p != "" && len(id) > len(p) && strings.EqualFold(id[:len(p)], p) {
		return id[len(p):]
	}
	return id
}

func newCore(d Store, b *bchain.Backend, sync SyncStatus, cfg Config) core {
	cfg.Limits.defaults()
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Build.Host == "" {
		cfg.Build.Host, _ = os.Hostname()
	}
	info := newChainInfoCache(b.Chain, cfg.Node)
	if cfg.Node != nil {
		b = gateBackend(b, cfg.Node)
	}
	return core{db: d, backend: b, sync: sync, cfg: cfg, log: cfg.Log.With("subsystem", "api"), info: info}
}

// UtxoService implements Service for Bitcoin-type chains, with UTXOs,
// block and mempool filters, raw data and fee stats; accounts and fee
// estimation where the parser and the node have them.
type UtxoService struct {
	core
	parser bchain.UtxoParser
	xpubs  *xpubCache
	caps   Capabilities
	eta    etaFees
	stats  statsCache
	// pushes caches the pushdata of mempool txs between searches (pushdata.go).
	pushes pendingPushCache
	// runeCache keeps what pending txs do to runes (runes_mempool.go).
	runeCache *pendingRuneCache
	// names caches the address strings of scripts (addr_names.go).
	names addrNames
}

var (
	_ Service              = (*UtxoService)(nil)
	_ UtxoQueries          = (*UtxoService)(nil)
	_ BlockFilterQueries   = (*UtxoService)(nil)
	_ MempoolFilterQueries = (*UtxoService)(nil)
	_ RawBlockQueries      = (*UtxoService)(nil)
	_ RawTxQueries         = (*UtxoService)(nil)
	_ TxSpecificQueries    = (*UtxoService)(nil)
	_ FeeStatsQueries      = (*UtxoService)(nil)
	_ AccountQueries       = utxoAccounts{}
	_ FeeEstimator         = utxoFees{}
)

// NewUtxoService returns the Bitcoin-type query service.
func NewUtxoService(d Store, b *bchain.Backend, sync SyncStatus, cfg Config) *UtxoService {
	c := newCore(d, b, sync, cfg)
	xpubCacheSize := c.cfg.Limits.XpubCacheBytes
	if c.cfg.DisableXpubCache {
		xpubCacheSize = 0
	}
	b = c.backend // gated by the liveness probe when there is one
	s := &UtxoService{core: c, parser: b.Utxo, xpubs: newXpubCache(xpubCacheSize), runeCache: newPendingRuneCache()}
	s.caps = Capabilities{Chain: bchain.ChainBitcoinType, Utxos: s, BlockFilters: s, MempoolFilters: s,
		RawBlocks: s, RawTxs: s, TxSpecific: s, FeeStats: s, Scripts: s, Pushdata: s, ChainStats: s, Runes: s, Tweaks: s}
	if b.Xpub != nil {
		s.caps.Accounts = utxoAccounts{s}
	}
	if b.Fees != nil {
		s.caps.FeeEstimates = utxoFees{s: s, est: b.Fees}
	}
	if cfg.Projection != nil && b.MinFee != nil {
		s.caps.ProjectedFees = projectedFees{p: cfg.Projection, minFee: b.MinFee, pool: cfg.Mempool}
	}
	if cfg.Replacements != nil {
		s.caps.Replacements = replacementQueries{cfg.Replacements}
	}
	return s
}

// Capabilities are the optional parts this service offers.
func (s *UtxoService) Capabilities() Capabilities { return s.caps }

// view is a consistent snapshot of the index plus its tip, for one request.
type view struct {
	snap   *db.Snapshot
	tip    db.Tip
	hasTip bool
	seq    uint64 // views taken later have larger ones (db.Snapshot.Seq; runes_mempool.go)
}

func (s *core) newView() (*view, error) {
	snap, err := s.db.Snapshot()
	if err != nil {
		return nil, err
	}
	// the snapshot's own number: a counter read before (or after) taking
	// it could pair a snapshot taken after a block landed with an older
	// number than one taken before (or the reverse)
	seq := snap.Seq()
	tip, ok, err := db.ReadTip(snap)
	if err != nil {
		snap.Release()
		return nil, err
	}
	snap.UseTxidCache(s.cfg.TxidCache, tip, ok)
	return &view{snap: snap, tip: tip, hasTip: ok, seq: seq}, nil
}

func (v *view) release() { v.snap.Release() }

// confirmations of a block at height, as seen from the view's tip.
func (v *view) confirmations(height uint32) uint32 {
	if !v.hasTip || height > v.tip.Height {
		return 0
	}
	return v.tip.Height - height + 1
}
