package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// LedgerQueries answer the Mesh (Rosetta) front of a UTXO chain: every
// value movement of a block by descriptor, from the index alone, and the
// balance of a descriptor at any past block. A descriptor is the index's
// key of an output script (nil for outputs the index never keeps, such as
// OP_RETURN).
type LedgerQueries interface {
	// LedgerBlock returns the active chain's block at height with every
	// tx's inputs and outputs; nil above the tip.
	LedgerBlock(ctx context.Context, height uint32) (*LedgerBlock, error)
	// LedgerTx returns a confirmed or pending tx; nil when neither the
	// index nor the mempool has it. A duplicate coinbase txid
	// (bchain.DuplicateCoinbase) is the later block's.
	LedgerTx(ctx context.Context, txid bchain.Hash) (*LedgerTx, error)
	// LedgerBlockTx returns the tx as the active chain's block at height
	// books it, with that block's hash read in the same snapshot; nil when
	// the block does not hold it or height is above the tip.
	LedgerBlockTx(ctx context.Context, height uint32, txid bchain.Hash) (*LedgerTx, bchain.Hash, error)
	// LedgerBalance is desc's confirmed balance after the block at height
	// (at most the tip's), which must be the block hash names
	// (ErrBlockChanged otherwise), and its number of txs up to it.
	LedgerBalance(ctx context.Context, desc bchain.AddrDesc, height uint32, hash bchain.Hash) (balance int64, txs int, err error)
	// LedgerCoins lists desc's unspent outputs at the tip, with the tip
	// they were read at; withMempool adds the pending ones and drops those
	// pending txs spend. Nil when the index holds no block yet.
	LedgerCoins(ctx context.Context, desc bchain.AddrDesc, withMempool bool) (*LedgerCoins, error)
	// LedgerMempool lists the pending txids, newest first.
	LedgerMempool(ctx context.Context) []bchain.Hash
	// LedgerEvents returns up to limit events of the stream of blocks
	// added and removed, from sequence offset (negative: the last limit
	// events), and the stream's last sequence (-1 while it is empty).
	LedgerEvents(ctx context.Context, offset int64, limit int) ([]LedgerEvent, int64, error)
}

// ErrBlockChanged: the active chain's block at the height asked for is not
// the one the caller named (a reorg since the caller resolved it); asking
// again resolves the new one.
var ErrBlockChanged = errors.New("the block at that height changed")

// ErrLedgerIncomplete: the node cannot give all of a block's balance
// changes yet (a trace that failed and that the index has not amended, or
// a pre-Byzantium receipt whose outcome no trace tells); answering without
// them would book a block that later changes. Asking again later may work.
var ErrLedgerIncomplete = errors.New("the block's balance changes are not all known yet")

var _ LedgerQueries = (*UtxoService)(nil)

// LedgerBlock is a block as the ledger sees it.
type LedgerBlock struct {
	Height     uint32
	Hash, Prev bchain.Hash // Prev is zero for the genesis block
	Time       int64
	Txs        []LedgerTx
}

// LedgerTx is a tx's value movements. Height is its block's, 0 and
// Pending for a mempool tx.
type LedgerTx struct {
	Txid     bchain.Hash
	Height   uint32
	Pending  bool
	Coinbase bool
	Inputs   []LedgerInput // none for a coinbase
	Outputs  []db.TxAddr
	// LostAt is set on an earlier duplicate coinbase: the height of the
	// block whose coinbase overwrote its outputs (they were never spent).
	LostAt uint32
	// Overwrites are, on the later duplicate coinbase, the earlier one's
	// outputs that it overwrote (the node's UTXO set lost them).
	Overwrites []db.TxAddr
}

// LedgerInput is an input with the output it spends. Known is false for a
// pending tx's input whose parent neither the index nor the mempool holds
// yet (its Desc and Value are then unknown).
type LedgerInput struct {
	Prev  bchain.Hash
	Vout  uint32
	Desc  bchain.AddrDesc
	Value uint64
	Known bool
}

// LedgerBlock reads the block's txs and their prevouts from the index.
func (s *UtxoService) LedgerBlock(ctx context.Context, height uint32) (*LedgerBlock, error) {
	v, meta, err := s.activeView(height)
	if err != nil || meta == nil {
		return nil, err
	}
	defer v.release()
	out := &LedgerBlock{Height: height, Hash: meta.Hash, Time: meta.Time}
	if height > 0 {
		pm, err := db.ReadBlockMeta(v.snap, height-1)
		if err != nil {
			return nil, err
		}
		if pm == nil {
			return nil, fmt.Errorf("%w: no block at height %d below the tip", db.ErrCorrupt, height-1)
		}
		out.Prev = pm.Hash
	}
	txids, err := db.ReadBlockTxids(v.snap, height)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tas, err := db.ReadManyTxAddresses(v.snap, txids)
	if err != nil {
		return nil, err
	}
	out.Txs = make([]LedgerTx, len(txids))
	for i, ta := range tas {
		t, ok := s.bookedIn(txids[i], ta, height)
		if !ok {
			return nil, fmt.Errorf("%w: tx %s of block %d not indexed", db.ErrCorrupt, txids[i], height)
		}
		out.Txs[i] = t
	}
	return out, nil
}

func confirmedLedgerTx(txid bchain.Hash, ta *db.TxAddresses) LedgerTx {
	t := LedgerTx{Txid: txid, Height: ta.Height, Coinbase: ta.Coinbase, Outputs: ta.Outputs}
	if ta.Coinbase {
		return t
	}
	t.Inputs = make([]LedgerInput, len(ta.Prevouts))
	for i, p := range ta.Prevouts {
		t.Inputs[i] = LedgerInput{Prev: p.Txid, Vout: p.Vout, Desc: ta.Inputs[i].Desc, Value: ta.Inputs[i].Value, Known: true}
	}
	return t
}

// LedgerTx reads a confirmed tx from the index, a pending one from the
// mempool.
func (s *UtxoService) LedgerTx(_ context.Context, txid bchain.Hash) (*LedgerTx, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	ta, err := db.ReadTxAddresses(v.snap, txid)
	if err != nil {
		return nil, err
	}
	if ta != nil {
		t := confirmedLedgerTx(txid, ta)
		return &t, nil
	}
	mtx := s.mempoolTx(txid)
	if mtx == nil {
		return nil, nil
	}
	t := &LedgerTx{Txid: txid, Pending: true, Outputs: make([]db.TxAddr, len(mtx.Vout))}
	for i, o := range mtx.Vout {
		t.Outputs[i] = db.TxAddr{Value: o.Value}
		if i < len(mtx.OutDescs) {
			t.Outputs[i].Desc = mtx.OutDescs[i]
		}
	}
	t.Inputs = make([]LedgerInput, len(mtx.Vin))
	for i, in := range mtx.Vin {
		t.Inputs[i] = LedgerInput{Prev: in.PrevTxid, Vout: in.PrevVout}
		if i < len(mtx.Prevouts) && mtx.Prevouts[i].Known {
			p := mtx.Prevouts[i]
			t.Inputs[i].Desc, t.Inputs[i].Value, t.Inputs[i].Known = p.Desc, p.Value, true
		}
	}
	return t, nil
}

// LedgerBalance starts from the stored balance and takes back what the
// txs above height moved, or, for a height in the older half of the
// chain, adds up what the txs up to it moved: either way only desc's rows
// on one side of height are read.
func (s *UtxoService) LedgerBalance(ctx context.Context, desc bchain.AddrDesc, height uint32, hash bchain.Hash) (int64, int, error) {
	v, err := s.newView()
	if err != nil {
		return 0, 0, err
	}
	defer v.release()
	if err := v.checkBlock(height, hash); err != nil {
		return 0, 0, err
	}
	if len(desc) == 0 {
		return 0, 0, nil
	}
	bal, err := db.ReadAddrBalance(v.snap, desc)
	if err != nil || bal == nil {
		return 0, 0, err
	}
	// The index counts the outputs of the earlier duplicate coinbases,
	// which the node's UTXO set lost; the ledger does not.
	lost, err := s.lostValue(v, desc, height)
	if err != nil {
		return 0, 0, err
	}
	if height == v.tip.Height {
		return int64(bal.Balance) - lost, int(bal.Txs), nil
	}
	fromTop := height >= v.tip.Height/2
	var sum int64
	n := 0
	from, to := height, uint32(0)
	if fromTop {
		from, to = v.tip.Height, height+1
	}
	// The txs' records are read in batches (one multi-key read each).
	batch := make([]db.AddrTx, 0, ledgerBatch)
	flush := func() error {
		d, err := txDeltas(v, batch)
		sum, n, batch = sum+d, n+len(batch), batch[:0]
		return err
	}
	err = db.IterateAddrTxs(v.snap, desc, from, to, func(row db.AddrTxsAt) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		for _, tx := range row.Txs {
			if batch = append(batch, tx); len(batch) == ledgerBatch {
				if err := flush(); err != nil {
					return false, err
				}
			}
		}
		return true, nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return 0, 0, err
	}
	if fromTop {
		return int64(bal.Balance) - sum - lost, int(bal.Txs) - n, nil
	}
	return sum - lost, n, nil
}

// ledgerBatch is how many txs' records LedgerBalance reads at once.
const ledgerBatch = 512

// txDeltas is what txs of an address's rows moved for that address: their
// outputs (codes v) paid, their inputs (codes ^v) spent.
func txDeltas(v *view, txs []db.AddrTx) (int64, error) {
	if len(txs) == 0 {
		return 0, nil
	}
	txids := make([]bchain.Hash, len(txs))
	for i := range txs {
		txids[i] = txs[i].Txid
	}
	tas, err := db.ReadManyTxAddresses(v.snap, txids)
	if err != nil {
		return 0, err
	}
	var d int64
	for i, tx := range txs {
		ta := tas[i]
		if ta == nil {
			return 0, fmt.Errorf("%w: indexed tx %s has no txAddresses row", db.ErrCorrupt, tx.Txid)
		}
		for _, c := range tx.Indexes {
			switch {
			case c >= 0 && int(c) < len(ta.Outputs):
				d += int64(ta.Outputs[c].Value)
			case c < 0 && int(^c) < len(ta.Inputs):
				d -= int64(ta.Inputs[^c].Value)
			default:
				return 0, fmt.Errorf("%w: address row of tx %s names io %d out of range", db.ErrCorrupt, tx.Txid, c)
			}
		}
	}
	return d, nil
}

// LedgerCoins lists the unspent outputs in chain order, read in one
// snapshot with the tip it answers for; the mempool's view is
// ScriptUtxos'.
func (s *UtxoService) LedgerCoins(ctx context.Context, desc bchain.AddrDesc, withMempool bool) (*LedgerCoins, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if !v.hasTip {
		return nil, nil
	}
	out := &LedgerCoins{Height: v.tip.Height, Hash: v.tip.Hash, Coins: []ScriptUtxo{}}
	if len(desc) == 0 {
		return out, nil
	}
	if withMempool {
		out.Coins, err = s.scriptUtxosIn(ctx, v, desc)
	} else {
		out.Coins, err = s.confirmedUtxos(ctx, v, desc, false)
	}
	if err != nil {
		return nil, err
	}
	out.Coins = s.dropLost(v, out.Coins)
	return out, nil
}

// LedgerCoins are an account's coins at the tip Height, Hash.
type LedgerCoins struct {
	Height uint32
	Hash   bchain.Hash
	Coins  []ScriptUtxo
}

// LedgerMempool lists the pending txids.
func (s *UtxoService) LedgerMempool(context.Context) []bchain.Hash {
	if s.cfg.Mempool == nil {
		return []bchain.Hash{}
	}
	txs := s.cfg.Mempool.Txs()
	out := make([]bchain.Hash, len(txs))
	for i, t := range txs {
		out[i] = t.Txid
	}
	return out
}
