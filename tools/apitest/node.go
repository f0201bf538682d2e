package apitest

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Node is an in-memory node serving the fixture's chain and pending txs:
// the parts of bchain.BlockChain, RawBlockSource, TxSource, TxBroadcaster,
// FeeEstimator and MempoolSource that the queries and the mempool call.
// It is safe for concurrent use.
type Node struct {
	parser *btc.Parser

	mu      sync.Mutex
	raw     [][]byte // blocks by height
	hashes  []bchain.Hash
	heights map[bchain.Hash]uint32
	// txs maps every confirmed tx to its block height.
	txs map[bchain.Hash]uint32
	// pending holds the node's mempool, in listing order.
	pending    []bchain.Hash
	pendingRaw map[bchain.Hash][]byte
	sent       [][]byte

	// RawTxCalls counts RawTx calls, so tests can see the tx cache work.
	RawTxCalls atomic.Int64
}

var (
	_ bchain.BlockChain     = (*Node)(nil)
	_ bchain.RawBlockSource = (*Node)(nil)
	_ bchain.TxSource       = (*Node)(nil)
	_ bchain.TxBroadcaster  = (*Node)(nil)
	_ bchain.FeeEstimator   = (*Node)(nil)
	_ bchain.MempoolSource  = (*Node)(nil)
)

// NewNode returns a node holding the raw blocks (by height from genesis)
// and the raw pending txs.
func NewNode(parser *btc.Parser, blocks [][]byte, pending [][]byte) (*Node, error) {
	n := &Node{parser: parser, heights: map[bchain.Hash]uint32{}, txs: map[bchain.Hash]uint32{},
		pendingRaw: map[bchain.Hash][]byte{}}
	for h, raw := range blocks {
		blk, err := parser.ParseBlock(raw)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", h, err)
		}
		n.raw = append(n.raw, raw)
		n.hashes = append(n.hashes, blk.Hash)
		n.heights[blk.Hash] = uint32(h)
		for i := range blk.Txs {
			n.txs[blk.Txs[i].Txid] = uint32(h)
		}
	}
	for i, raw := range pending {
		tx, err := parser.ParseTx(raw)
		if err != nil {
			return nil, fmt.Errorf("pending tx %d: %w", i, err)
		}
		n.pending = append(n.pending, tx.Txid)
		n.pendingRaw[tx.Txid] = raw
	}
	return n, nil
}

// BestBlock returns the tip.
func (n *Node) BestBlock(context.Context) (uint32, bchain.Hash, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.hashes) == 0 {
		return 0, bchain.Hash{}, fmt.Errorf("%w: the node has no blocks", bchain.ErrBlockNotFound)
	}
	tip := len(n.hashes) - 1
	return uint32(tip), n.hashes[tip], nil
}

// BlockHash returns the hash of the block at height.
func (n *Node) BlockHash(_ context.Context, height uint32) (bchain.Hash, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if int64(height) >= int64(len(n.hashes)) {
		return bchain.Hash{}, fmt.Errorf("%w: height %d", bchain.ErrBlockNotFound, height)
	}
	return n.hashes[height], nil
}

// BlockHeight returns the height of a block.
func (n *Node) BlockHeight(_ context.Context, hash bchain.Hash) (uint32, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h, ok := n.heights[hash]
	if !ok {
		return 0, fmt.Errorf("%w: %s", bchain.ErrBlockNotFound, hash)
	}
	return h, nil
}

// Block decodes a block, as the real node does.
func (n *Node) Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	raw, err := n.RawBlock(ctx, hash)
	if err != nil {
		return nil, err
	}
	blk, err := n.parser.ParseBlock(raw)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", hash, err)
	}
	blk.Height = height
	return blk, nil
}

// RawBlock returns a serialized block.
func (n *Node) RawBlock(_ context.Context, hash bchain.Hash) ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h, ok := n.heights[hash]
	if !ok {
		return nil, fmt.Errorf("%w: %s", bchain.ErrBlockNotFound, hash)
	}
	return n.raw[h], nil
}

// ChainInfo describes the chain as a regtest node would.
func (n *Node) ChainInfo(ctx context.Context) (*bchain.ChainInfo, error) {
	tip, hash, err := n.BestBlock(ctx)
	if err != nil {
		return nil, err
	}
	return &bchain.ChainInfo{Chain: "regtest", Blocks: int(tip), Headers: int(tip), BestBlockHash: hash.String(),
		Version: "260200", Subversion: "/apitest:0.1/"}, nil
}

// RawTx returns a pending or confirmed tx (the node has a tx index).
func (n *Node) RawTx(_ context.Context, txid bchain.Hash, _ bchain.Hash) ([]byte, error) {
	n.RawTxCalls.Add(1)
	return n.rawTx(txid)
}

func (n *Node) rawTx(txid bchain.Hash) ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if raw, ok := n.pendingRaw[txid]; ok {
		return raw, nil
	}
	h, ok := n.txs[txid]
	if !ok {
		return nil, fmt.Errorf("%w: %s", bchain.ErrTxNotFound, txid)
	}
	blk, err := n.parser.ParseBlock(n.raw[h])
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", h, err)
	}
	for i := range blk.Txs {
		if blk.Txs[i].Txid == txid {
			return blk.Txs[i].Raw, nil
		}
	}
	return nil, fmt.Errorf("%w: %s not in block %d", bchain.ErrTxNotFound, txid, h)
}

// TxSpecific returns a small verbose JSON of a tx: its txid, hex and,
// when confirmed, its block hash.
func (n *Node) TxSpecific(_ context.Context, txid bchain.Hash, _ bchain.Hash) (json.RawMessage, error) {
	raw, err := n.rawTx(txid)
	if err != nil {
		return nil, err
	}
	v := map[string]any{"txid": txid.String(), "hex": hex.EncodeToString(raw)}
	n.mu.Lock()
	if h, ok := n.txs[txid]; ok {
		v["blockhash"] = n.hashes[h].String()
	}
	n.mu.Unlock()
	return json.Marshal(v)
}

// SendRawTx accepts a tx that is neither confirmed nor pending yet and
// rejects the others the way bitcoind does.
func (n *Node) SendRawTx(_ context.Context, raw []byte) (bchain.Hash, error) {
	tx, err := n.parser.ParseTx(raw)
	if err != nil {
		return bchain.Hash{}, &bchain.RPCError{Code: -22, Message: "TX decode failed"}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.txs[tx.Txid]; ok {
		return bchain.Hash{}, &bchain.RPCError{Code: -27, Message: "Transaction already in block chain"}
	}
	if _, ok := n.pendingRaw[tx.Txid]; ok {
		return bchain.Hash{}, &bchain.RPCError{Code: -26, Message: "txn-already-in-mempool"}
	}
	n.sent = append(n.sent, raw)
	return tx.Txid, nil
}

// Sent returns the txs SendRawTx accepted.
func (n *Node) Sent() [][]byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([][]byte(nil), n.sent...)
}

// FeeRate is what EstimateFee answers for a target of blocks: a fixed,
// falling curve in satoshi per 1000 vbytes.
func FeeRate(blocks int) int64 { return 1000 + 20_000/int64(blocks) }

// EstimateFee answers FeeRate.
func (n *Node) EstimateFee(_ context.Context, blocks int, _ bool) (int64, error) {
	if blocks < 1 {
		return 0, fmt.Errorf("%w: target %d", bchain.ErrUnsupported, blocks)
	}
	return FeeRate(blocks), nil
}

// MempoolTxids lists the pending txs.
func (n *Node) MempoolTxids(context.Context) ([]bchain.Hash, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]bchain.Hash(nil), n.pending...), nil
}
