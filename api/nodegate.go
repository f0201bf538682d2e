package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
)

// NodeProbe is the node liveness probe's verdict, read without calling the
// node (bchain.Liveness implements it).
type NodeProbe interface {
	// Check is nil while the node answers, else an error wrapping
	// bchain.ErrNodeUnavailable.
	Check() error
	// State is the probe's last result, with the node's chain info.
	State() bchain.NodeLiveness
	// WaitInfo waits for the first chain info attempt or ctx's end.
	WaitInfo(ctx context.Context)
}

// gateBackend returns a copy of b whose node calls fail at once, with an
// error wrapping bchain.ErrNodeUnavailable, while the probe says the node
// does not answer: a request must not wait out the RPC timeout and its
// retry for a node that is known to be frozen. Fee estimates are also
// reused until the probe sees the tip move (feeCache), and never served
// from that cache while the node is down. The parsers and the fields
// the sync worker and mempool use are shared as they are.
func gateBackend(b *bchain.Backend, p NodeProbe) *bchain.Backend {
	g := *b
	if b.Chain != nil {
		g.Chain = gatedChain{b.Chain, p}
	}
	if b.RawBlocks != nil {
		g.RawBlocks = gatedRawBlocks{b.RawBlocks, p}
	}
	if b.Txs != nil {
		g.Txs = gatedTxs{b.Txs, p}
	}
	if b.Broadcast != nil {
		g.Broadcast = gatedBroadcast{b.Broadcast, p}
	}
	if b.Fees != nil {
		// Gated outside the cache too: a cached estimate is not served
		// while the node is down, so that every front answers 503 alike.
		cache := newFeeCache(gatedFees{b.Fees, p}, func() uint32 { return p.State().Height })
		g.Fees = gatedFees{cache, p}
	}
	if b.MinFee != nil {
		g.MinFee = gatedMinFee{b.MinFee, p}
	}
	if b.Eth != nil {
		e := gatedEth{b.Eth, p}
		g.Eth = e
		if src, ok := b.Eth.(bchain.EthTxSource); ok {
			g.Eth = gatedEthTxs{e, src}
		}
	}
	return &g
}

// errNodeDown ends the node calls in flight when the probe marks the
// node unresponsive.
var errNodeDown = fmt.Errorf("the liveness probe marked the node unresponsive: %w", bchain.ErrNodeUnavailable)

// inFlight ends ctx once the probe marks the node down, so that a call
// already sent to a node that then froze ends then with
// ErrNodeUnavailable instead of waiting for rpc_timeout.
func inFlight(ctx context.Context, p NodeProbe) (context.Context, context.CancelFunc) {
	d, ok := p.(interface{ Down() <-chan struct{} })
	if !ok {
		return ctx, func() {}
	}
	down := d.Down()
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-down:
			cancel(errNodeDown)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

type gatedChain struct {
	c bchain.BlockChain
	p NodeProbe
}

func (g gatedChain) BestBlock(ctx context.Context) (uint32, bchain.Hash, error) {
	if err := g.p.Check(); err != nil {
		return 0, bchain.Hash{}, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.c.BestBlock(ctx)
}

func (g gatedChain) BlockHash(ctx context.Context, height uint32) (bchain.Hash, error) {
	if err := g.p.Check(); err != nil {
		return bchain.Hash{}, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.c.BlockHash(ctx, height)
}

func (g gatedChain) BlockHeight(ctx context.Context, hash bchain.Hash) (uint32, error) {
	if err := g.p.Check(); err != nil {
		return 0, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.c.BlockHeight(ctx, hash)
}

func (g gatedChain) Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.c.Block(ctx, hash, height)
}

func (g gatedChain) ChainInfo(ctx context.Context) (*bchain.ChainInfo, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.c.ChainInfo(ctx)
}

type gatedRawBlocks struct {
	r bchain.RawBlockSource
	p NodeProbe
}

func (g gatedRawBlocks) RawBlock(ctx context.Context, hash bchain.Hash) ([]byte, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.r.RawBlock(ctx, hash)
}

type gatedTxs struct {
	t bchain.TxSource
	p NodeProbe
}

func (g gatedTxs) RawTx(ctx context.Context, txid, inBlock bchain.Hash) ([]byte, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.t.RawTx(ctx, txid, inBlock)
}

func (g gatedTxs) TxSpecific(ctx context.Context, txid, inBlock bchain.Hash) (json.RawMessage, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.t.TxSpecific(ctx, txid, inBlock)
}

type gatedBroadcast struct {
	b bchain.TxBroadcaster
	p NodeProbe
}

func (g gatedBroadcast) SendRawTx(ctx context.Context, raw []byte) (bchain.Hash, error) {
	if err := g.p.Check(); err != nil {
		return bchain.Hash{}, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.b.SendRawTx(ctx, raw)
}

type gatedFees struct {
	f bchain.FeeEstimator
	p NodeProbe
}

func (g gatedFees) EstimateFee(ctx context.Context, blocks int, conservative bool) (int64, error) {
	if err := g.p.Check(); err != nil {
		return 0, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.f.EstimateFee(ctx, blocks, conservative)
}

type gatedMinFee struct {
	f bchain.MinFeeSource
	p NodeProbe
}

func (g gatedMinFee) MempoolMinFee(ctx context.Context) (int64, error) {
	if err := g.p.Check(); err != nil {
		return 0, err
	}
	return g.f.MempoolMinFee(ctx)
}

// gatedEth gates an Ethereum-type node's queries; gatedEthTxs adds the
// optional tx source so that the service's type check still finds it.
type gatedEth struct {
	e bchain.EthereumChain
	p NodeProbe
}

type gatedEthTxs struct {
	gatedEth
	src bchain.EthTxSource
}

func (g gatedEthTxs) TxSpecific(ctx context.Context, hash bchain.Hash) (json.RawMessage, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.src.TxSpecific(ctx, hash)
}

func (g gatedEthTxs) RawTx(ctx context.Context, hash bchain.Hash) ([]byte, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.src.RawTx(ctx, hash)
}

func (g gatedEth) ChainID(ctx context.Context) (*big.Int, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.ChainID(ctx)
}

func (g gatedEth) Balance(ctx context.Context, addr bchain.AddrDesc, at bchain.EthBlockTag) (*big.Int, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.Balance(ctx, addr, at)
}

func (g gatedEth) Nonce(ctx context.Context, addr bchain.AddrDesc, at bchain.EthBlockTag) (uint64, error) {
	if err := g.p.Check(); err != nil {
		return 0, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.Nonce(ctx, addr, at)
}

func (g gatedEth) ContractInfo(ctx context.Context, contract bchain.AddrDesc) (*bchain.EthContractInfo, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.ContractInfo(ctx, contract)
}

func (g gatedEth) TokenBalance(ctx context.Context, addr, contract bchain.AddrDesc) (*big.Int, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.TokenBalance(ctx, addr, contract)
}

func (g gatedEth) EIP1559Fees(ctx context.Context) (*bchain.EthFees, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.EIP1559Fees(ctx)
}

func (g gatedEth) GasPrice(ctx context.Context) (*big.Int, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.GasPrice(ctx)
}

func (g gatedEth) Tx(ctx context.Context, hash bchain.Hash) (*bchain.EthTx, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.Tx(ctx, hash)
}

func (g gatedEth) InternalData(ctx context.Context, block bchain.Hash) ([]*bchain.EthInternalData, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.InternalData(ctx, block)
}

func (g gatedEth) Call(ctx context.Context, call bchain.EthCall) ([]byte, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.Call(ctx, call)
}

func (g gatedEth) Multicall(ctx context.Context, calls []bchain.EthMulticall, at bchain.EthBlockTag) ([]bchain.EthMulticallResult, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.Multicall(ctx, calls, at)
}

func (g gatedEth) EstimateGas(ctx context.Context, call bchain.EthCall) (uint64, error) {
	if err := g.p.Check(); err != nil {
		return 0, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.EstimateGas(ctx, call)
}

func (g gatedEth) Receipts(ctx context.Context, txs []bchain.Hash) ([]*bchain.EthReceipt, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	ctx, done := inFlight(ctx, g.p)
	defer done()
	return g.e.Receipts(ctx, txs)
}
