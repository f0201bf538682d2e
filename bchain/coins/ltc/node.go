package ltc

import (
	"context"
	"fmt"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// canonicalTxs is the node as the index, the API and the mempool see it:
// MWEB-only txs (litecoind lists them in its mempool under their kernel
// id, with no canonical inputs or outputs) are not found, as they have no
// transparent part to show, the way a wallet without MWEB does not see
// them. Ids found to be MWEB-only are remembered while the node's mempool
// lists them, so resyncs do not fetch them again.
type canonicalTxs struct {
	*btc.Node
	mu       sync.Mutex
	mwebOnly map[bchain.Hash]struct{}
}

// adjust installs canonicalTxs as the backend's tx and mempool source.
func adjust(b *bchain.Backend, node *btc.Node, _ *bchain.Config) error {
	c := &canonicalTxs{Node: node, mwebOnly: map[bchain.Hash]struct{}{}}
	b.Txs = c
	b.Mempool = c
	return nil
}

// isMWEBOnly reports whether raw is an MWEB-only tx.
func isMWEBOnly(raw []byte) bool {
	p, err := scanTx(raw)
	return err == nil && p.mweb != nil && p.mweb.HasTxBody && p.ioEnd-p.ioStart == 2
}

func (c *canonicalTxs) remember(txid bchain.Hash) {
	c.mu.Lock()
	c.mwebOnly[txid] = struct{}{}
	c.mu.Unlock()
}

// RawTx returns a tx's serialization; MWEB-only txs are not found.
func (c *canonicalTxs) RawTx(ctx context.Context, txid bchain.Hash, inBlock bchain.Hash) ([]byte, error) {
	raw, err := c.Node.RawTx(ctx, txid, inBlock)
	if err == nil && isMWEBOnly(raw) {
		c.remember(txid)
		return nil, fmt.Errorf("%w: %s is an MWEB-only transaction", bchain.ErrTxNotFound, txid)
	}
	return raw, err
}

// RawTxs is the batched RawTx; MWEB-only txs come back as nil (not found).
func (c *canonicalTxs) RawTxs(ctx context.Context, txids []bchain.Hash) ([][]byte, error) {
	raws, err := c.Node.RawTxs(ctx, txids)
	if err != nil {
		return nil, err
	}
	for i, raw := range raws {
		if raw != nil && isMWEBOnly(raw) {
			c.remember(txids[i])
			raws[i] = nil
		}
	}
	return raws, nil
}

// MempoolTxids lists the node's mempool without the txs known to be
// MWEB-only, and forgets those the node no longer lists.
func (c *canonicalTxs) MempoolTxids(ctx context.Context) ([]bchain.Hash, error) {
	ids, err := c.Node.MempoolTxids(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	listed := make(map[bchain.Hash]struct{}, len(c.mwebOnly))
	out := ids[:0]
	for _, id := range ids {
		if _, ok := c.mwebOnly[id]; ok {
			listed[id] = struct{}{}
			continue
		}
		out = append(out, id)
	}
	c.mwebOnly = listed
	return out, nil
}
