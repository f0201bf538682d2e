package btc

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// dialect is the node implementation, detected on first use. Only the
// portable subset (raw blocks, integer verbosity) is used where possible;
// the dialect picks fallbacks for calls btcd lacks.
type dialect int32

const (
	dialectUnknown dialect = iota
	dialectCore            // Bitcoin Core (bitcoind >= 0.21)
	dialectBtcd            // btcd
)

func (d dialect) String() string {
	switch d {
	case dialectCore:
		return "bitcoind"
	case dialectBtcd:
		return "btcd"
	}
	return "unknown"
}

// Node is a Bitcoin-type node reached over JSON-RPC.
type Node struct {
	rpc     *rpcClient
	p2p     *p2pBlocks // optional fast path for blocks (p2p_address)
	auto    *autoP2P   // a local node's P2P port, tried without p2p_address
	parser  bchain.UtxoParser
	log     *slog.Logger
	dialect atomic.Int32
}

var (
	_ bchain.BlockChain     = (*Node)(nil)
	_ bchain.RawBlockSource = (*Node)(nil)
	_ bchain.TxSource       = (*Node)(nil)
	_ bchain.TxBroadcaster  = (*Node)(nil)
	_ bchain.FeeEstimator   = (*Node)(nil)
)

// ProbeChain is the node for the liveness probe: the same node over its
// own HTTP connections, so that no load of user requests on the shared
// client can make the probe misjudge a healthy node.
func (n *Node) ProbeChain() bchain.BlockChain {
	p := &Node{rpc: n.rpc.probeClient(), parser: n.parser, log: n.log}
	p.dialect.Store(n.dialect.Load())
	return p
}

// AnswerOwed is how long the node has owed the probe's connections an
// answer to what they sent after the time given (bchain.Liveness asks it of
// ProbeChain's node); false on a node that is not the probe's, or whose
// connections do not go through its dialer.
func (n *Node) AnswerOwed(since, now time.Time) (time.Duration, bool) {
	if n.rpc.arrivals == nil {
		return 0, false
	}
	return n.rpc.arrivals.Owed(since, now)
}

// Dialect detects (once) whether the node is Bitcoin Core or btcd:
// getnetworkinfo exists only in Core (btcd answers "Command unimplemented").
func (n *Node) Dialect(ctx context.Context) (dialect, error) {
	if d := dialect(n.dialect.Load()); d != dialectUnknown {
		return d, nil
	}
	err := n.rpc.call(ctx, "getnetworkinfo", nil, nil)
	d := dialectCore
	var rpcErr *bchain.RPCError
	switch {
	case errors.As(err, &rpcErr):
		d = dialectBtcd
	case err != nil:
		return dialectUnknown, err
	}
	if n.dialect.CompareAndSwap(int32(dialectUnknown), int32(d)) {
		n.log.Info("detected node implementation", "dialect", d.String())
	}
	return d, nil
}

// Call sends one JSON-RPC request, with the client's retries and metrics,
// and decodes its result into out (nil to ignore it). Coin packages use it
// for the calls their node answers differently from Bitcoin Core.
func (n *Node) Call(ctx context.Context, method string, params []any, out any) error {
	return n.rpc.call(ctx, method, params, out)
}

// Log is the node's logger.
func (n *Node) Log() *slog.Logger { return n.log }

// BestBlock returns the node's tip. The height comes from the header of the
// returned hash, so the two always belong together.
func (n *Node) BestBlock(ctx context.Context) (uint32, bchain.Hash, error) {
	var s string
	if err := n.rpc.call(ctx, "getbestblockhash", nil, &s); err != nil {
		return 0, bchain.Hash{}, err
	}
	hash, err := bchain.ParseHash(s)
	if err != nil {
		return 0, bchain.Hash{}, fmt.Errorf("%w: getbestblockhash: %v", bchain.ErrNodeUnavailable, err)
	}
	h, err := n.BlockHeight(ctx, hash)
	return h, hash, err
}

// BlockHash returns the active-chain hash at height.
func (n *Node) BlockHash(ctx context.Context, height uint32) (bchain.Hash, error) {
	var s string
	err := n.rpc.call(ctx, "getblockhash", []any{height}, &s)
	if isRPCCode(err, codeInvalidParam, codeMisc, codeNotFound) {
		return bchain.Hash{}, fmt.Errorf("%w: height %d: %v", bchain.ErrBlockNotFound, height, err)
	}
	if err != nil {
		return bchain.Hash{}, err
	}
	hash, err := bchain.ParseHash(s)
	if err != nil {
		return bchain.Hash{}, fmt.Errorf("%w: getblockhash: %v", bchain.ErrNodeUnavailable, err)
	}
	return hash, nil
}

// BlockHeight returns the height of any block the node knows.
func (n *Node) BlockHeight(ctx context.Context, hash bchain.Hash) (uint32, error) {
	var hdr struct {
		Height *int64 `json:"height"`
	}
	err := n.rpc.call(ctx, "getblockheader", []any{hash.String(), true}, &hdr)
	// Any refusal means no usable header: Core answers -5 for unknown
	// blocks, btcd -32603 for blocks off its main chain.
	var rpcErr *bchain.RPCError
	if errors.As(err, &rpcErr) {
		return 0, fmt.Errorf("%w: %s: %s", bchain.ErrBlockNotFound, hash, rpcErr.Message)
	}
	if err != nil {
		return 0, err
	}
	if hdr.Height == nil || *hdr.Height < 0 || *hdr.Height > math.MaxUint32 {
		return 0, fmt.Errorf("%w: getblockheader without a valid height", bchain.ErrNodeUnavailable)
	}
	return uint32(*hdr.Height), nil
}

// RawBlock returns the serialized block (getblock <hash> 0 works on both
// implementations).
func (n *Node) RawBlock(ctx context.Context, hash bchain.Hash) ([]byte, error) {
	var raw hexBytes
	err := n.rpc.call(ctx, "getblock", []any{hash.String(), 0}, &raw)
	if isRPCCode(err, codeNotFound) {
		return nil, fmt.Errorf("%w: %s", bchain.ErrBlockNotFound, hash)
	}
	return raw, err
}

// blockBytes returns a serialized block, over P2P when configured (falling
// back to RPC if the peer fails), else over RPC.
func (n *Node) blockBytes(ctx context.Context, hash bchain.Hash) ([]byte, error) {
	p := n.p2p
	if p == nil && n.auto != nil {
		p = n.auto.blocks(ctx, n)
	}
	if p != nil {
		raw, err := p.rawBlock(ctx, hash)
		if err == nil {
			return raw, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		p.failed.Do(func() {
			n.log.Warn("downloading blocks over P2P failed, falling back to RPC (logged once)", "p2p_address", p.addr, "err", err)
		})
		n.log.Debug("P2P block download failed", "hash", hash, "err", err)
	}
	return n.RawBlock(ctx, hash)
}

// Block fetches and decodes a block, checking that it is the one asked for.
func (n *Node) Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	raw, err := n.blockBytes(ctx, hash)
	if err != nil {
		return nil, err
	}
	blk, err := n.parser.ParseBlock(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: block %s: %v", bchain.ErrNodeUnavailable, hash, err)
	}
	if blk.Hash != hash {
		return nil, fmt.Errorf("%w: asked for block %s, got %s", bchain.ErrNodeUnavailable, hash, blk.Hash)
	}
	blk.Height = height
	return blk, nil
}

// RawTx finds a tx: getrawtransaction works for mempool txs and, with a tx
// index, for confirmed ones; otherwise Core accepts the block hash, and as a
// last resort the tx is read from its raw block.
func (n *Node) RawTx(ctx context.Context, txid bchain.Hash, inBlock bchain.Hash) ([]byte, error) {
	var s string
	err := n.rpc.call(ctx, "getrawtransaction", []any{txid.String(), 0}, &s)
	if isRPCCode(err, codeNotFound) && !inBlock.IsZero() {
		if d, _ := n.Dialect(ctx); d == dialectCore {
			err = n.rpc.call(ctx, "getrawtransaction", []any{txid.String(), 0, inBlock.String()}, &s)
		}
		if err != nil {
			return n.txFromBlock(ctx, txid, inBlock)
		}
	}
	if isRPCCode(err, codeNotFound) {
		return nil, fmt.Errorf("%w: %s", bchain.ErrTxNotFound, txid)
	}
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: getrawtransaction returned invalid hex: %v", bchain.ErrNodeUnavailable, err)
	}
	return raw, nil
}

func (n *Node) txFromBlock(ctx context.Context, txid, blockHash bchain.Hash) ([]byte, error) {
	blk, err := n.Block(ctx, blockHash, 0)
	if err != nil {
		return nil, err
	}
	for i := range blk.Txs {
		if blk.Txs[i].Txid == txid {
			return blk.Txs[i].Raw, nil
		}
	}
	return nil, fmt.Errorf("%w: %s is not in block %s", bchain.ErrTxNotFound, txid, blockHash)
}

// TxSpecific returns the node's verbose JSON of a tx.
func (n *Node) TxSpecific(ctx context.Context, txid bchain.Hash, inBlock bchain.Hash) (json.RawMessage, error) {
	var res json.RawMessage
	err := n.rpc.call(ctx, "getrawtransaction", []any{txid.String(), 1}, &res)
	if isRPCCode(err, codeNotFound) && !inBlock.IsZero() {
		if d, _ := n.Dialect(ctx); d == dialectCore {
			err = n.rpc.call(ctx, "getrawtransaction", []any{txid.String(), 1, inBlock.String()}, &res)
		}
	}
	if isRPCCode(err, codeNotFound) {
		return nil, fmt.Errorf("%w: %s (the node needs -txindex to describe confirmed txs)", bchain.ErrTxNotFound, txid)
	}
	return res, err
}

// SendRawTx broadcasts a tx; the node's reject reason comes back as *bchain.RPCError.
func (n *Node) SendRawTx(ctx context.Context, raw []byte) (bchain.Hash, error) {
	var s string
	if err := n.rpc.call(ctx, "sendrawtransaction", []any{hex.EncodeToString(raw)}, &s); err != nil {
		return bchain.Hash{}, err
	}
	h, err := bchain.ParseHash(s)
	if err != nil {
		return bchain.Hash{}, fmt.Errorf("%w: sendrawtransaction: %v", bchain.ErrNodeUnavailable, err)
	}
	return h, nil
}

// EstimateFee returns satoshi per 1000 vbytes. Core's estimatesmartfee is
// used when present, btcd's estimatefee otherwise; when the node has no
// estimate yet (a fresh or quiet chain) the answer is the node's minimum
// relay fee, the lowest rate it will accept.
func (n *Node) EstimateFee(ctx context.Context, blocks int, conservative bool) (int64, error) {
	d, err := n.Dialect(ctx)
	if err != nil {
		return 0, err
	}
	var rate json.Number
	if d == dialectCore {
		mode := "ECONOMICAL"
		if conservative {
			mode = "CONSERVATIVE"
		}
		var res struct {
			FeeRate json.Number `json:"feerate"`
		}
		err = n.rpc.call(ctx, "estimatesmartfee", []any{blocks, mode}, &res)
		rate = res.FeeRate
	} else {
		err = n.rpc.call(ctx, "estimatefee", []any{blocks}, &rate)
	}
	// btcd refuses estimatefee while its estimator lacks data: no estimate.
	// Core says so in the answer's "errors", so its refusals are real errors.
	var rpcErr *bchain.RPCError
	if err != nil && (d == dialectCore || !errors.As(err, &rpcErr)) {
		return 0, err
	}
	if sat, err := btcToSat(rate); err == nil && sat > 0 {
		return sat, nil
	}
	return n.relayFee(ctx, d)
}

func (n *Node) relayFee(ctx context.Context, d dialect) (int64, error) {
	method := "getnetworkinfo"
	if d == dialectBtcd {
		method = "getinfo"
	}
	var res struct {
		RelayFee json.Number `json:"relayfee"`
	}
	if err := n.rpc.call(ctx, method, nil, &res); err != nil {
		return 0, err
	}
	sat, err := btcToSat(res.RelayFee)
	if err != nil || sat <= 0 {
		return 0, fmt.Errorf("%w: no fee estimate and no relay fee", bchain.ErrUnsupported)
	}
	return sat, nil
}

// MempoolMinFee returns satoshi per 1000 vbytes: Core's mempoolminfee
// (which is never below its minrelaytxfee) from getmempoolinfo; nodes
// without it (btcd, older forks) give their relay fee.
func (n *Node) MempoolMinFee(ctx context.Context) (int64, error) {
	d, err := n.Dialect(ctx)
	if err != nil {
		return 0, err
	}
	if d == dialectCore {
		var res struct {
			MempoolMinFee json.Number `json:"mempoolminfee"`
			MinRelayTxFee json.Number `json:"minrelaytxfee"`
		}
		if err := n.rpc.call(ctx, "getmempoolinfo", nil, &res); err != nil {
			return 0, err
		}
		if sat, err := btcToSat(res.MempoolMinFee); err == nil && sat > 0 {
			relay, _ := btcToSat(res.MinRelayTxFee)
			return max(sat, relay), nil
		}
	}
	return n.relayFee(ctx, d)
}

// btcToSat converts a JSON amount in coins to satoshi.
func btcToSat(n json.Number) (int64, error) {
	if n == "" {
		return 0, errors.New("empty amount")
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f > 21e6 {
		return 0, fmt.Errorf("invalid amount %q", n)
	}
	return int64(math.Round(f * 1e8)), nil
}
