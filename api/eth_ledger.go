package api

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/ethmempool"
)

// EthLedgerQueries answer the Mesh (Rosetta) front of an Ethereum-type
// chain: a block's txs with everything that moved value (the node's block
// with its receipts and decoded token transfers, the index's internal
// transfers), balances at past blocks (ETH from the node, which keeps
// archive state; ERC-20 tokens summed from the index's transfers), an
// address's txs, the mempool and the block event stream.
type EthLedgerQueries interface {
	// EsploraTip, EsploraBlockHeight and EsploraBlockRefs read the
	// index's chain as for the Esplora front.
	EsploraTip(ctx context.Context) (uint32, bchain.Hash, bool, error)
	EsploraBlockHeight(ctx context.Context, hash bchain.Hash) (uint32, bool, error)
	EsploraBlockRefs(ctx context.Context, heights []uint32) (map[uint32]EsploraBlockRef, error)
	// LedgerEvents is the stream of blocks added and removed (ledger.go).
	LedgerEvents(ctx context.Context, offset int64, limit int) ([]LedgerEvent, int64, error)
	// EthKind is the network's family (fee vaults of OP-stack chains).
	EthKind() bchain.EthChainKind
	// EthLedgerBlock is the active chain's block at height; nil above the
	// tip.
	EthLedgerBlock(ctx context.Context, height uint32) (*EthLedgerBlock, error)
	// EthLedgerBlockTxs is EthLedgerBlock with only the txs named (those
	// the block holds, in its order): a search renders its page's txs
	// without the rest of their blocks.
	EthLedgerBlockTxs(ctx context.Context, height uint32, txids []bchain.Hash) (*EthLedgerBlock, error)
	// EthLedgerPending is a pending tx; nil when the mempool lacks it.
	EthLedgerPending(ctx context.Context, txid bchain.Hash) (*EthLedgerTx, error)
	// EthLedgerTxHeight is the height of the index's block holding txid.
	EthLedgerTxHeight(ctx context.Context, txid bchain.Hash) (uint32, bool, error)
	// EthLedgerHistory lists up to limit confirmed txs of desc, newest
	// first, with their heights (ErrTooMany past limit).
	EthLedgerHistory(ctx context.Context, desc bchain.AddrDesc, limit int) ([]EthTxRef, error)
	// EthLedgerBalances are desc's ETH balance after the block at height
	// (which must be the block hash names, ErrBlockChanged otherwise)
	// and, with tokens, its balance of every ERC-20 it ever held until
	// then.
	EthLedgerBalances(ctx context.Context, desc bchain.AddrDesc, height uint32, hash bchain.Hash, tokens bool) (*EthBalances, error)
	// EthLedgerMempool lists the pending txids, newest first.
	EthLedgerMempool(ctx context.Context) []bchain.Hash
}

var _ EthLedgerQueries = (*EthService)(nil)

// ErrTooMany: an answer would read more than the limit asked for.
var ErrTooMany = errors.New("too many transactions")

// maxTokenHeights caps the blocks read to sum an address's token balances.
const maxTokenHeights = 1000

// EthLedgerBlock is a block with its txs as the ledger sees them.
type EthLedgerBlock struct {
	Height     uint32
	Hash, Prev bchain.Hash
	Time       int64
	Txs        []EthLedgerTx
	// Withdrawals are the beacon withdrawals the block credits.
	Withdrawals []bchain.EthWithdrawal
}

// EthLedgerTx is a tx with what it moved. Tx.Receipt is nil while it is
// pending; BaseFee (nil before London) and Miner are its block's.
type EthLedgerTx struct {
	Tx      *bchain.EthTx
	Pending bool
	Height  uint32
	BaseFee *big.Int
	Miner   bchain.EthAddress
	// Internal are the value moves of its successful inner frames.
	Internal []bchain.EthInternalTransfer
	// Traced tells whether Internal and TopError come from a trace (the
	// index's or the node's); TopError is the top frame's error, which
	// tells a failed tx where its receipt has no status (before Byzantium).
	Traced   bool
	TopError string
	// Tokens are the index's metadata of the contracts of its ERC-20
	// transfers (absent when the index has none).
	Tokens map[bchain.EthAddress]*bchain.EthContractInfo
}

// EthTxRef is a confirmed tx of an address.
type EthTxRef struct {
	Txid   bchain.Hash
	Height uint32
}

// EthBalances are an account's balances at one block.
type EthBalances struct {
	Wei    *big.Int
	Tokens []EthTokenBalance
}

// EthTokenBalance is an ERC-20 balance, with the token's metadata.
type EthTokenBalance struct {
	Info  bchain.EthContractInfo
	Value *big.Int
}

// EthKind is the network's family.
func (s *EthService) EthKind() bchain.EthChainKind { return s.backend.Params.EthKind }

// EthLedgerBlock reads the block from the node and the internal transfers
// from the index.
func (s *EthService) EthLedgerBlock(ctx context.Context, height uint32) (*EthLedgerBlock, error) {
	return s.EthLedgerBlockTxs(ctx, height, nil)
}

// EthLedgerBlockTxs renders the named txs of the block (all for nil).
func (s *EthService) EthLedgerBlockTxs(ctx context.Context, height uint32, txids []bchain.Hash) (*EthLedgerBlock, error) {
	v, meta, err := s.activeView(height)
	if err != nil || meta == nil {
		return nil, err
	}
	defer v.release()
	r := newEthRenderer(s, v)
	blk, err := r.block(ctx, meta.Hash, height)
	if err != nil {
		return nil, err
	}
	out := &EthLedgerBlock{Height: height, Hash: blk.Hash, Prev: blk.Prev, Time: blk.Time, Txs: make([]EthLedgerTx, 0, len(blk.Eth.Txs)),
		Withdrawals: blk.Eth.Withdrawals}
	for i := range blk.Eth.Txs {
		if txids != nil && !slices.Contains(txids, blk.Eth.Txs[i].Hash) {
			continue
		}
		lt, err := s.ethLedgerTx(r, &blk.Eth.Txs[i])
		if err != nil {
			return nil, err
		}
		if err := ledgerComplete(blk, lt); err != nil {
			return nil, err
		}
		lt.Height, lt.BaseFee, lt.Miner = height, blk.Eth.BaseFee, blk.Eth.Miner
		out.Txs = append(out.Txs, *lt)
	}
	return out, nil
}

// activeView opens a view and reads the index's block at height in it:
// no view and no block above the tip, corruption when a height below it
// has none. The caller releases the view it gets.
func (s *core) activeView(height uint32) (*view, *db.BlockMeta, error) {
	v, err := s.newView()
	if err != nil {
		return nil, nil, err
	}
	if !v.hasTip || height > v.tip.Height {
		v.release()
		return nil, nil, nil
	}
	meta, err := db.ReadBlockMeta(v.snap, height)
	if err == nil && meta == nil {
		err = fmt.Errorf("%w: no block at height %d below the tip", db.ErrCorrupt, height)
	}
	if err != nil {
		v.release()
		return nil, nil, err
	}
	return v, meta, nil
}

// ledgerComplete refuses a tx whose balance changes are not all known: its
// internal transfers when neither the index nor the node's fresh trace has
// them (the index amends such blocks later, and a Mesh block must not
// change), or its outcome when the receipt has no status (before
// Byzantium) and no trace tells whether the top frame failed.
func ledgerComplete(blk *bchain.Block, lt *EthLedgerTx) error {
	switch tx := lt.Tx; {
	case !blk.Eth.Traced:
		return fmt.Errorf("%w: block %s was read without internal transactions (processInternalTransactions is off)", ErrLedgerIncomplete, blk.Hash)
	case lt.Traced:
		return nil
	case blk.Eth.TraceError != "":
		return fmt.Errorf("%w: the trace of tx %s failed (%s)", ErrLedgerIncomplete, tx.Hash, blk.Eth.TraceError)
	case tx.Receipt != nil && tx.Receipt.Status == bchain.EthStatusUnknown:
		return fmt.Errorf("%w: tx %s has a receipt without status and no trace", ErrLedgerIncomplete, tx.Hash)
	}
	return nil
}

// ethLedgerTx gathers a tx's internal transfers (the index's, or the
// node's fresh trace while the index lacks them) and token metadata.
func (s *EthService) ethLedgerTx(r *ethRenderer, tx *bchain.EthTx) (*EthLedgerTx, error) {
	out := &EthLedgerTx{Tx: tx, Tokens: map[bchain.EthAddress]*bchain.EthContractInfo{}}
	id, err := db.ReadInternalData(r.v.snap, tx.Hash)
	if err != nil {
		return nil, err
	}
	if id == nil && tx.Internal != nil {
		id = r.internalFromTrace(tx)
	}
	if id != nil {
		out.Traced, out.TopError = true, id.Error
		for _, it := range id.Transfers {
			var from, to bchain.EthAddress
			if len(it.From) != len(from) || len(it.To) != len(to) {
				return nil, fmt.Errorf("%w: internal transfer of tx %s with a bad address", db.ErrCorrupt, tx.Hash)
			}
			copy(from[:], it.From)
			copy(to[:], it.To)
			out.Internal = append(out.Internal, bchain.EthInternalTransfer{Type: it.Kind, From: from, To: to, Value: it.Value})
		}
	}
	for _, tt := range tx.Transfers {
		if tt.Standard != bchain.TokenERC20 || out.Tokens[tt.Contract] != nil {
			continue
		}
		ci, err := r.contract(tt.Contract.AddrDesc())
		if err != nil {
			return nil, err
		}
		if ci != nil {
			out.Tokens[tt.Contract] = &bchain.EthContractInfo{Contract: tt.Contract, Standard: bchain.TokenERC20,
				Name: ci.Name, Symbol: ci.Symbol, Decimals: int(ci.Decimals)}
		}
	}
	return out, nil
}

// EthLedgerPending reads a pending tx from the mempool, with the token
// transfer its calldata asks for.
func (s *EthService) EthLedgerPending(_ context.Context, txid bchain.Hash) (*EthLedgerTx, error) {
	if s.cfg.EthMempool == nil {
		return nil, nil
	}
	mt, ok := s.cfg.EthMempool.Tx(txid)
	if !ok {
		return nil, nil
	}
	tx := *mt.Eth
	tx.Transfers = ethmempool.PendingTransfers(&tx)
	return &EthLedgerTx{Tx: &tx, Pending: true, Tokens: map[bchain.EthAddress]*bchain.EthContractInfo{}}, nil
}

// EthLedgerTxHeight asks the node where txid is mined and checks that
// the index holds that block.
func (s *EthService) EthLedgerTxHeight(ctx context.Context, txid bchain.Hash) (uint32, bool, error) {
	etx, err := s.eth.Tx(ctx, txid)
	if errors.Is(err, bchain.ErrTxNotFound) {
		return 0, false, nil
	}
	if err != nil || etx.BlockHash.IsZero() {
		return 0, false, err
	}
	v, err := s.newView()
	if err != nil {
		return 0, false, err
	}
	defer v.release()
	if err := v.checkBlock(etx.BlockHeight, etx.BlockHash); err != nil {
		if errors.Is(err, ErrBlockChanged) {
			return 0, false, nil
		}
		return 0, false, err
	}
	return etx.BlockHeight, true, nil
}

// EthLedgerHistory reads desc's rows of the address index, newest first.
func (s *EthService) EthLedgerHistory(ctx context.Context, desc bchain.AddrDesc, limit int) ([]EthTxRef, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	var out []EthTxRef
	err = db.IterateEthAddrTxs(v.snap, desc, ^uint32(0), 0, func(row db.EthAddrTxsAt) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		for _, t := range row.Txs {
			if len(out) >= limit {
				return false, fmt.Errorf("%w: more than %d", ErrTooMany, limit)
			}
			out = append(out, EthTxRef{Txid: t.Txid, Height: row.Height})
		}
		return true, nil
	})
	return out, err
}

// EthLedgerMempool lists the pending txids, newest first.
func (s *EthService) EthLedgerMempool(context.Context) []bchain.Hash {
	if s.cfg.EthMempool == nil {
		return nil
	}
	txs := s.cfg.EthMempool.Txs()
	out := make([]bchain.Hash, len(txs))
	for i, t := range txs {
		out[i] = t.Eth.Hash
	}
	return out
}
