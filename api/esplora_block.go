package api

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// The Esplora front's block and mempool queries (EsploraQueries).

// medianTimeSpan is the number of blocks whose times give the median time
// past (BIP113).
const medianTimeSpan = 11

// EsploraTip is the index's best block.
func (s *core) EsploraTip(context.Context) (uint32, bchain.Hash, bool, error) {
	v, err := s.newView()
	if err != nil {
		return 0, bchain.Hash{}, false, err
	}
	defer v.release()
	return v.tip.Height, v.tip.Hash, v.hasTip, nil
}

// EsploraBlockHeight finds a block of the index's chain by hash (the node
// maps the hash to a height; the index confirms the block is its own).
func (s *core) EsploraBlockHeight(ctx context.Context, hash bchain.Hash) (uint32, bool, error) {
	h, err := s.backend.Chain.BlockHeight(ctx, hash)
	if errors.Is(err, bchain.ErrBlockNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("height of block %s: %w", hash, err)
	}
	v, err := s.newView()
	if err != nil {
		return 0, false, err
	}
	defer v.release()
	meta, err := db.ReadBlockMeta(v.snap, h)
	if err != nil || meta == nil || meta.Hash != hash {
		return 0, false, err
	}
	return h, true, nil
}

// EsploraBlock returns the index's block at height with its header fields,
// weight and txids (the block itself comes from the node).
func (s *UtxoService) EsploraBlock(ctx context.Context, height uint32) (*EsploraBlock, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	meta, err := db.ReadBlockMeta(v.snap, height)
	if err != nil || meta == nil {
		return nil, err
	}
	blk, err := s.backend.Chain.Block(ctx, meta.Hash, height)
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", height, err)
	}
	out := &EsploraBlock{
		Height: height, Hash: meta.Hash, Prev: blk.Prev, Version: blk.Version, MerkleRoot: blk.MerkleRoot,
		Time: blk.Time, Bits: blk.Bits, Nonce: blk.Nonce, Size: int(meta.Size),
		Txids: make([]bchain.Hash, len(blk.Txs)),
	}
	if blk.Size > 0 {
		out.Size = blk.Size
	}
	out.Weight = (80 + bchain.CompactSizeLen(len(blk.Txs))) * 4
	for i := range blk.Txs {
		out.Txids[i] = blk.Txs[i].Txid
		out.Weight += blk.Txs[i].Weight()
	}
	if out.MedianTime, err = medianTime(v, height); err != nil {
		return nil, err
	}
	next, err := db.ReadBlockMeta(v.snap, height+1)
	if err != nil {
		return nil, err
	}
	if next != nil {
		out.Next, out.HasNext = next.Hash, true
	}
	return out, nil
}

// EsploraBlockRefs reads the hash and time of blocks by height.
func (s *core) EsploraBlockRefs(_ context.Context, heights []uint32) (map[uint32]EsploraBlockRef, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	out := make(map[uint32]EsploraBlockRef, len(heights))
	for _, h := range heights {
		if _, done := out[h]; done {
			continue
		}
		meta, err := db.ReadBlockMeta(v.snap, h)
		if err != nil {
			return nil, err
		}
		if meta != nil {
			out[h] = EsploraBlockRef{Height: h, Hash: meta.Hash, Time: meta.Time}
		}
	}
	return out, nil
}

// medianTime is the median of the times of the block at height and the
// ten before it (fewer near genesis).
func medianTime(v *view, height uint32) (int64, error) {
	from := uint32(0)
	if height >= medianTimeSpan-1 {
		from = height - (medianTimeSpan - 1)
	}
	times := make([]int64, 0, medianTimeSpan)
	for h := from; h <= height; h++ {
		meta, err := db.ReadBlockMeta(v.snap, h)
		if err != nil {
			return 0, err
		}
		if meta == nil {
			return 0, fmt.Errorf("%w: no block %d below %d", db.ErrCorrupt, h, height)
		}
		times = append(times, meta.Time)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[len(times)/2], nil
}

// EsploraRawBlock returns the serialized block at height from the node.
func (s *UtxoService) EsploraRawBlock(ctx context.Context, height uint32) ([]byte, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	meta, err := db.ReadBlockMeta(v.snap, height)
	v.release()
	if err != nil || meta == nil {
		return nil, err
	}
	if s.backend.RawBlocks == nil {
		return nil, s.caps.NotSupported(CapRawBlocks)
	}
	raw, err := s.backend.RawBlocks.RawBlock(ctx, meta.Hash)
	if err != nil {
		return nil, fmt.Errorf("raw block %d: %w", height, err)
	}
	return raw, nil
}

// EsploraMempool lists the pending txs, newest first, leaving out those the
// index already holds as confirmed.
func (s *UtxoService) EsploraMempool(context.Context) ([]EsploraMempoolTx, error) {
	if s.cfg.Mempool == nil {
		return nil, nil
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	txs := s.cfg.Mempool.Txs()
	out := make([]EsploraMempoolTx, 0, len(txs))
	for _, tx := range txs {
		ta, err := db.ReadTxAddresses(v.snap, tx.Txid)
		if err != nil {
			return nil, err
		}
		if ta != nil {
			continue
		}
		e := EsploraMempoolTx{Txid: tx.Txid, VSize: tx.VSize, FirstSeen: tx.FirstSeen}
		e.Fee, e.FeeKnown = tx.Fee()
		for _, o := range tx.Vout {
			e.Value += o.Value
		}
		out = append(out, e)
	}
	return out, nil
}
