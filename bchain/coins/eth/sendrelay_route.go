package eth

import (
	"context"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

// RelayBroadcast sends through the relay first, as Blockbook does: a
// refusal falls back to the node unless the relay is only-mode; a send
// marked bchain.WithDirectSend goes to the node alone.
type RelayBroadcast struct {
	Next  bchain.TxBroadcaster
	Relay *Relay
}

// SendRawTx implements bchain.TxBroadcaster.
func (b RelayBroadcast) SendRawTx(ctx context.Context, raw []byte) (bchain.Hash, error) {
	if !bchain.DirectSend(ctx) {
		h, err := b.Relay.Send(ctx, raw)
		if err == nil || b.Relay.Only() {
			return h, err
		}
	}
	return b.Next.SendRawTx(ctx, raw)
}

// RelayEth routes nonce queries of recent relay senders to the relay (see
// Relay.Nonce) and reads cached private txs; everything else is the node's.
type RelayEth struct {
	bchain.EthereumChain
	Relay *Relay
}

// Nonce implements bchain.EthereumChain.
func (e RelayEth) Nonce(ctx context.Context, addr bchain.AddrDesc, at bchain.EthBlockTag) (uint64, error) {
	return e.Relay.Nonce(ctx, addr, at, func() (uint64, error) { return e.EthereumChain.Nonce(ctx, addr, at) })
}

// Tx implements bchain.EthereumChain: a tx the relay cache holds first (the
// public node may not know it), as Blockbook reads it.
func (e RelayEth) Tx(ctx context.Context, h bchain.Hash) (*bchain.EthTx, error) {
	if tx, ok := e.Relay.CachedTx(h); ok {
		return tx, nil
	}
	return e.EthereumChain.Tx(ctx, h)
}

// EstimateGas implements bchain.EthereumChain: the first provider's
// estimate, the node's when it fails, as Blockbook asks.
func (e RelayEth) EstimateGas(ctx context.Context, c bchain.EthCall) (uint64, error) {
	if msg, err := callMsg(c); err == nil {
		var gas hexutil.Uint64
		if err := e.Relay.call(ctx, 0, &gas, "eth_estimateGas", msg); err == nil {
			return uint64(gas), nil
		}
	}
	return e.EthereumChain.EstimateGas(ctx, c)
}

// MempoolNode is what the pending-tx follower reads (ethmempool.Node).
type MempoolNode interface {
	MempoolTxids(ctx context.Context) ([]bchain.Hash, error)
	Tx(ctx context.Context, hash bchain.Hash) (*bchain.EthTx, error)
}

// RelayMempool adds the relay's cached pending txs to the node's, so the
// txs sent privately show as pending though the public node lacks them.
type RelayMempool struct {
	Next  MempoolNode
	Relay *Relay
}

// MempoolTxids implements MempoolNode.
func (m RelayMempool) MempoolTxids(ctx context.Context) ([]bchain.Hash, error) {
	ids, err := m.Next.MempoolTxids(ctx)
	if err != nil {
		return nil, err
	}
	seen := make(map[bchain.Hash]bool, len(ids))
	for _, h := range ids {
		seen[h] = true
	}
	for _, h := range m.Relay.CachedIDs() {
		if !seen[h] {
			ids = append(ids, h)
		}
	}
	return ids, nil
}

// Tx implements MempoolNode: the cached tx first, as Blockbook reads it.
func (m RelayMempool) Tx(ctx context.Context, h bchain.Hash) (*bchain.EthTx, error) {
	if tx, ok := m.Relay.CachedTx(h); ok {
		return tx, nil
	}
	return m.Next.Tx(ctx, h)
}
