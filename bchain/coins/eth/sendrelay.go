package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
)

// RelayConfig configures private (MEV-protected) sending through
// alternative eth_sendRawTransaction providers: Blockbook's
// <NET>_ALTERNATIVE_SENDTX_URLS, _ALTERNATIVE_SENDTX_ONLY and
// _ALTERNATIVE_FETCH_MEMPOOL_TX, and the alternativeMempoolTxTimeout config.
type RelayConfig struct {
	URLs           []string
	Only           bool          // no fallback to the node when every provider refuses
	FetchMempoolTx bool          // cache the txs sent (only-mode) as pending
	CacheTimeout   time.Duration // how long a sender and its cached txs count as pending
	RPCTimeout     time.Duration // one provider call
	CheckPeriod    time.Duration // reconcile period of the cache (1 minute as in Blockbook)
	Log            *slog.Logger
	Metrics        prometheus.Registerer // the cache's series (nil: none)
}

// relayTx is a tx the relay accepted and answered for, kept as pending.
type relayTx struct {
	tx    *bchain.EthTx
	added time.Time
	gen   uint64 // send generation, ordered against later sends of the sender
}

// recentSender is a sender whose nonce queries go to the provider that
// accepted its last tx (the public node may not know that tx yet).
type recentSender struct {
	at  time.Time
	url int // index of the accepting provider
	gen uint64
}

// Relay sends txs through the alternative providers and keeps what the
// public node cannot know: the recent senders and, with FetchMempoolTx,
// the pending txs the relay holds. Safe for concurrent use.
type Relay struct {
	cfg RelayConfig
	now func() time.Time
	m   *relayMetrics

	mu      sync.Mutex
	gen     uint64
	senders map[common.Address]recentSender
	txs     map[bchain.Hash]relayTx
}

// NewRelay returns the relay, or nil when no provider URL is configured.
func NewRelay(cfg RelayConfig) *Relay {
	if len(cfg.URLs) == 0 {
		return nil
	}
	if cfg.RPCTimeout <= 0 {
		cfg.RPCTimeout = 15 * time.Second
	}
	if cfg.CheckPeriod <= 0 {
		cfg.CheckPeriod = time.Minute
	}
	if cfg.CacheTimeout <= 0 {
		cfg.CacheTimeout = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Relay{cfg: cfg, now: time.Now, m: newRelayMetrics(cfg.Metrics), senders: map[common.Address]recentSender{}, txs: map[bchain.Hash]relayTx{}}
}

// Only tells whether a refused send must not fall back to the node.
func (r *Relay) Only() bool { return r.cfg.Only }

// FetchesMempool tells whether sent txs are cached as pending.
func (r *Relay) FetchesMempool() bool { return r.cfg.FetchMempoolTx }

// call runs one JSON-RPC call on provider i. Transport errors are reported
// by the provider's number only: the URL may hold an API key.
func (r *Relay) call(ctx context.Context, i int, out any, method string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.RPCTimeout)
	defer cancel()
	c, err := rpc.DialContext(ctx, r.cfg.URLs[i])
	if err != nil {
		return fmt.Errorf("%w: alternative provider %d unreachable", bchain.ErrNodeUnavailable, i+1)
	}
	defer c.Close()
	err = c.CallContext(ctx, out, method, args...)
	var re rpc.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		// The provider's own answer (e.g. "nonce too low") is the client's
		// to see, as a node's refusal is.
		return &bchain.RPCError{Code: re.ErrorCode(), Message: re.Error()}
	default:
		r.cfg.Log.Warn("alternative provider call failed", "provider", i+1, "method", method, "err", redact(err, r.cfg.URLs[i]))
		return fmt.Errorf("%w: alternative provider %d failed", bchain.ErrNodeUnavailable, i+1)
	}
}

// Send broadcasts raw to every provider, as Blockbook does; it succeeds
// when one accepts, else returns the first refusal. In only-mode with
// FetchMempoolTx the tx is read back from the accepting provider and cached
// as pending.
func (r *Relay) Send(ctx context.Context, raw []byte) (bchain.Hash, error) {
	var txid common.Hash
	var firstErr error
	accepted := -1
	for i := range r.cfg.URLs {
		var h common.Hash
		err := r.call(ctx, i, &h, "eth_sendRawTransaction", hexutil.Bytes(raw))
		if err == nil && accepted < 0 {
			accepted, txid = i, h
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if accepted < 0 {
		return bchain.Hash{}, firstErr
	}
	gen := r.registerSender(raw, accepted)
	if r.cfg.Only && r.cfg.FetchMempoolTx {
		if err := r.fetchBack(ctx, accepted, bchain.Hash(txid), gen); err != nil {
			r.cfg.Log.Warn("sent tx not read back from the alternative provider", "txid", txid.Hex(), "err", err)
		}
	}
	return bchain.Hash(txid), nil
}

// registerSender remembers the sender of raw as recent; the returned
// generation orders this send against the evictions of older cached txs.
func (r *Relay) registerSender(raw []byte, provider int) uint64 {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return 0
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), &tx)
	if err != nil {
		return 0
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for a, s := range r.senders {
		if now.Sub(s.at) > r.cfg.CacheTimeout {
			delete(r.senders, a)
		}
	}
	r.gen++
	r.senders[from] = recentSender{at: now, url: provider, gen: r.gen}
	return r.gen
}

// fetchBack reads the sent tx from the provider and caches it, replacing
// a cached tx of the same sender and nonce (a fee bump).
func (r *Relay) fetchBack(ctx context.Context, provider int, txid bchain.Hash, gen uint64) error {
	tx, err := r.providerTx(ctx, provider, txid)
	if err != nil {
		return err
	}
	if tx == nil {
		return bchain.ErrTxNotFound
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, again := r.txs[txid]; !again { // asked before the loop, which removes it too
		r.m.added.Inc()
	}
	for h, c := range r.txs {
		if c.tx.From == tx.From && c.tx.Nonce == tx.Nonce {
			delete(r.txs, h)
			if h != txid {
				r.m.removed.WithLabelValues(relayGoneReplaced).Inc()
			}
		}
	}
	r.txs[txid] = relayTx{tx: tx, added: r.now(), gen: gen}
	r.m.cached.Set(float64(len(r.txs)))
	return nil
}

// providerTx is eth_getTransactionByHash on one provider (nil: unknown).
func (r *Relay) providerTx(ctx context.Context, provider int, txid bchain.Hash) (*bchain.EthTx, error) {
	var raw json.RawMessage
	if err := r.call(ctx, provider, &raw, "eth_getTransactionByHash", common.Hash(txid)); err != nil {
		return nil, err
	}
	if isNull(raw) {
		return nil, nil
	}
	var rt rpcTx
	if err := json.Unmarshal(raw, &rt); err != nil {
		return nil, fmt.Errorf("%w: alternative provider %d: tx %s", bchain.ErrInvalidData, provider+1, txid)
	}
	var signer types.Signer = types.HomesteadSigner{}
	if rt.tx != nil {
		signer = types.LatestSignerForChainID(rt.tx.ChainId())
	}
	var tx bchain.EthTx
	if err := decodeTx(&rt, signer, &tx); err != nil {
		return nil, err
	}
	return &tx, nil
}

// redact removes a provider URL (which may carry a key) from a message.
func redact(err error, provider string) string {
	// Go's HTTP client names the URL in its errors, password masked but
	// user and path (where providers put their keys) as they are.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if provider == "" {
		return msg
	}
	secrets := []string{provider}
	if u, perr := url.Parse(provider); perr == nil {
		secrets = append(secrets, u.Redacted(), u.Host)
		if len(u.Path) > 1 {
			secrets = append(secrets, u.Path)
		}
		if u.User != nil {
			secrets = append(secrets, u.User.Username())
		}
	}
	for _, sec := range secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, "<provider>")
		}
	}
	return msg
}
