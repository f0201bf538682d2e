package db

import (
	"errors"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// ErrMissingPrevout: an input spends an output the index does not know.
// On a valid chain this means the index is damaged. The sync worker stops
// on it. (The errors both chain types share are in errors.go.)
var ErrMissingPrevout = errors.New("input spends an unknown output")

// OutputClassifier maps an output script to the descriptor it is indexed
// under (nil: not indexed).
type OutputClassifier interface {
	OutputAddrDesc(script []byte) bchain.AddrDesc
}

// UtxoIndex connects and disconnects Bitcoin-type blocks, one atomic write
// per block holding its rows, its undo data and the new tip.
type UtxoIndex struct {
	chainIndex
	classify OutputClassifier
	filters  FilterParams
	// opt holds the enabled optional indexes (optional.go), written in
	// the same batches and bulk rounds as the core rows.
	opt optionalSet
}

// NewUtxoIndex returns the Bitcoin-type index over d, keeping undo data for
// the last keep blocks (block_addresses_to_keep) and building block filters
// with the given parameters. The parameters are stored by the first call on
// a new index; a later call with different ones fails with ErrIncompatible,
// since every stored filter depends on them.
func NewUtxoIndex(d *DB, c OutputClassifier, keep int, filters FilterParams) (*UtxoIndex, error) {
	if err := filters.Validate(); err != nil {
		return nil, err
	}
	if err := d.checkFilterParams(filters); err != nil {
		return nil, err
	}
	return &UtxoIndex{chainIndex: newChainIndex(d, keep), classify: c, filters: filters}, nil
}

// Filters returns the block filter parameters of the index.
func (x *UtxoIndex) Filters() FilterParams { return x.filters }

// ConnectBlock indexes blk, which must extend the tip (or be block 0 of an
// empty index), in one atomic write.
func (x *UtxoIndex) ConnectBlock(blk *bchain.Block) error {
	if err := x.checkNext(blk); err != nil {
		return err
	}
	ib, err := x.index(nil, blk)
	if err != nil {
		return err
	}
	rows := utxoRows(ib)
	if err := x.opt.connect(rows, blk, ib); err != nil {
		return err
	}
	b := x.db.NewBatch()
	defer b.Destroy()
	if err := x.apply(b, rows); err != nil {
		return err
	}
	if blk.Height >= x.keep {
		b.del(CFBlockTxs, heightKey(blk.Height-x.keep))
	}
	writeTip(b, Tip{Height: blk.Height, Hash: blk.Hash})
	return x.db.write(b)
}

// DisconnectTip removes the tip block, restoring every row to what it was
// before the block was connected. refill must return the block with the
// given hash (which the node keeps even when it is no longer on its active
// chain); it is called for the block re-entering the bottom of the rollback
// window, so that the window stays full and the result is byte-identical to
// a fresh sync. It returns the new tip (ok false when the index is now empty).
func (x *UtxoIndex) DisconnectTip(refill RefillFunc) (Tip, bool, error) {
	tip, ok, err := x.tipForWrite()
	if err != nil {
		return Tip{}, false, err
	}
	if !ok {
		return Tip{}, false, ErrEmptyIndex
	}
	h := tip.Height
	ib, err := x.rebuild(h)
	if err != nil {
		return Tip{}, false, err
	}
	if ib.Meta.Hash != tip.Hash {
		return Tip{}, false, fmt.Errorf("%w: height %d is %s but the tip is %s", ErrCorrupt, h, ib.Meta.Hash, tip.Hash)
	}
	rows := utxoRows(ib).invert()
	if err := x.disconnectOptional(rows, ib, refill); err != nil {
		return Tip{}, false, err
	}
	b := x.db.NewBatch()
	defer b.Destroy()
	if err := x.apply(b, rows); err != nil {
		return Tip{}, false, err
	}
	if h >= x.keep {
		undo, err := x.refillUndo(h-x.keep, refill)
		if err != nil {
			return Tip{}, false, err
		}
		b.put(CFBlockTxs, heightKey(h-x.keep), packBlockUndo(undo))
	}
	for i := range ib.Txs {
		b.del(CFTransactions, txCacheKey(ib.Txs[i].Txid))
	}
	return x.commitDisconnect(b, h)
}

// disconnectOptional adds the optional indexes' rows of disconnecting ib
// to rows, fetching the node's copy of the block when one of them reads
// it.
func (x *UtxoIndex) disconnectOptional(rows *blockRows, ib *IndexedBlock, refill RefillFunc) error {
	if len(x.opt.all) == 0 {
		return nil
	}
	var blk *bchain.Block
	if x.opt.readsNodeBlock() {
		if refill == nil {
			return fmt.Errorf("disconnecting block %d needs the node's copy of it (optional indexes) but no source was given", ib.Height)
		}
		var err error
		if blk, err = refill(ib.Height, ib.Meta.Hash); err != nil {
			return fmt.Errorf("fetching block %d %s for the optional indexes: %w", ib.Height, ib.Meta.Hash, err)
		}
		if blk.Hash != ib.Meta.Hash || len(blk.Txs) != len(ib.Txs) {
			return fmt.Errorf("fetching block %d: node has %s (%d txs), index has %s (%d txs)", ib.Height, blk.Hash, len(blk.Txs), ib.Meta.Hash, len(ib.Txs))
		}
		blk.Height = ib.Height
	}
	return x.opt.disconnect(rows, blk, ib)
}

// refillUndo recomputes the undo data of the block at height from the node's
// copy of it, verifying it is the block the index holds.
func (x *UtxoIndex) refillUndo(height uint32, refill RefillFunc) (BlockUndo, error) {
	meta, err := ReadBlockMeta(x.db, height)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("%w: no block at height %d", ErrCorrupt, height)
	}
	if refill == nil {
		return nil, fmt.Errorf("block %d is needed to refill the rollback window but no source was given", height)
	}
	blk, err := refill(height, meta.Hash)
	if err != nil {
		return nil, fmt.Errorf("refill rollback window with block %d: %w", height, err)
	}
	if blk.Hash != meta.Hash {
		return nil, fmt.Errorf("refill rollback window: node has block %s at height %d, index has %s", blk.Hash, height, meta.Hash)
	}
	blk.Height = height
	ib, err := x.resolve(nil, blk)
	if err != nil {
		return nil, err
	}
	return ib.undo(), nil
}

// index builds the indexed form that connecting blk writes: its resolved
// inputs and outputs, and its filter.
func (x *UtxoIndex) index(cache *utxoCache, blk *bchain.Block) (*IndexedBlock, error) {
	ib, err := x.resolve(cache, blk)
	if err != nil {
		return nil, err
	}
	if ib.Filter, err = blockFilter(x.filters, blk, ib); err != nil {
		return nil, fmt.Errorf("block %d %s: %w", blk.Height, blk.Hash, err)
	}
	return ib, nil
}

// resolve turns a decoded block into an IndexedBlock: output descriptors
// from the parser, and for every input the descriptor, value and height of
// the output it spends: from the block itself (outputs of earlier txs),
// else from the bulk loader's UTXO cache (cache nil: none), else from the
// index (readPrevouts).
func (x *UtxoIndex) resolve(cache *utxoCache, blk *bchain.Block) (*IndexedBlock, error) {
	ib := &IndexedBlock{
		Height: blk.Height,
		Meta:   BlockMeta{Hash: blk.Hash, Time: blk.Time, TxCount: uint32(len(blk.Txs)), Size: uint32(blk.Size), Header: blk.Header},
		Txs:    make([]IndexedTx, len(blk.Txs)),
	}
	inBlock := make(map[bchain.Hash]int, len(blk.Txs))
	var misses []inputAt
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		itx := &ib.Txs[i]
		*itx = IndexedTx{Txid: tx.Txid, Coinbase: tx.IsCoinbase(), Inputs: make([]IndexedInput, len(tx.Vin)), Outputs: make([]TxAddr, len(tx.Vout))}
		for n := range tx.Vout {
			itx.Outputs[n] = TxAddr{Desc: x.classify.OutputAddrDesc(tx.Vout[n].Script), Value: tx.Vout[n].Value}
		}
		for j := range tx.Vin {
			if itx.Coinbase {
				break
			}
			vin := &tx.Vin[j]
			if k, same := inBlock[vin.PrevTxid]; same {
				prev := &ib.Txs[k]
				if int(vin.PrevVout) >= len(prev.Outputs) {
					return nil, missingPrevout(blk, inputAt{i, j})
				}
				itx.Inputs[j] = IndexedInput{
					Prevout: Prevout{Txid: vin.PrevTxid, Vout: vin.PrevVout, Height: ib.Height, Index: uint32(k), Coinbase: prev.Coinbase},
					TxAddr:  prev.Outputs[vin.PrevVout],
				}
			} else if in, ok := cache.prevout(vin.PrevTxid, vin.PrevVout); ok {
				itx.Inputs[j] = in
			} else {
				misses = append(misses, inputAt{i, j})
			}
		}
		inBlock[tx.Txid] = i
	}
	if err := x.readPrevouts(blk, ib, misses); err != nil {
		return nil, err
	}
	return ib, nil
}

// inputAt names one input of a block: Vin[in] of Txs[tx].
type inputAt struct{ tx, in int }

func missingPrevout(blk *bchain.Block, at inputAt) error {
	vin := &blk.Txs[at.tx].Vin[at.in]
	return fmt.Errorf("block %d tx %s input %d: %w: %s:%d", blk.Height, blk.Txs[at.tx].Txid, at.in, ErrMissingPrevout, vin.PrevTxid, vin.PrevVout)
}

// readPrevouts resolves inputs from the txAddresses rows of the txs they
// spend from, reading each row once and all of them in one MultiGet: a
// block's inputs outside the UTXO cache are otherwise one random read
// each, the bulk load's largest cost once the unspent set outgrows the
// cache.
func (x *UtxoIndex) readPrevouts(blk *bchain.Block, ib *IndexedBlock, misses []inputAt) error {
	if len(misses) == 0 {
		return nil
	}
	row := make(map[bchain.Hash]int, len(misses))
	var txids []bchain.Hash
	for _, m := range misses {
		txid := blk.Txs[m.tx].Vin[m.in].PrevTxid
		if _, ok := row[txid]; !ok {
			row[txid] = len(txids)
			txids = append(txids, txid)
		}
	}
	prev, err := ReadManyTxOutputs(uncachedReader{x.db}, txids)
	if err != nil {
		return fmt.Errorf("block %d: %w", blk.Height, err)
	}
	for _, m := range misses {
		vin := &blk.Txs[m.tx].Vin[m.in]
		ta := prev[row[vin.PrevTxid]]
		if ta == nil || int(vin.PrevVout) >= len(ta.Outputs) {
			return missingPrevout(blk, m)
		}
		ib.Txs[m.tx].Inputs[m.in] = IndexedInput{
			Prevout: Prevout{Txid: vin.PrevTxid, Vout: vin.PrevVout, Height: ta.Height, Index: ta.Index, Coinbase: ta.Coinbase},
			TxAddr:  ta.Outputs[vin.PrevVout],
		}
	}
	return nil
}

// rebuild reconstructs the IndexedBlock of an indexed block from its undo
// data, its blockTxids rows and its txs' txAddresses rows. Every read is
// done before the caller deletes anything: the undo data's positions
// (including those of earlier txs of the same block) resolve to txids
// through blockTxids rows the block's own inverse rows remove.
func (x *UtxoIndex) rebuild(h uint32) (*IndexedBlock, error) {
	undo, err := ReadBlockUndo(x.db, h)
	if err != nil {
		return nil, err
	}
	if undo == nil {
		return nil, fmt.Errorf("%w: no undo data for block %d (window %d blocks)", ErrOutsideWindow, h, x.keep)
	}
	meta, err := ReadBlockMeta(x.db, h)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("%w: undo data but no block at height %d", ErrCorrupt, h)
	}
	ib := &IndexedBlock{Height: h, Meta: *meta, Txs: make([]IndexedTx, len(undo))}
	if ib.Filter, err = ReadBlockFilter(x.db, meta.Hash); err != nil {
		return nil, err
	}
	txids := make([]bchain.Hash, len(undo))
	for i := range undo {
		txids[i] = undo[i].Txid
	}
	tas, err := ReadManyTxAddresses(x.db, txids)
	if err != nil {
		return nil, err
	}
	for i, ta := range tas {
		if ta == nil || ta.Height != h || ta.Index != uint32(i) {
			return nil, fmt.Errorf("%w: tx %s of block %d has no matching txAddresses row", ErrCorrupt, undo[i].Txid, h)
		}
		tx := &ib.Txs[i]
		*tx = IndexedTx{Txid: undo[i].Txid, Coinbase: ta.Coinbase, Outputs: ta.Outputs, Inputs: make([]IndexedInput, len(ta.Inputs))}
		if ta.Coinbase {
			continue
		}
		if len(undo[i].Prevouts) != len(ta.Inputs) {
			return nil, fmt.Errorf("%w: tx %s has %d inputs but %d prevouts in undo data", ErrCorrupt, undo[i].Txid, len(ta.Inputs), len(undo[i].Prevouts))
		}
		for j := range ta.Inputs {
			tx.Inputs[j] = IndexedInput{Prevout: undo[i].Prevouts[j], TxAddr: ta.Inputs[j]}
		}
	}
	return ib, nil
}

// apply adds rows to a batch, merging balance deltas into the stored
// balances. A balance that would go negative means the index is damaged.
func (x *UtxoIndex) apply(b *Batch, rows *blockRows) error {
	for _, m := range rows.muts {
		if m.del {
			b.del(m.cf, m.key)
		} else {
			b.put(m.cf, m.key, m.value)
		}
	}
	for _, k := range rows.sortedDescs() {
		desc := bchain.AddrDesc(k)
		cur, err := ReadAddrBalance(x.db, desc)
		if err != nil {
			return err
		}
		if cur == nil {
			cur = &AddrBalance{}
		}
		next, err := applyBalanceDelta(cur, &rows.balances[k].balanceDelta)
		if err != nil {
			return fmt.Errorf("address %s: %w", desc, err)
		}
		switch {
		case next.Txs == 0:
			// A descriptor without txs has no row, as in a fresh sync.
			b.del(CFAddressBalance, balanceKey(desc))
			x.opt.balanceRow(batchWriter{b}, desc, BalanceDeleted)
		case cur.Txs == 0:
			writeAddrBalance(b, desc, next)
			x.opt.balanceRow(batchWriter{b}, desc, BalanceCreated)
		default:
			writeAddrBalance(b, desc, next)
		}
	}
	return nil
}

func applyBalanceDelta(cur *AddrBalance, d *balanceDelta) (*AddrBalance, error) {
	txs := int64(cur.Txs) + d.txs
	sent := int64(cur.Sent) + d.sent
	bal := int64(cur.Balance) + d.received - d.sent
	utxos := int64(cur.Utxos) + d.utxos
	if txs < 0 || sent < 0 || bal < 0 || utxos < 0 || txs > 0xffffffff || utxos > 0xffffffff {
		return nil, fmt.Errorf("%w: balance underflow (txs %d sent %d balance %d utxos %d)", ErrCorrupt, txs, sent, bal, utxos)
	}
	return &AddrBalance{Txs: uint32(txs), Sent: uint64(sent), Balance: uint64(bal), Utxos: uint32(utxos)}, nil
}
