package api

import (
	"context"
	"errors"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Info answers the websocket's getInfo from the index tip and the node's
// cached chain info (left empty while the node is unreachable).
func (s *UtxoService) Info(ctx context.Context) (*WsInfo, error) {
	p := s.backend.Params
	out := &WsInfo{
		Name: p.Name, Shortcut: p.Shortcut, Network: p.APINetwork, Decimals: p.Decimals,
		Version: s.cfg.Build.Version, Testnet: p.Testnet, Block0Hash: p.Genesis.String(),
	}
	tip, ok, err := db.ReadTip(s.db)
	if err != nil {
		return nil, err
	}
	if ok {
		out.BestHeight, out.BestHash = tip.Height, tip.Hash.String()
	}
	if ci, err := s.info.get(ctx); err == nil {
		out.Backend = WsBackendInfo{Version: ci.Version, Subversion: ci.Subversion, Consensus: ci.Consensus}
	}
	return out, nil
}

// BlockHash answers getBlockHash from the index. Like Blockbook, a height
// the index does not hold answers an empty hash.
func (s *UtxoService) BlockHash(_ context.Context, height int) (string, error) {
	if height < 0 || int64(height) > int64(^uint32(0)) {
		return "", userErr("Invalid block height %d", height)
	}
	meta, err := db.ReadBlockMeta(s.db, uint32(height))
	if err != nil || meta == nil {
		return "", err
	}
	return meta.Hash.String(), nil
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
