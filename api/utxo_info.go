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
	snap, err := s.db.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	tip, ok, err := db.ReadTip(snap)
	if err != nil {
		return nil, err
	}
	if ok {
		out.BestHeight, out.BestHash = tip.Height, s.hashString(tip.Hash)
	}
	if p.Genesis.IsZero() { // a dev chain's genesis: the index's block 0
		if meta, err := db.ReadBlockMeta(snap, 0); err == nil && meta != nil {
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
	snap, err := s.db.Snapshot()
	if err != nil {
		return "", err
	}
	defer snap.Release()
	meta, err := db.ReadBlockMeta(snap, uint32(height))
	if err != nil || meta == nil {
		return "", err
	}
	return s.hashString(meta.Hash), nil
}

// CheckFeeTargets validates estimateFee's confirmation targets: each in
// 1..1008, the targets nodes estimate for.
func (s *UtxoService) CheckFeeTargets(blocks []int) error {
	for _, b := range blocks {
		if b < 1 || b > maxFeeBlocks {
			return userErr("Invalid number of blocks %d, use 1 to %d", b, maxFeeBlocks)
		}
	}
	return nil
}

// utxoFees is the fee estimation capability of a Bitcoin-type service
// whose node has an estimator.
type utxoFees struct {
	s   *UtxoService
	est bchain.FeeEstimator
}

// feeRate estimates the fee rate in base units per 1000 virtual bytes for
// confirmation within blocks blocks (the websocket's feePerUnit).
func (f utxoFees) feeRate(ctx context.Context, blocks int, conservative bool) (int64, error) {
	if err := f.s.CheckFeeTargets([]int{blocks}); err != nil {
		return 0, err
	}
	rate, err := f.est.EstimateFee(ctx, blocks, conservative)
	if errors.Is(err, bchain.ErrUnsupported) {
		return 0, &Error{Msg: "The node cannot estimate fees", Err: err}
	}
	return rate, err
}

// EstimateFee answers estimatefee/{blocks} in coins per kB, as Blockbook does.
func (f utxoFees) EstimateFee(ctx context.Context, blocks int, conservative bool) (*Result, error) {
	sat, err := f.feeRate(ctx, blocks, conservative)
	if err != nil {
		return nil, err
	}
	return &Result{Result: decimalString(sat, f.s.backend.Params.Decimals)}, nil
}

// FeeEstimates answers estimateFee: the rate per 1000 vbytes for each
// target and, given a tx size, the fee of the tx (rounded to the nearest
// unit, as Blockbook).
func (f utxoFees) FeeEstimates(ctx context.Context, blocks []int, q FeeQuery) ([]FeeEstimate, error) {
	out := make([]FeeEstimate, len(blocks))
	for i, b := range blocks {
		rate, err := f.feeRate(ctx, b, q.Conservative)
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
