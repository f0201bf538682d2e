package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// Calls answered mostly by the node: sending, fee estimation, the node's
// own view of a tx.

// MaxTxHexLen caps a raw tx parameter: a consensus-valid tx is at most 4 MB.
const MaxTxHexLen = 8 << 20

// SendTx relays a signed tx; the node's reject reason becomes a user error.
func (s *UtxoService) SendTx(ctx context.Context, txHex string) (*Result, error) {
	txHex = strings.TrimSpace(txHex)
	if txHex == "" {
		return nil, userErr("Missing tx blob")
	}
	if len(txHex) > MaxTxHexLen {
		return nil, userErr("Transaction is larger than %d hex characters", MaxTxHexLen)
	}
	raw, err := hex.DecodeString(txHex)
	if err != nil {
		return nil, userErr("Invalid transaction hex: %v", err)
	}
	if _, err := s.parser.ParseTx(raw); err != nil {
		return nil, userErr("Invalid transaction: %v", err)
	}
	txid, err := s.backend.Broadcast.SendRawTx(ctx, raw)
	var rpcErr *bchain.RPCError
	if errors.As(err, &rpcErr) {
		return nil, &Error{Msg: rpcErr.Message, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return &Result{Result: txid.String()}, nil
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
// confirmation within the given number of blocks (the websocket's
// feePerUnit).
func (f utxoFees) feeRate(ctx context.Context, blocks int, conservative bool) (int64, error) {
	if err := f.s.CheckFeeTargets([]int{blocks}); err != nil {
		return 0, err
	}
	rate, err := f.s.estimateFee(ctx, f.est, blocks, conservative)
	if errors.Is(err, bchain.ErrUnsupported) {
		return 0, &Error{Msg: "The node cannot estimate fees", Err: err}
	}
	return rate, err
}

// estimateFee asks the alternative fee provider (Config.AltFees) and, when
// it has no answer, the node, as Blockbook's EstimateSmartFee does.
func (s *UtxoService) estimateFee(ctx context.Context, node bchain.FeeEstimator, blocks int, conservative bool) (int64, error) {
	if alt := s.cfg.AltFees; alt != nil {
		if rate, err := alt.EstimateFee(ctx, blocks, conservative); err == nil {
			return rate, nil
		}
	}
	return node.EstimateFee(ctx, blocks, conservative)
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

// longTermFeeBlocks is the target of longTermFeeRate: about a week of
// blocks, the longest target Bitcoin Core estimates (Blockbook's).
const longTermFeeBlocks = 1008

// LongTermFeeRate answers longTermFeeRate: the economical estimate for
// longTermFeeBlocks, falling back (btcd, a quiet chain) to the node's
// minimum relay fee as every estimate does.
func (f utxoFees) LongTermFeeRate(ctx context.Context) (*LongTermFeeRate, error) {
	// The node's estimate, never the alternative provider's (Blockbook's).
	rate, err := f.est.EstimateFee(ctx, longTermFeeBlocks, false)
	if errors.Is(err, bchain.ErrUnsupported) {
		err = &Error{Msg: "The node cannot estimate fees", Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("long-term fee rate: %w", err)
	}
	return &LongTermFeeRate{FeePerUnit: strconv.FormatInt(rate, 10), Blocks: longTermFeeBlocks}, nil
}

// decimalString renders base units as a coin amount without trailing zeros.
func decimalString(v int64, decimals int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	if decimals > 0 {
		if len(s) <= decimals {
			s = strings.Repeat("0", decimals-len(s)+1) + s
		}
		s = s[:len(s)-decimals] + "." + s[len(s)-decimals:]
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// TxSpecific answers tx-specific/{txid} with the node's own JSON.
func (s *UtxoService) TxSpecific(ctx context.Context, txidParam string) (json.RawMessage, error) {
	txid, err := parseTxid(txidParam)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	_, meta, err := s.confirmedTx(v, txid)
	if err != nil {
		return nil, err
	}
	var inBlock bchain.Hash
	if meta != nil {
		inBlock = meta.Hash
	}
	res, err := s.backend.Txs.TxSpecific(ctx, txid, inBlock)
	if errors.Is(err, bchain.ErrTxNotFound) {
		if meta != nil {
			return nil, &Error{Msg: fmt.Sprintf("The node cannot describe confirmed transaction '%s': it needs a transaction index (-txindex)", txid), Err: err}
		}
		return nil, &Error{Msg: fmt.Sprintf("Transaction '%s' not found", txid), Err: err}
	}
	return res, err
}

// RawTx answers rawtx/{txid} with the serialized tx in hex.
func (s *UtxoService) RawTx(ctx context.Context, txidParam string) (string, error) {
	txid, err := parseTxid(txidParam)
	if err != nil {
		return "", err
	}
	v, err := s.newView()
	if err != nil {
		return "", err
	}
	defer v.release()
	_, meta, err := s.confirmedTx(v, txid)
	if err != nil {
		return "", err
	}
	raw, err := s.rawTx(ctx, v, txid, meta)
	if errors.Is(err, bchain.ErrTxNotFound) {
		return "", &Error{Msg: fmt.Sprintf("Transaction '%s' not found", txid), Err: err}
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(raw), nil
}
