package esplora

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/openexplorer/blockbook/api"
)

// The block routes: /block/:hash[/...], /block-height/:height,
// /blocks[/:start_height] and /blocks/tip/{height,hash}.

// blockValue is electrs' BlockValue.
type blockValue struct {
	ID                string  `json:"id"`
	Height            uint32  `json:"height"`
	Version           uint32  `json:"version"`
	Timestamp         int64   `json:"timestamp"`
	TxCount           int     `json:"tx_count"`
	Size              int     `json:"size"`
	Weight            int     `json:"weight"`
	MerkleRoot        string  `json:"merkle_root"`
	Previousblockhash *string `json:"previousblockhash"`
	Mediantime        int64   `json:"mediantime"`
	Nonce             uint32  `json:"nonce"`
	Bits              uint32  `json:"bits"`
	Difficulty        float64 `json:"difficulty"`
}

func blockValueOf(b *api.EsploraBlock) blockValue {
	v := blockValue{
		ID: b.Hash.String(), Height: b.Height, Version: uint32(b.Version), Timestamp: b.Time,
		TxCount: len(b.Txids), Size: b.Size, Weight: b.Weight, MerkleRoot: b.MerkleRoot.String(),
		Mediantime: b.MedianTime, Nonce: b.Nonce, Bits: b.Bits, Difficulty: difficulty(b.Bits),
	}
	if !b.Prev.IsZero() {
		prev := b.Prev.String()
		v.Previousblockhash = &prev
	}
	return v
}

// blockStatus is electrs' BlockStatus (height and next_best are null for
// a block off the best chain).
type blockStatus struct {
	InBestChain bool    `json:"in_best_chain"`
	Height      *uint32 `json:"height"`
	NextBest    *string `json:"next_best"`
}

func (s *Server) routeBlock(ctx context.Context, p []string, n int) (*reply, error) {
	switch {
	case p[0] == "blocks" && n == 3 && p[1] == "tip" && (p[2] == "height" || p[2] == "hash"):
		return s.tip(ctx, p[2] == "height")
	case p[0] == "blocks" && n <= 2:
		return s.blocks(ctx, p[1], n == 2)
	case p[0] == "block-height" && n == 2:
		h, err := strconv.ParseUint(p[1], 10, 64)
		if err != nil {
			return nil, badRequest("Invalid number")
		}
		b, err := s.blockAt(ctx, h)
		if err != nil {
			return nil, err
		}
		return textReply(b.Hash.String())
	case p[0] == "block" && n >= 2:
		return s.block(ctx, p, n)
	}
	return nil, errNoRoute
}

func (s *Server) tip(ctx context.Context, height bool) (*reply, error) {
	h, hash, ok, err := s.q.EsploraTip(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("Block not found")
	}
	if height {
		return textReply(strconv.FormatUint(uint64(h), 10))
	}
	return textReply(hash.String())
}

// blockAt is the active chain's block at height, or Esplora's 404.
func (s *Server) blockAt(ctx context.Context, h uint64) (*api.EsploraBlock, error) {
	if h > 1<<32-1 {
		return nil, notFound("Block not found")
	}
	b, err := s.q.EsploraBlock(ctx, uint32(h))
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, notFound("Block not found")
	}
	return b, nil
}

// blocks answers the 10 blocks from start (the tip when absent or not a
// number) down towards genesis.
func (s *Server) blocks(ctx context.Context, start string, hasStart bool) (*reply, error) {
	tipH, _, ok, err := s.q.EsploraTip(ctx)
	if err != nil {
		return nil, err
	}
	from := uint64(tipH)
	if hasStart {
		if v, perr := strconv.ParseUint(start, 10, 64); perr == nil {
			from = v
		}
	}
	if !ok || from > uint64(tipH) {
		return nil, notFound("Block not found")
	}
	out := []blockValue{}
	for h := int64(from); h >= 0 && len(out) < blocksPerPage; h-- {
		b, err := s.blockAt(ctx, uint64(h))
		if err != nil {
			return nil, err
		}
		out = append(out, blockValueOf(b))
	}
	return jsonReply(out)
}

// block answers /block/:hash and its sub-resources.
func (s *Server) block(ctx context.Context, p []string, n int) (*reply, error) {
	sub := p[2]
	switch {
	case n == 2, n == 3 && (sub == "status" || sub == "txids" || sub == "header" || sub == "raw" || sub == "txs"):
	case n == 4 && (sub == "txid" || sub == "txs"):
	default:
		return nil, errNoRoute
	}
	hash, err := parseHash(p[1])
	if err != nil {
		return nil, err
	}
	height, found, err := s.q.EsploraBlockHeight(ctx, hash)
	if err != nil {
		return nil, err
	}
	if sub == "status" {
		st := blockStatus{}
		if found {
			b, err := s.blockAt(ctx, uint64(height))
			if err != nil {
				return nil, err
			}
			st.InBestChain, st.Height = true, &height
			if b.HasNext {
				next := b.Next.String()
				st.NextBest = &next
			}
		}
		return jsonReply(st)
	}
	if !found {
		return nil, notFound("Block not found")
	}
	if sub == "raw" {
		raw, err := s.q.EsploraRawBlock(ctx, height)
		if err != nil {
			return nil, err
		}
		return &reply{"application/octet-stream", raw}, nil
	}
	b, err := s.blockAt(ctx, uint64(height))
	if err != nil {
		return nil, err
	}
	switch sub {
	case "":
		return jsonReply(blockValueOf(b))
	case "header":
		return textReply(hex.EncodeToString(headerBytes(b)))
	case "txids":
		ids := make([]string, len(b.Txids))
		for i, id := range b.Txids {
			ids[i] = id.String()
		}
		return jsonReply(ids)
	case "txid":
		i, err := strconv.ParseUint(p[3], 10, 64)
		if err != nil {
			return nil, badRequest("Invalid number")
		}
		if i >= uint64(len(b.Txids)) {
			return nil, notFound("tx index out of range")
		}
		return textReply(b.Txids[i].String())
	}
	return s.blockTxs(ctx, b, p[3])
}

// blockTxs answers 25 txs of a block from start_index, which must be a
// multiple of 25 (one that is not a number counts as 0, as in electrs).
func (s *Server) blockTxs(ctx context.Context, b *api.EsploraBlock, start string) (*reply, error) {
	from, err := strconv.ParseUint(start, 10, 32)
	if err != nil {
		from = 0
	}
	if from%chainTxsPerPage != 0 {
		return nil, badRequest(fmt.Sprintf("start index must be a multiple of %d", chainTxsPerPage))
	}
	if from >= uint64(len(b.Txids)) {
		return nil, notFound("start index out of range")
	}
	end := min(int(from)+chainTxsPerPage, len(b.Txids))
	out := make([]txValue, 0, end-int(from))
	for _, id := range b.Txids[from:end] {
		tx, err := s.q.EsploraTx(ctx, id)
		if err != nil {
			return nil, err
		}
		if tx == nil {
			return nil, fmt.Errorf("tx %s of block %d: %w", id, b.Height, errMissingTx)
		}
		out = append(out, s.txValueOf(tx))
	}
	return jsonReply(out)
}
