package mesh

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// /call: network-specific reads the standard endpoints do not cover, each
// one of our existing queries. /network/options lists the methods
// (call_methods); any other is errBadCallMethod.

// The call methods, sorted.
const (
	// callEstimateFee is the node's fee rate for a confirmation target:
	// parameters {"confirmation_target": n} (default 2), result
	// {"confirmation_target": n, "fee_per_kvbyte": "<satoshis>"}, as
	// /construction/metadata prices a tx.
	callEstimateFee = "estimate_fee"
	// callRawTransaction is a tx's serialization (REST's rawtx): parameters
	// {"transaction_identifier": {"hash": txid}}, result {"hex": "..."}.
	callRawTransaction = "raw_transaction"
)

var callMethods = []string{callEstimateFee, callRawTransaction}

type callRequest struct {
	netRequest
	Method     string          `json:"method"`
	Parameters json.RawMessage `json:"parameters"`
}

type callResponse struct {
	Result     map[string]any `json:"result"`
	Idempotent bool           `json:"idempotent"`
}

func (s *Server) call(ctx context.Context, body []byte) (any, error) {
	var req callRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	params := req.Parameters
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	switch req.Method {
	case callEstimateFee:
		return s.callEstimateFee(ctx, params)
	case callRawTransaction:
		return s.callRawTransaction(ctx, params)
	}
	return nil, fail(errBadCallMethod, "method %q; this server serves %v", truncate(req.Method, 40), callMethods)
}

func (s *Server) callEstimateFee(ctx context.Context, params []byte) (any, error) {
	var p struct {
		ConfirmationTarget *int `json:"confirmation_target"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	target := defaultConfTarget
	if p.ConfirmationTarget != nil {
		target = *p.ConfirmationTarget
	}
	fees := s.svc.Capabilities().FeeEstimates
	if fees == nil {
		return nil, fail(errNotImplemented, "this server estimates no fees")
	}
	if err := s.svc.CheckFeeTargets([]int{target}); err != nil {
		return nil, failWith(errBadRequest, err, "confirmation_target %d", target)
	}
	est, err := fees.FeeEstimates(ctx, []int{target}, api.FeeQuery{})
	if err != nil {
		return nil, err
	}
	// The node's estimate moves with every block and mempool change.
	return &callResponse{Result: map[string]any{"confirmation_target": target, "fee_per_kvbyte": est[0].FeePerUnit}}, nil
}

func (s *Server) callRawTransaction(ctx context.Context, params []byte) (any, error) {
	var p struct {
		TransactionIdentifier *TransactionIdentifier `json:"transaction_identifier"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	txid, err := parseTxid(p.TransactionIdentifier)
	if err != nil {
		return nil, err
	}
	raw := s.svc.Capabilities().RawTxs
	if raw == nil {
		return nil, fail(errNotImplemented, "this server serves no raw txs")
	}
	h, err := raw.RawTx(ctx, txid.String())
	if errors.Is(err, bchain.ErrTxNotFound) {
		return nil, failWith(errTxNotFound, err, "%s is neither indexed nor pending", txid)
	}
	if err != nil {
		return nil, err
	}
	// A tx's bytes never change once it exists (a txid commits to them
	// all but the witness, which the serialization the node holds fixes).
	return &callResponse{Result: map[string]any{"hex": h}, Idempotent: true}, nil
}
