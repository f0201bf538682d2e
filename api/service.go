// Package api answers queries about blocks, transactions and addresses from
// the index and the node, in the wire shapes of Blockbook's API. It is shared
// by the REST and websocket servers; servers only parse transport details and
// map errors.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/syncer"
)

// Service is what the servers call. Each chain type implements it; ids and
// numbers arrive as the user typed them and are validated here.
type Service interface {
	Status(ctx context.Context) (*SystemInfo, error)
	BlockIndex(ctx context.Context, height string) (*BlockIndex, error)
	Block(ctx context.Context, id string, page, pageSize int) (*Block, error)
	RawBlock(ctx context.Context, id string) (*BlockRaw, error)
	Tx(ctx context.Context, txid string) (*Tx, error)
	TxSpecific(ctx context.Context, txid string) (json.RawMessage, error)
	RawTx(ctx context.Context, txid string) (string, error)
	Address(ctx context.Context, address string, q AddressQuery) (*Address, error)
	// Account answers an xpub or output descriptor (REST xpub/); a string
	// that is neither gives an error for which IsNotAccount is true.
	Account(ctx context.Context, descriptor string, q AddressQuery) (*Address, error)
	// Utxos and BalanceHistory take an address, an xpub or a descriptor.
	Utxos(ctx context.Context, descriptor string, onlyConfirmed bool, gap int) ([]Utxo, error)
	SendTx(ctx context.Context, hex string) (*Result, error)
	EstimateFee(ctx context.Context, blocks string, conservative bool) (*Result, error)
	FeeStats(ctx context.Context, height string) (*FeeStats, error)
	BlockFilters(ctx context.Context, scriptType, lastN, from, to string) (*BlockFilters, error)
	// Contract answers contract/{address} (Ethereum-type chains).
	Contract(ctx context.Context, contract string) (*ContractInfo, error)
	// RPCCall runs a read-only contract call (Ethereum-type; websocket
	// rpcCall).
	RPCCall(ctx context.Context, from, to, data string) (*RPCCallResult, error)
	// Lists and search of the HTML explorer.
	Blocks(ctx context.Context, page, pageSize int) (*Blocks, error)
	MempoolTxs(ctx context.Context, page, pageSize int) (*MempoolTxs, error)
	Search(ctx context.Context, q string) (*SearchResult, error)

	// Calls of the websocket API (REST shares BalanceHistory).
	Info(ctx context.Context) (*WsInfo, error)
	BlockHash(ctx context.Context, height int) (string, error)
	// FeeEstimates answers estimateFee: one estimate per confirmation
	// target.
	FeeEstimates(ctx context.Context, blocks []int, q FeeQuery) ([]FeeEstimate, error)
	BalanceHistory(ctx context.Context, descriptor string, q BalanceHistoryQuery) ([]BalanceHistory, error)
	MempoolFilters(ctx context.Context, scriptType string, fromTimestamp int64, m uint64) (*MempoolFilters, error)
	BlockFilter(ctx context.Context, scriptType, blockHash string, m uint64) (*BlockFilterResult, error)
	BlockFiltersBatch(ctx context.Context, scriptType, bestKnownBlockHash string, pageSize int, m uint64) (*BlockFiltersBatchResult, error)
	CurrentFiatRates(ctx context.Context, currencies []string, token string) (*FiatTicker, error)
	FiatRatesForTimestamps(ctx context.Context, timestamps []int64, currencies []string, token string) (*FiatTickers, error)
	FiatRatesTickersList(ctx context.Context, timestamp int64, token string) (*AvailableVsCurrencies, error)
	FiatRatesForBlock(ctx context.Context, block string, currencies []string, token string) (*FiatTicker, error)

	// Notifications: what a tx touches, rendered only when someone listens.
	MempoolTxNotice(tx *mempool.Tx) TxNotice
	BlockTxNotices(ctx context.Context, blk *bchain.Block) ([]TxNotice, error)
	AddrDesc(address string) (bchain.AddrDesc, error)
	DescAddress(desc bchain.AddrDesc) (string, bool)
	HashString(h bchain.Hash) string
}

// Mempool is the read side of the mempool that answers show.
type Mempool interface {
	Tx(txid bchain.Hash) (*mempool.Tx, bool)
	AddrTxs(desc bchain.AddrDesc) []mempool.AddrTx
	SpentBy(op mempool.Outpoint) (txid bchain.Hash, vin uint32, ok bool)
	Status() mempool.Status
	FilterEntries(fromTimestamp int64) map[bchain.Hash][]byte
	Txs() []*mempool.Tx // every pending tx, newest first
}

// SyncStatus reports the sync worker's state.
type SyncStatus interface {
	State() syncer.State
}

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
	// XpubCacheSize bounds the account cache: derived addresses plus
	// loaded txids of all cached accounts (about 60 bytes each).
	XpubCacheSize int
	// MaxHistoryTxs caps the txs one balance history may visit.
	MaxHistoryTxs int
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
	if l.XpubCacheSize == 0 {
		l.XpubCacheSize = 4_000_000
	}
	if l.MaxHistoryTxs <= 0 {
		l.MaxHistoryTxs = 1_000_000
	}
}

// Config configures a Service.
type Config struct {
	Build  BuildInfo
	Limits Limits
	// DisableTxCache stops caching raw txs fetched from the node (-notxcache).
	DisableTxCache bool
	// DisableXpubCache stops caching accounts between requests (-noxpubcache).
	DisableXpubCache bool
	// BlockFilters and MempoolFilters are the Golomb filter parameters the
	// index and the mempool were configured with (P = 0: no filters).
	BlockFilters, MempoolFilters db.FilterParams
	// Mempool, when set, adds unconfirmed txs to answers.
	Mempool Mempool
	// EthMempool is the Ethereum-type mempool (nil: none).
	EthMempool EthMempool
	// FiatRates: fiat_rates is configured, so answers read rates from the
	// fiatRates column family (which fiat fills).
	FiatRates bool
	// Eip1559Fees (Ethereum-type chains) adds EIP-1559 fee tiers to the
	// websocket's estimateFee.
	Eip1559Fees bool
	Log         *slog.Logger
}

// core is what every chain type's service shares: the index, the node,
// the sync state, the configuration, and the chain-neutral answers built
// on them (status, block lookups, fiat rates).
type core struct {
	db      *db.DB
	backend *bchain.Backend
	sync    SyncStatus
	cfg     Config
	log     *slog.Logger
	info    *chainInfoCache
	// hexPrefix is put before block and tx hashes in answers ("0x" on
	// Ethereum-type chains) and accepted before them in requests.
	hexPrefix string
}

// hashString renders a block or tx hash for answers.
func (s *core) hashString(h bchain.Hash) string { return s.hexPrefix + h.String() }

// HashString renders a block or tx hash as answers show it (0x-prefixed on
// Ethereum-type chains), for notifications built outside the api.
func (s *core) HashString(h bchain.Hash) string { return s.hashString(h) }

// trimHex removes the hash prefix from a request parameter.
func (s *core) trimHex(id string) string {
	if s.hexPrefix != "" && len(id) > len(s.hexPrefix) && strings.EqualFold(id[:len(s.hexPrefix)], s.hexPrefix) {
		return id[len(s.hexPrefix):]
	}
	return id
}

func newCore(d *db.DB, b *bchain.Backend, sync SyncStatus, cfg Config) core {
	cfg.Limits.defaults()
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Build.Host == "" {
		cfg.Build.Host, _ = os.Hostname()
	}
	return core{db: d, backend: b, sync: sync, cfg: cfg, log: cfg.Log.With("subsystem", "api"), info: newChainInfoCache(b.Chain)}
}

// UtxoService implements Service for Bitcoin-type chains.
type UtxoService struct {
	core
	parser bchain.UtxoParser
	xpubs  *xpubCache
}

var _ Service = (*UtxoService)(nil)

// NewUtxoService returns the Bitcoin-type query service.
func NewUtxoService(d *db.DB, b *bchain.Backend, sync SyncStatus, cfg Config) *UtxoService {
	c := newCore(d, b, sync, cfg)
	xpubCacheSize := c.cfg.Limits.XpubCacheSize
	if c.cfg.DisableXpubCache {
		xpubCacheSize = 0
	}
	return &UtxoService{core: c, parser: b.Utxo, xpubs: newXpubCache(xpubCacheSize)}
}

// view is a consistent snapshot of the index plus its tip, for one request.
type view struct {
	snap   *db.Snapshot
	tip    db.Tip
	hasTip bool
}

func (s *core) newView() (*view, error) {
	snap, err := s.db.Snapshot()
	if err != nil {
		return nil, err
	}
	tip, ok, err := db.ReadTip(snap)
	if err != nil {
		snap.Release()
		return nil, err
	}
	return &view{snap: snap, tip: tip, hasTip: ok}, nil
}

func (v *view) release() { v.snap.Release() }

// confirmations of a block at height, as seen from the view's tip.
func (v *view) confirmations(height uint32) uint32 {
	if !v.hasTip || height > v.tip.Height {
		return 0
	}
	return v.tip.Height - height + 1
}
