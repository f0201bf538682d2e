package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/openexplorer/blockbook/bchain"
)

// Mempool lists the node's pending txs and relays new ones. It prefers
// txpool_content (geth, erigon, nethermind); a node without it is followed
// through the newPendingTransactions subscription alone, remembering what
// was announced until it is mined, dropped, or older than the timeout.
type Mempool struct {
	node    *Node
	WSURL   string
	Timeout time.Duration // mempoolTxTimeoutHours
	Log     *slog.Logger

	noTxpool atomic.Bool
	mu       sync.Mutex
	seen     map[bchain.Hash]time.Time
}

var (
	_ bchain.MempoolSource = (*Mempool)(nil)
	_ bchain.TxNotifier    = (*Mempool)(nil)
)

// NewMempool builds the mempool source of a node.
func NewMempool(node *Node, cfg *bchain.Config) *Mempool {
	return &Mempool{node: node, WSURL: node.wsURL, Timeout: mempoolTimeout(cfg), Log: node.log, seen: map[bchain.Hash]time.Time{}}
}

// MempoolTxids returns the hashes of pending and queued txs.
func (m *Mempool) MempoolTxids(ctx context.Context) ([]bchain.Hash, error) {
	if !m.noTxpool.Load() {
		ids, err := m.txpool(ctx)
		if err == nil || !isMethodNotFound(err) {
			return ids, err
		}
		orDefault(m.Log).Info("node lacks txpool_content; the mempool follows newPendingTransactions only", "err", err)
		m.noTxpool.Store(true)
	}
	return m.fromSubscription(ctx)
}

func (m *Mempool) txpool(ctx context.Context) ([]bchain.Hash, error) {
	// {"pending": {from: {nonce: tx}}, "queued": {...}}; only hashes matter.
	var content map[string]map[string]map[string]struct {
		Hash common.Hash `json:"hash"`
	}
	if err := m.node.rpc.call(ctx, &content, "txpool_content"); err != nil {
		return nil, err
	}
	var out []bchain.Hash
	for _, pool := range []string{"pending", "queued"} {
		for _, byNonce := range content[pool] {
			for _, tx := range byNonce {
				out = append(out, bchain.Hash(tx.Hash))
			}
		}
	}
	return out, nil
}

// fromSubscription returns the announced txs the node still holds unmined,
// forgetting expired and mined ones.
func (m *Mempool) fromSubscription(ctx context.Context) ([]bchain.Hash, error) {
	m.mu.Lock()
	var ids []bchain.Hash
	for h, t := range m.seen {
		if time.Since(t) > m.Timeout {
			delete(m.seen, h)
			continue
		}
		ids = append(ids, h)
	}
	m.mu.Unlock()
	out := ids[:0]
	for start := 0; start < len(ids); start += receiptBatch {
		chunk := ids[start:min(start+receiptBatch, len(ids))]
		res := make([]json.RawMessage, len(chunk))
		elems := make([]rpc.BatchElem, len(chunk))
		for i, h := range chunk {
			elems[i] = rpc.BatchElem{Method: "eth_getTransactionByHash", Args: []any{common.Hash(h)}, Result: &res[i]}
		}
		if err := m.node.rpc.batch(ctx, elems); err != nil {
			return nil, err
		}
		for i, h := range chunk {
			var tx struct {
				BlockHash *common.Hash `json:"blockHash"`
			}
			if elems[i].Error == nil && !isNull(res[i]) && json.Unmarshal(res[i], &tx) == nil && (tx.BlockHash == nil || *tx.BlockHash == (common.Hash{})) {
				out = append(out, h)
				continue
			}
			if elems[i].Error == nil {
				m.mu.Lock()
				delete(m.seen, h) // mined or dropped
				m.mu.Unlock()
			}
		}
	}
	return out, nil
}

// Run relays newPendingTransactions hashes until ctx ends, reconnecting
// with backoff; the mempool's periodic resync covers the gaps.
func (m *Mempool) Run(ctx context.Context, signal func(txid bchain.Hash)) error {
	if m.WSURL == "" {
		return fmt.Errorf("%w: no websocket URL (rpc_url_ws) for pending tx notifications", bchain.ErrConfig)
	}
	log := orDefault(m.Log)
	backoff := minReconnect
	for ctx.Err() == nil {
		start := time.Now()
		err := m.session(ctx, signal)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > maxReconnect {
			backoff = minReconnect
		}
		log.Warn("newPendingTransactions subscription lost", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxReconnect)
	}
	return nil
}

func (m *Mempool) session(ctx context.Context, signal func(bchain.Hash)) error {
	ch := make(chan common.Hash, 256)
	cl, sub, err := subscribe(ctx, m.WSURL, ch, "newPendingTransactions")
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-sub.Err():
			if err == nil {
				err = errors.New("subscription closed")
			}
			return err
		case h := <-ch:
			m.mu.Lock()
			if _, ok := m.seen[bchain.Hash(h)]; !ok {
				m.seen[bchain.Hash(h)] = time.Now()
			}
			m.mu.Unlock()
			signal(bchain.Hash(h))
		}
	}
}
