// Package chaingen builds fully deterministic regtest block chains of real,
// signed transactions and keeps an independent per-address ledger of them.
//
// Blocks are assembled in Go and handed to a node with submitblock (no
// mining RPCs, no mempool), so the same calls always produce byte-identical
// chains: keys, timestamps, tx construction, fees and nonces are all fixed.
// The wallet can receive to and spend from every ScriptKind.
//
// A Generator is not safe for concurrent use. On error a Generator may be
// left half-updated and should be discarded.
package chaingen

import (
	"context"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// DefaultTimeStart and DefaultTimeStep fix block timestamps: block h is
// stamped DefaultTimeStart + h*DefaultTimeStep (Nov 2023 onwards).
//
// btcd considers itself synced ("current") only while its tip is less than
// 24h old. Until then it neither serves headers to peers nor removes mined
// txs from its mempool. Tests of P2P sync or of the mempool therefore need
// WithTimestamps with a recent start, at the price of run-to-run
// determinism of the block hashes.
const (
	DefaultTimeStart = 1700000000
	DefaultTimeStep  = 600
)

// MinerIndex is the wallet index every coinbase pays to. The payout kind
// rotates by height over P2PKH, P2WPKH, P2TR and P2PK, so P2PKH's address
// of this index also collects the P2PK coinbases.
const MinerIndex = 0

var minerKinds = []ScriptKind{P2PKH, P2WPKH, P2TR, P2PK}

// Generator builds a chain on top of the genesis block of its params.
type Generator struct {
	params    *chaincfg.Params
	seed      string
	salt      string
	timeStart int64
	timeStep  int64

	blocks []*wire.MsgBlock
	hashes []chainhash.Hash
	view   map[wire.OutPoint]coin
	reg    *registry
	wallet *wallet
	staged map[chainhash.Hash]struct{}
}

// Option configures New.
type Option func(*Generator)

// WithTimestamps stamps block h with start + h*step (step rounded down to
// whole seconds) instead of the defaults.
func WithTimestamps(start time.Time, step time.Duration) Option {
	return func(g *Generator) { g.timeStart, g.timeStep = start.Unix(), int64(step/time.Second) }
}

// New returns a generator holding only the genesis block. All keys derive
// from seed. params must have trivial proof of work (regtest).
func New(params *chaincfg.Params, seed string, opts ...Option) *Generator {
	g := &Generator{params: params, seed: seed, timeStart: DefaultTimeStart, timeStep: DefaultTimeStep}
	for _, o := range opts {
		o(g)
	}
	g.reset()
	return g
}

func (g *Generator) reset() {
	g.blocks = []*wire.MsgBlock{g.params.GenesisBlock}
	g.hashes = []chainhash.Hash{*g.params.GenesisHash}
	g.view = make(map[wire.OutPoint]coin)
	g.reg = newRegistry(g.params, g.seed)
	g.wallet = newWallet(g.params.CoinbaseMaturity)
	g.staged = make(map[chainhash.Hash]struct{})
}

// Params returns the chain parameters.
func (g *Generator) Params() *chaincfg.Params { return g.params }

// Height returns the tip height.
func (g *Generator) Height() int32 { return int32(len(g.blocks) - 1) }

// Tip returns the tip height and hash.
func (g *Generator) Tip() (int32, chainhash.Hash) { return g.Height(), g.hashes[len(g.hashes)-1] }

// Blocks returns the chain indexed by height (Blocks()[0] is genesis). The
// blocks are shared with the generator and must not be modified.
func (g *Generator) Blocks() []*wire.MsgBlock { return append([]*wire.MsgBlock(nil), g.blocks...) }

// Fork returns an independent generator whose chain is g's chain truncated
// to height. Its wallet is rebuilt by replaying those blocks; salt (which
// must differ from g's) goes into its coinbases and its random choices, so
// its future blocks compete with g's.
func (g *Generator) Fork(height int32, salt string) (*Generator, error) {
	if height < 0 || height > g.Height() {
		return nil, fmt.Errorf("chaingen: fork height %d outside 0..%d", height, g.Height())
	}
	if salt == g.salt {
		return nil, fmt.Errorf("chaingen: fork salt %q equals the parent's", salt)
	}
	if len(salt) > 64 {
		return nil, fmt.Errorf("chaingen: fork salt longer than 64 bytes")
	}
	f := &Generator{params: g.params, seed: g.seed, salt: salt, timeStart: g.timeStart, timeStep: g.timeStep}
	f.reset()
	// Scripts are a pure function of (seed, kind, index); copying the
	// registry lets the fork recognise every output g's wallet created.
	f.reg = g.reg.clone()
	for _, b := range g.blocks[1 : height+1] {
		f.connect(b)
	}
	return f, nil
}

// Address returns the explorer address of the wallet script (kind, index),
// "" for kinds without one, and registers the script with the wallet so
// payments to it are tracked.
func (g *Generator) Address(kind ScriptKind, index uint64) (string, error) {
	si, err := g.reg.get(kind, index)
	if err != nil {
		return "", err
	}
	return si.address, nil
}

// PkScript returns the output script of the wallet script (kind, index) and
// registers it like Address.
func (g *Generator) PkScript(kind ScriptKind, index uint64) ([]byte, error) {
	si, err := g.reg.get(kind, index)
	if err != nil {
		return nil, err
	}
	return si.pkScript, nil
}

// BlockSubmitter accepts blocks; *regtest.Node and *regtest.Client satisfy it.
type BlockSubmitter interface {
	SubmitBlock(ctx context.Context, b *wire.MsgBlock) error
}

// Submit submits g's blocks from fromHeight (at least 1) to the tip, in order.
func (g *Generator) Submit(ctx context.Context, s BlockSubmitter, fromHeight int32) error {
	return SubmitBlocks(ctx, s, g.blocks, fromHeight)
}

// SubmitBlocks submits chain[fromHeight:] in order, where chain is indexed by
// height (chain[0] is genesis and is never submitted).
func SubmitBlocks(ctx context.Context, s BlockSubmitter, chain []*wire.MsgBlock, fromHeight int32) error {
	fromHeight = max(fromHeight, 1)
	for h := int(fromHeight); h < len(chain); h++ {
		if err := s.SubmitBlock(ctx, chain[h]); err != nil {
			return fmt.Errorf("chaingen: submit block %d: %w", h, err)
		}
	}
	return nil
}

// Output is a payment destination for CreatePayment: Script if set,
// otherwise Address (decoded with the generator's params).
type Output struct {
	Address string
	Script  []byte
	Value   int64
}

// paymentChange receives CreatePayment's change (a reused hot address).
var paymentChange = scriptRef{P2WPKH, 2}

// CreatePayment returns a standard signed tx paying the outputs to, funded
// from the wallet's largest spendable outputs, with change back to the wallet and a
// fee of feeRate sat/vB. The tx is not mined: send it with
// sendrawtransaction and mine it later with AddBlock. Its inputs are
// removed from the wallet immediately.
func (g *Generator) CreatePayment(to []Output, feeRate int64) (*wire.MsgTx, error) {
	if feeRate < 1 {
		return nil, fmt.Errorf("chaingen: fee rate %d < 1 sat/vB", feeRate)
	}
	outs, err := g.txOuts(to)
	if err != nil {
		return nil, err
	}
	var want int64
	for _, o := range outs {
		want += o.Value
	}
	change, err := g.reg.get(paymentChange.kind, paymentChange.index)
	if err != nil {
		return nil, err
	}
	g.wallet.mature(g.Height() + 1)
	cands := g.wallet.largestFirst(func(u *utxo) bool { return u.info.ref.kind != HashLock })
	var sum int64
	for n, u := range cands {
		if sum += u.value; sum < want {
			continue
		}
		ins := cands[:n+1]
		tx, _, err := buildTx(ins, outs, change, feeRate)
		if err == nil {
			for _, u := range ins {
				g.wallet.remove(u.op)
			}
			return tx, nil
		}
		if !isInsufficient(err) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: need %d sat plus fee", errInsufficient, want)
}
