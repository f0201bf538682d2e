package api

import (
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// RPCCallResult answers the websocket's rpcCall.
type RPCCallResult struct {
	Data string `json:"data"`
}

// maxCallData bounds the calldata of rpcCall and gas estimates (a
// contract call, not a deployment).
const maxCallData = 128 << 10

// ethCallOf validates the parts of a call to simulate.
func (s *EthService) ethCallOf(from, to, value, data string) (bchain.EthCall, error) {
	var c bchain.EthCall
	var err error
	if from = strings.TrimSpace(from); from != "" {
		if c.From, err = s.addrDesc(from); err != nil {
			return c, err
		}
	}
	if to = strings.TrimSpace(to); to != "" {
		if c.To, err = s.addrDesc(to); err != nil {
			return c, err
		}
	}
	if value = strings.TrimSpace(value); value != "" {
		v, ok := new(big.Int).SetString(value, 0)
		if !ok || v.Sign() < 0 {
			return c, userErr("Invalid value %q", truncate(value, 80))
		}
		c.Value = v
	}
	data = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(data), "0x"), "0X")
	if len(data) > 2*maxCallData {
		return c, userErr("Call data longer than %d bytes", maxCallData)
	}
	if c.Data, err = hex.DecodeString(data); err != nil {
		return c, userErr("Invalid call data, not hexadecimal")
	}
	return c, nil
}

// RPCCall runs a read-only contract call at the latest block (the
// websocket's rpcCall); a revert is a user error with the node's message.
func (s *EthService) RPCCall(ctx context.Context, from, to, data string) (*RPCCallResult, error) {
	if strings.TrimSpace(to) == "" {
		return nil, userErr("Missing 'to' address")
	}
	c, err := s.ethCallOf(from, to, "", data)
	if err != nil {
		return nil, err
	}
	out, err := s.eth.Call(ctx, c)
	var re *bchain.RPCError
	if errors.As(err, &re) {
		return nil, &Error{Msg: re.Message, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return &RPCCallResult{Data: "0x" + hex.EncodeToString(out)}, nil
}

// gasLimit estimates the gas of the tx a fee query describes: 21,000 for
// a plain transfer, the node's eth_estimateGas otherwise. A tx the node
// says would revert (e.g. an amount above the balance while the user is
// still typing it) gives 0: the answer then carries no limit and the
// wallet uses its own, rather than losing the fee levels.
func (s *EthService) gasLimit(ctx context.Context, q FeeQuery) (uint64, error) {
	c, err := s.ethCallOf(q.From, q.To, q.Value, q.Data)
	if err != nil {
		return 0, err
	}
	if len(c.Data) == 0 && (len(c.To) == 0 || len(c.From) == 0) {
		return plainTransferGas, nil
	}
	gas, err := s.eth.EstimateGas(ctx, c)
	var re *bchain.RPCError
	if errors.As(err, &re) {
		s.log.Debug("estimateFee: the node cannot estimate the tx's gas", "err", err)
		return 0, nil
	}
	return gas, err
}
