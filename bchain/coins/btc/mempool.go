package btc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

var _ bchain.MempoolSource = (*Node)(nil)

// MempoolTxids lists the node's mempool with getrawmempool (non-verbose,
// the same call and answer on Core and btcd: an array of txids).
func (n *Node) MempoolTxids(ctx context.Context) ([]bchain.Hash, error) {
	var ids []string
	if err := n.rpc.call(ctx, "getrawmempool", nil, &ids); err != nil {
		return nil, err
	}
	out := make([]bchain.Hash, len(ids))
	for i, s := range ids {
		h, err := bchain.ParseHash(s)
		if err != nil {
			return nil, fmt.Errorf("%w: getrawmempool: %v", bchain.ErrNodeUnavailable, err)
		}
		out[i] = h
	}
	return out, nil
}

// rawTxBatch is how many getrawtransaction calls RawTxs puts in one batch
// request: big enough to amortize the HTTP exchange (btcd closes the
// connection after every request), small enough to keep answers short.
const rawTxBatch = 100

// RawTxs fetches mempool txs with JSON-RPC batch requests (Core and btcd
// both serve them). The result has one entry per txid; an entry is nil when
// the node does not know the tx (any error object for that entry: the tx
// left the mempool, or was never there).
func (n *Node) RawTxs(ctx context.Context, txids []bchain.Hash) ([][]byte, error) {
	out := make([][]byte, len(txids))
	for start := 0; start < len(txids); start += rawTxBatch {
		chunk := txids[start:min(start+rawTxBatch, len(txids))]
		params := make([][]any, len(chunk))
		for i, h := range chunk {
			params[i] = []any{h.String(), 0}
		}
		res, err := n.rpc.callBatch(ctx, "getrawtransaction", params)
		if err != nil {
			return nil, err
		}
		for i, r := range res {
			if r.err != nil {
				continue
			}
			var s hexBytes
			if err := json.Unmarshal(r.result, &s); err != nil {
				return nil, fmt.Errorf("%w: getrawtransaction %s: %v", bchain.ErrNodeUnavailable, chunk[i], err)
			}
			out[start+i] = s
		}
	}
	return out, nil
}

// batchResult is one answer of a batch request.
type batchResult struct {
	result json.RawMessage
	err    *bchain.RPCError
}

// callBatch sends one request per params entry, all for method, as a single
// JSON-RPC batch, and returns the answers in request order. Transport
// failures are retried like call's; an answer that is not a batch answer
// (a node without batch support) is ErrNodeUnavailable.
func (c *rpcClient) callBatch(ctx context.Context, method string, params [][]any) ([]batchResult, error) {
	reqs := make([]rpcRequest, len(params))
	first := c.id.Add(uint64(len(params))) - uint64(len(params)) + 1
	for i, p := range params {
		if p == nil {
			p = []any{}
		}
		reqs[i] = rpcRequest{JSONRPC: "1.0", ID: first + uint64(i), Method: method, Params: p}
	}
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, fmt.Errorf("rpc batch %s: encode request: %w", method, err)
	}
	delay := c.backoff
	for attempt := 0; ; attempt++ {
		start := time.Now()
		res, err := c.batchRoundTrip(ctx, body, first, len(params))
		if errors.Is(err, errCredentials) {
			c.errors.WithLabelValues(method, "auth").Inc()
			return nil, fmt.Errorf("rpc batch %s: %w", method, err)
		}
		c.latency.WithLabelValues(method + "#batch").Observe(time.Since(start).Seconds())
		if err == nil {
			return res, nil
		}
		c.errors.WithLabelValues(method, "transport").Inc()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("rpc batch %s: %w: %w", method, err, ctx.Err())
		}
		if attempt >= c.retries {
			return nil, fmt.Errorf("rpc batch %s: %w", method, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("rpc batch %s: %w: %w", method, err, ctx.Err())
		case <-time.After(delay):
		}
		delay *= 2
	}
}

func (c *rpcClient) batchRoundTrip(ctx context.Context, body []byte, firstID uint64, n int) ([]batchResult, error) {
	data, status, err := c.post(ctx, body)
	if err != nil {
		return nil, err
	}
	var answers []struct {
		ID     *uint64         `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &answers); err != nil {
		snippet := data[:min(len(data), 120)]
		return nil, fmt.Errorf("%w: HTTP %d with a body that is not a JSON-RPC batch answer: %q", bchain.ErrNodeUnavailable, status, snippet)
	}
	out := make([]batchResult, n)
	seen := make([]bool, n)
	for _, a := range answers {
		if a.ID == nil || *a.ID < firstID || *a.ID-firstID >= uint64(n) || seen[*a.ID-firstID] {
			return nil, fmt.Errorf("%w: batch answer with an unexpected id", bchain.ErrNodeUnavailable)
		}
		i := *a.ID - firstID
		seen[i] = true
		if a.Error != nil {
			out[i].err = &bchain.RPCError{Code: a.Error.Code, Message: a.Error.Message}
		} else {
			out[i].result = a.Result
		}
	}
	for i := range seen {
		if !seen[i] {
			return nil, fmt.Errorf("%w: batch answer lacks %d of %d answers", bchain.ErrNodeUnavailable, n-len(answers), n)
		}
	}
	return out, nil
}
