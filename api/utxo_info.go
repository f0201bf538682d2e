package api

import (
	"context"
	"errors"
	"strconv"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Info answers the websocket's getInfo from the index tip and the node's
// cached chain info (left empty while the node is unreachable).
func (s *core) Info(ctx context.Context) (*WsInfo, error) {
	p := s.backend.Params
	out := &WsInfo{
		Name: p.Name, Shortcut: p.Shortcut, Network: p.APINetwork, Decimals: p.Decimals,
		Version: s.cfg.Build.Version, Testnet: p.Testnet, Block0Hash: s.hashString(p.Genesis),
	}
	tip, ok, err := db.ReadTip(s.db)
	if err != nil {
		return nil, err
	}
	if ok {
		out.BestHeight, out.BestHash = tip.Height, s.hashString(tip.Hash)
	}
	if p.Genesis.IsZero() { // a dev chain's genesis: the index's block 0
		if meta, err := db.ReadBlockMeta(s.db, 0); err == nil && meta != nil {
			out.Block0Hash = s.hashString(meta.Hash)
		}
	}
	if ci, err := s.info.get(ctx); err == nil {
		out.Backend = WsBackendInfo{Version: ci.Version, Subversion: ci.Subversion, Consensus: ci.Consensus}
	}
	return out, nil
}

// BlockHash answers getBlockHash from the index. Like Blockbook, a height
// the index does not hold answers an empty hash.
func (s *core) BlockHash(_ context.Context, height int) (string, error) {
	if height < 0 || int64(height) > int64(^uint32(0)) {
		return "", userErr("Invalid block height %d", height)
	}
	meta, err := db.ReadBlockMeta(s.db, uint32(height))
	if err != nil || meta == nil {
		return "", err
	}
	return s.hashString(meta.Hash), nil
}

// maxFeeBlocks is the largest confirmation target nodes estimate for.
const maxFeeBlocks = 1008

// FeeRate estimates the fee rate in base units per 1000 virtual bytes for
// confirmation within blocks blocks (the websocket's feePerUnit).
func (s *UtxoService) FeeRate(ctx context.Context, blocks int, conservative bool) (int64, error) {
	if blocks < 1 || blocks > maxFeeBlocks {
		return 0, userErr("Invalid number of blocks %d, use 1 to %d", blocks, maxFeeBlocks)
	}
	if s.backend.Fees == nil {
		return 0, userErr("Fee estimation is not supported for this coin")
	}
	rate, err := s.backend.Fees.EstimateFee(ctx, blocks, conservative)
	if errors.Is(err, bchain.ErrUnsupported) {
		return 0, &Error{Msg: "The node cannot estimate fees", Err: err}
	}
	return rate, err
}

// FeeEstimates answers estimateFee: the rate per 1000 vbytes for each
// target and, given a tx size, the fee of the tx (rounded to the nearest
// unit, as Blockbook).
func (s *UtxoService) FeeEstimates(ctx context.Context, blocks []int, q FeeQuery) ([]FeeEstimate, error) {
	out := make([]FeeEstimate, len(blocks))
	for i, b := range blocks {
		rate, err := s.FeeRate(ctx, b, q.Conservative)
		if err != nil {
			return nil, err
		}
		out[i].FeePerUnit = strconv.FormatInt(rate, 10)
		if q.TxSize > 0 {
			out[i].FeePerTx = strconv.FormatInt((rate*q.TxSize+500)/1000, 10)
		}
	}
	return out, nil
}

// Contract: Bitcoin-type chains have no contracts.
func (s *UtxoService) Contract(context.Context, string) (*ContractInfo, error) {
	return nil, userErr("Contracts are not supported for Bitcoin-type coins")
}
