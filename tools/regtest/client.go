package regtest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/wire/v2"
)

// Client is a minimal JSON-RPC 1.0 client for btcd (and bitcoind-compatible)
// nodes. It is deliberately self-contained so test infrastructure does not
// depend on the indexer's own RPC code that it is meant to check.
type Client struct {
	url, user, pass string
	http            *http.Client
	id              atomic.Uint64
}

// RPCError is an error object returned by the node.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// NewClient returns a client for the node at url (http://host:port).
func NewClient(url, user, pass string) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // always talk to the node directly
	tr.MaxIdleConnsPerHost = 4
	return &Client{url: url, user: user, pass: pass, http: &http.Client{Transport: tr}}
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// Call invokes method with params and returns the raw JSON result ("null"
// when the node returned no result).
func (c *Client) Call(ctx context.Context, method string, params ...any) (json.RawMessage, error) {
	if params == nil {
		params = []any{} // btcd rejects a null params member
	}
	body, err := json.Marshal(rpcRequest{JSONRPC: "1.0", ID: c.id.Add(1), Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	req.SetBasicAuth(c.user, c.pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: read response: %w", method, err)
	}
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		// Transport-level failures (401, 503, ...) come back as plain text.
		return nil, fmt.Errorf("%s: http %d: %s", method, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, r.Error)
	}
	if len(r.Result) == 0 {
		r.Result = json.RawMessage("null")
	}
	return r.Result, nil
}

// CallResult invokes method and decodes its result into out.
func (c *Client) CallResult(ctx context.Context, out any, method string, params ...any) error {
	raw, err := c.Call(ctx, method, params...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// SubmitBlock submits b and returns an error unless the node stored it.
// btcd answers submitblock with a "rejected: ..." string instead of an RPC
// error, and silently parks blocks with an unknown parent in its orphan pool
// (result null); both cases are reported as errors here.
func (c *Client) SubmitBlock(ctx context.Context, b *wire.MsgBlock) error {
	var buf bytes.Buffer
	buf.Grow(b.SerializeSize())
	if err := b.Serialize(&buf); err != nil {
		return fmt.Errorf("submitblock: %w", err)
	}
	var res *string
	if err := c.CallResult(ctx, &res, "submitblock", hex.EncodeToString(buf.Bytes())); err != nil {
		return err
	}
	hash := b.BlockHash().String()
	if res != nil {
		return fmt.Errorf("submitblock %s: %s", hash, *res)
	}
	if _, err := c.Call(ctx, "getblockheader", hash, false); err != nil {
		return fmt.Errorf("submitblock %s: not stored (orphan? parent %s unknown to node): %w",
			hash, b.Header.PrevBlock, err)
	}
	return nil
}

// SendRawTransaction submits tx to the node's mempool and returns its txid.
func (c *Client) SendRawTransaction(ctx context.Context, tx *wire.MsgTx) (string, error) {
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return "", fmt.Errorf("sendrawtransaction: %w", err)
	}
	var txid string
	err := c.CallResult(ctx, &txid, "sendrawtransaction", hex.EncodeToString(buf.Bytes()))
	return txid, err
}

// BestBlock returns the height and hash of the node's chain tip, read
// atomically with btcd's getbestblock.
func (c *Client) BestBlock(ctx context.Context) (int32, string, error) {
	var r struct {
		Hash   string `json:"hash"`
		Height int32  `json:"height"`
	}
	if err := c.CallResult(ctx, &r, "getbestblock"); err != nil {
		return 0, "", err
	}
	return r.Height, r.Hash, nil
}

// BlockHash returns the hash of the main-chain block at height.
func (c *Client) BlockHash(ctx context.Context, height int32) (string, error) {
	var h string
	err := c.CallResult(ctx, &h, "getblockhash", height)
	return h, err
}

// InvalidateBlock marks the block and its descendants invalid, making the
// node reorganise to the best remaining chain.
func (c *Client) InvalidateBlock(ctx context.Context, hash string) error {
	_, err := c.Call(ctx, "invalidateblock", hash)
	return err
}

// ReconsiderBlock undoes InvalidateBlock.
func (c *Client) ReconsiderBlock(ctx context.Context, hash string) error {
	_, err := c.Call(ctx, "reconsiderblock", hash)
	return err
}

// WaitForHeight polls until the node's best height is at least h.
func (c *Client) WaitForHeight(ctx context.Context, h int32) error {
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for {
		height, _, err := c.BestBlock(ctx)
		if err == nil && height >= h {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("at height %d", height)
			}
			return fmt.Errorf("waiting for height %d: %w (%w)", h, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// CloseIdleConnections closes the client's kept-alive connections (a node
// shutting down may wait for its idle RPC connections to close).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }
