package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

// callFrame is one frame of geth's callTracer output.
type callFrame struct {
	Type    string          `json:"type"`
	From    common.Address  `json:"from"`
	To      *common.Address `json:"to"`
	Value   *hexutil.Big    `json:"value"`
	Error   string          `json:"error"`
	Calls   []callFrame     `json:"calls"`
	GasUsed hexutil.Uint64  `json:"gasUsed"`
}

// traceResult is one element of debug_traceBlockByHash's answer. Older
// nodes leave out txHash; a tx the tracer failed on has error, not result.
type traceResult struct {
	TxHash *common.Hash `json:"txHash"`
	Result *callFrame   `json:"result"`
	Error  string       `json:"error"`
}

// tracing tells whether blocks are traced for internal transactions.
func (n *Node) tracing() bool { return n.traceInternal && n.tracingOff.Load() == nil }

// CheckTracing asks the node, once at start, whether it can trace blocks
// when internal transactions are to be processed. A node without the debug
// API gets tracing switched off, with a warning logged and shown in the
// status (backend.warnings), rather than every block recorded as failed.
// Other errors (the node down) leave tracing on.
func (n *Node) CheckTracing(ctx context.Context) error {
	if !n.traceInternal {
		return nil
	}
	h, err := n.header(ctx, "eth_getBlockByNumber", "latest")
	if err != nil {
		return err
	}
	var res []traceResult
	err = n.rpc.call(ctx, &res, "debug_traceBlockByHash", h.Hash, n.traceConfig())
	if err != nil && isMethodNotFound(err) {
		why := "internal transactions are not processed: the node does not serve debug_traceBlockByHash (" + err.Error() + ")"
		n.tracingOff.Store(&why)
		n.log.Warn("processInternalTransactions is on but the node has no debug API: internal transactions switched off", "err", err)
		return nil
	}
	return err
}

// traceRetries is how often a block trace is attempted before the failure
// is handed to the indexer in EthBlock.TraceError.
const traceRetries = 3

var traceRetryDelay = time.Second

// traceBlock runs the callTracer over a block, retrying, and returns one
// entry per tx (nil where the tracer failed on that tx). txHashes are the
// block's txs in order, to line the answer up with. The error lists every
// failure; entries that did decode are still returned with it.
func (n *Node) traceBlock(ctx context.Context, hash bchain.Hash, txHashes []bchain.Hash) ([]*bchain.EthInternalData, error) {
	var lastErr error
	for attempt := 0; attempt < traceRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(traceRetryDelay << (attempt - 1)):
			}
		}
		var res []traceResult
		err := n.rpc.call(ctx, &res, "debug_traceBlockByHash", common.Hash(hash), n.traceConfig())
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil, err
			}
			lastErr = err
			continue
		}
		data, err := internalFromTraces(res, txHashes)
		if err == nil {
			return data, nil
		}
		lastErr = err
		if attempt == traceRetries-1 {
			return data, err
		}
	}
	return make([]*bchain.EthInternalData, len(txHashes)), fmt.Errorf("debug_traceBlockByHash %s: %w", hash, lastErr)
}

// internalFromTraces lines trace results up with the block's txs.
func internalFromTraces(res []traceResult, txHashes []bchain.Hash) ([]*bchain.EthInternalData, error) {
	out := make([]*bchain.EthInternalData, len(txHashes))
	if len(res) != len(txHashes) {
		return out, fmt.Errorf("%w: trace has %d results for %d txs", bchain.ErrInvalidData, len(res), len(txHashes))
	}
	var failed []string
	for i, r := range res {
		if r.TxHash != nil && bchain.Hash(*r.TxHash) != txHashes[i] {
			return out, fmt.Errorf("%w: trace result %d is for tx %s, want %s", bchain.ErrInvalidData, i, r.TxHash.Hex(), txHashes[i])
		}
		if r.Result == nil {
			msg := r.Error
			if msg == "" {
				msg = "no result"
			}
			failed = append(failed, fmt.Sprintf("tx %s: %s", txHashes[i], msg))
			continue
		}
		out[i] = internalFromFrame(r.Result)
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("tracing failed for %s", strings.Join(failed, "; "))
	}
	return out, nil
}

// internalFromFrame extracts internal transfers and created contracts from
// a tx's top-level call frame. The top frame's own value is the tx's value and
// is not repeated; frames with an error (reverted, out of gas) are skipped
// with all their children, since their effects were undone.
func internalFromFrame(top *callFrame) *bchain.EthInternalData {
	d := &bchain.EthInternalData{Type: bchain.EthInternalCall}
	if isCreate(top.Type) {
		d.Type = bchain.EthInternalCreate
	}
	if top.Error != "" {
		d.Error = top.Error
		return d
	}
	if d.Type == bchain.EthInternalCreate && top.To != nil {
		d.Contracts = append(d.Contracts, bchain.EthAddress(*top.To))
	}
	for i := range top.Calls {
		walkFrame(&top.Calls[i], d)
	}
	return d
}

func walkFrame(f *callFrame, d *bchain.EthInternalData) {
	if f.Error != "" {
		return
	}
	v := frameValue(f)
	switch t := strings.ToUpper(f.Type); {
	case isCreate(t):
		if f.To != nil {
			to := bchain.EthAddress(*f.To)
			d.Contracts = append(d.Contracts, to)
			d.Transfers = append(d.Transfers, bchain.EthInternalTransfer{Type: bchain.EthInternalCreate, From: bchain.EthAddress(f.From), To: to, Value: v})
		}
	case t == "SELFDESTRUCT":
		if f.To != nil && v.Sign() > 0 {
			d.Transfers = append(d.Transfers, bchain.EthInternalTransfer{Type: bchain.EthInternalSelfDestruct, From: bchain.EthAddress(f.From), To: bchain.EthAddress(*f.To), Value: v})
		}
	case t == "CALL":
		// CALLCODE keeps the value in the caller and DELEGATECALL and
		// STATICCALL move none, so only CALL transfers value.
		if f.To != nil && v.Sign() > 0 {
			d.Transfers = append(d.Transfers, bchain.EthInternalTransfer{Type: bchain.EthInternalCall, From: bchain.EthAddress(f.From), To: bchain.EthAddress(*f.To), Value: v})
		}
	}
	for i := range f.Calls {
		walkFrame(&f.Calls[i], d)
	}
}

func isCreate(t string) bool {
	t = strings.ToUpper(t)
	return t == "CREATE" || t == "CREATE2"
}

func frameValue(f *callFrame) *big.Int {
	if f.Value == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(f.Value.ToInt())
}

// InternalData traces a block again, for blocks whose EthBlock.TraceError
// was set: one entry per tx in block order.
func (n *Node) InternalData(ctx context.Context, block bchain.Hash) ([]*bchain.EthInternalData, error) {
	var raw json.RawMessage
	if err := n.rpc.call(ctx, &raw, "eth_getBlockByHash", common.Hash(block), false); err != nil {
		return nil, err
	}
	if isNull(raw) {
		return nil, fmt.Errorf("%w: %s", bchain.ErrBlockNotFound, block)
	}
	var b struct {
		Transactions []common.Hash `json:"transactions"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, garbage("eth_getBlockByHash", err)
	}
	hashes := make([]bchain.Hash, len(b.Transactions))
	for i, h := range b.Transactions {
		hashes[i] = bchain.Hash(h)
	}
	return n.traceBlock(ctx, block, hashes)
}
