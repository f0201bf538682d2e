package scalegen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// TxSource plays the node for the API's confirmed-tx reads in the query
// benchmarks (cmd/querybench -scale, cmd/routebench): the index names the
// tx's block, which is read from the chain directory and split into txs.
// The node is not what they measure, so every tx it returns stays in
// memory (copied out of its block) and the last few blocks stay parsed:
// once a query ran, its txs cost a map lookup, cold queries included.
type TxSource struct {
	chain  *Server
	mu     sync.Mutex
	recent []parsedBlock // most recently used first
	pinned map[bchain.Hash][]byte
}

type parsedBlock struct {
	hash bchain.Hash
	txs  map[bchain.Hash][]byte
}

// recentBlocks is how many parsed blocks a TxSource keeps.
const recentBlocks = 8

// NewTxSource serves the txs of chain's blocks.
func NewTxSource(chain *Server) *TxSource {
	return &TxSource{chain: chain, pinned: map[bchain.Hash][]byte{}}
}

// RawTx returns a confirmed tx of the block inBlock; as a node without
// -txindex, it knows no tx without its block (and there is no mempool).
func (b *TxSource) RawTx(_ context.Context, txid, inBlock bchain.Hash) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if raw, ok := b.pinned[txid]; ok {
		return raw, nil
	}
	if inBlock.IsZero() {
		return nil, bchain.ErrTxNotFound
	}
	txs, err := b.block(inBlock)
	if err != nil {
		return nil, err
	}
	raw, ok := txs[txid]
	if !ok {
		return nil, bchain.ErrTxNotFound
	}
	raw = bytes.Clone(raw) // not a slice of the block: pinned txs would keep whole blocks
	b.pinned[txid] = raw
	return raw, nil
}

// TxSpecific is the node's own tx JSON, which this node does not have.
func (b *TxSource) TxSpecific(context.Context, bchain.Hash, bchain.Hash) (json.RawMessage, error) {
	return nil, errors.New("scalegen: no node-specific tx JSON")
}

// block returns the txs of a block by txid, from the parsed blocks or the
// chain (b.mu held).
func (b *TxSource) block(hash bchain.Hash) (map[bchain.Hash][]byte, error) {
	for i, c := range b.recent {
		if c.hash == hash {
			copy(b.recent[1:i+1], b.recent[:i])
			b.recent[0] = c
			return c.txs, nil
		}
	}
	h, ok := b.chain.Height(btc.InternalHash(hash))
	if !ok {
		return nil, bchain.ErrTxNotFound
	}
	raw, err := b.chain.Block(h)
	if err != nil {
		return nil, err
	}
	var msg wire.MsgBlock
	locs, err := msg.DeserializeTxLoc(bytes.NewBuffer(raw))
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", h, err)
	}
	txs := make(map[bchain.Hash][]byte, len(locs))
	for i, l := range locs {
		txs[btc.DisplayHash(msg.Transactions[i].TxHash())] = raw[l.TxStart : l.TxStart+l.TxLen]
	}
	b.recent = append([]parsedBlock{{hash, txs}}, b.recent[:min(len(b.recent), recentBlocks-1)]...)
	return txs, nil
}
