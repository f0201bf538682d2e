package db

// Typed accessors: one Read/Write/Delete per record, each taking the
// narrowest interface it needs. Reads of absent rows return nil, nil.

import (
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// ReadTip returns the last connected block; ok is false for an empty index.
func ReadTip(r Reader) (tip Tip, ok bool, err error) {
	v, err := r.get(CFDefault, stateKeyTip)
	if err != nil || v == nil {
		return Tip{}, false, err
	}
	tip, err = unpackTip(v)
	return tip, err == nil, err
}

func writeTip(w Writer, t Tip) { w.put(CFDefault, stateKeyTip, packTip(t)) }
func deleteTip(w Writer)       { w.del(CFDefault, stateKeyTip) }

// ReadBlockMeta returns the index's record of the block at height.
func ReadBlockMeta(r Reader, height uint32) (*BlockMeta, error) {
	v, err := r.get(CFHeight, heightKey(height))
	if err != nil || v == nil {
		return nil, err
	}
	m, err := unpackBlockMeta(v)
	if err != nil {
		return nil, fmt.Errorf("height %d: %w", height, err)
	}
	return m, nil
}

// HoldsBlock reports whether r's height column has the block hash at
// height: the test a cache anchored at a block runs to learn whether a
// newer view extends that block (its entries still hold) or left it (a
// reorg, a rollback). Callers also compare their view's tip with height:
// a bulk round ingests its height rows before it writes its tip, so a
// view taken in between has rows above its tip. A read error counts as
// not held, which only costs such a cache its entries.
func HoldsBlock(r Reader, height uint32, hash bchain.Hash) bool {
	m, err := ReadBlockMeta(r, height)
	return err == nil && m != nil && m.Hash == hash
}

// ReadAddrBalance returns a descriptor's balance record.
func ReadAddrBalance(r Reader, desc bchain.AddrDesc) (*AddrBalance, error) {
	v, err := r.get(CFAddressBalance, balanceKey(desc))
	if err != nil || v == nil {
		return nil, err
	}
	b, err := unpackAddrBalance(v)
	if err != nil {
		return nil, fmt.Errorf("address %s: %w", desc, err)
	}
	return b, nil
}

// ReadAddrBalances is ReadAddrBalance for many descriptors in one read (a
// MultiGet on RocksDB): out[i] is descs[i]'s record, nil when it has none.
// An account's derived addresses are read this way, a batch at a time.
func ReadAddrBalances(r Reader, descs []bchain.AddrDesc) ([]*AddrBalance, error) {
	keys := make([][]byte, len(descs))
	for i, d := range descs {
		keys[i] = balanceKey(d)
	}
	vals, err := getMany(r, CFAddressBalance, keys)
	if err != nil {
		return nil, err
	}
	out := make([]*AddrBalance, len(descs))
	for i, v := range vals {
		if v == nil {
			continue
		}
		if out[i], err = unpackAddrBalance(v); err != nil {
			return nil, fmt.Errorf("address %s: %w", descs[i], err)
		}
	}
	return out, nil
}

func writeAddrBalance(w Writer, desc bchain.AddrDesc, b *AddrBalance) {
	w.put(CFAddressBalance, balanceKey(desc), packAddrBalance(b))
}

// ReadTxAddresses returns the index's record of a confirmed tx, its
// inputs filled from the rows of the txs whose outputs they spend.
func ReadTxAddresses(r Reader, txid bchain.Hash) (*TxAddresses, error) {
	ta, err := ReadTxOutputs(r, txid)
	if err != nil || ta == nil {
		return nil, err
	}
	if err := fillInputs(r, []*TxAddresses{ta}); err != nil {
		return nil, fmt.Errorf("tx %s: %w", txid, err)
	}
	return ta, nil
}

// ReadTxOutputs is ReadTxAddresses without the inputs (Inputs is nil), at
// one read: for readers that need only a tx's outputs, its position, or
// whether the index holds it.
func ReadTxOutputs(r Reader, txid bchain.Hash) (*TxAddresses, error) {
	v, err := r.get(CFTxAddresses, txid[:])
	if err != nil || v == nil {
		return nil, err
	}
	ta, err := unpackTxAddresses(v)
	if err != nil {
		return nil, fmt.Errorf("tx %s: %w", txid, err)
	}
	return ta, nil
}

// ReadManyTxAddresses is ReadTxAddresses for several txs: their rows, and
// then the rows their inputs spend from, are each read with one call for
// all (a MultiGet on RocksDB). out[i] is nil when the index does not hold
// txids[i].
func ReadManyTxAddresses(r Reader, txids []bchain.Hash) ([]*TxAddresses, error) {
	out, err := ReadManyTxOutputs(r, txids)
	if err != nil {
		return nil, err
	}
	var found []*TxAddresses
	for _, ta := range out {
		if ta != nil {
			found = append(found, ta)
		}
	}
	if err := fillInputs(r, found); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadManyTxOutputs is ReadTxOutputs for several txs in one read (a
// MultiGet on RocksDB); out[i] is nil when the index does not hold
// txids[i].
func ReadManyTxOutputs(r Reader, txids []bchain.Hash) ([]*TxAddresses, error) {
	keys := make([][]byte, len(txids))
	for i := range txids {
		keys[i] = txids[i][:]
	}
	vals, err := getMany(r, CFTxAddresses, keys)
	if err != nil {
		return nil, err
	}
	out := make([]*TxAddresses, len(txids))
	for i, v := range vals {
		if v == nil {
			continue
		}
		if out[i], err = unpackTxAddresses(v); err != nil {
			return nil, fmt.Errorf("tx %s: %w", txids[i], err)
		}
	}
	return out, nil
}

// TxPos is a confirmed tx's position: its block's height and its index in
// the block.
type TxPos struct{ Height, Index uint32 }

// ReadTxidsAt returns the txids at positions, reading each blockTxids row
// they lie in once (one MultiGet on RocksDB). A position the index does
// not hold is ErrCorrupt: callers take positions from other rows.
func ReadTxidsAt(r Reader, positions []TxPos) ([]bchain.Hash, error) {
	rows, txs := make([]AddrTxsAt, len(positions)), make([]AddrTx, len(positions))
	for i, p := range positions {
		txs[i].Index = p.Index
		rows[i] = AddrTxsAt{Height: p.Height, Txs: txs[i : i+1 : i+1]}
	}
	if err := FillRowsTxids(r, rows); err != nil {
		return nil, err
	}
	out := make([]bchain.Hash, len(rows))
	for i := range rows {
		out[i] = rows[i].Txs[0].Txid
	}
	return out, nil
}

// fillInputs sets the Inputs of tas, and their Prevouts' Txid and
// Coinbase, from the rows of the txs that created the spent outputs: the
// txids of those with one read of blockTxids rows, then their rows with
// one read.
func fillInputs(r Reader, tas []*TxAddresses) error {
	place := make(map[TxPos]int)
	var positions []TxPos // one per distinct previous tx
	for _, ta := range tas {
		ta.Inputs = make([]TxAddr, len(ta.Prevouts))
		if ta.Coinbase {
			continue
		}
		for i := range ta.Prevouts {
			k := TxPos{ta.Prevouts[i].Height, ta.Prevouts[i].Index}
			if _, ok := place[k]; !ok {
				place[k] = len(positions)
				positions = append(positions, k)
			}
		}
	}
	if len(positions) == 0 {
		return nil
	}
	txids, err := ReadTxidsAt(r, positions)
	if err != nil {
		return err
	}
	prev, err := ReadManyTxOutputs(r, txids)
	if err != nil {
		return err
	}
	for i, pt := range prev {
		if pt == nil {
			return fmt.Errorf("%w: no txAddresses row for tx %s, spent by an input", ErrCorrupt, txids[i])
		}
	}
	for _, ta := range tas {
		if ta.Coinbase {
			continue
		}
		for j := range ta.Prevouts {
			p := &ta.Prevouts[j]
			k := place[TxPos{p.Height, p.Index}]
			pt := prev[k]
			if int64(p.Vout) >= int64(len(pt.Outputs)) {
				return fmt.Errorf("%w: an input spends output %d of tx %s, which has %d", ErrCorrupt, p.Vout, txids[k], len(pt.Outputs))
			}
			p.Txid, p.Coinbase = txids[k], pt.Coinbase
			ta.Inputs[j] = pt.Outputs[p.Vout]
		}
	}
	return nil
}

// ReadSpends returns, for each spent output of txid, the spending input
// (nil when the tx is not in the index or none of its outputs is spent).
func ReadSpends(r Reader, txid bchain.Hash) (map[uint32]*Spend, error) {
	ta, err := ReadTxOutputs(r, txid)
	if err != nil || ta == nil {
		return nil, err
	}
	return ReadSpendsAt(r, ta.Height, ta.Index)
}

// ReadSpendsAt is ReadSpends for the tx at (height, index), for callers
// that already hold its txAddresses row.
func ReadSpendsAt(r Reader, height, index uint32) (map[uint32]*Spend, error) {
	var out map[uint32]*Spend
	err := r.iterate(CFSpends, nil, spendPrefix(height, index), func(k, v []byte) (bool, error) {
		_, _, vout, err := unpackSpendKey(k)
		if err != nil {
			return false, err
		}
		s, err := unpackSpend(v)
		if err != nil {
			return false, fmt.Errorf("spend of output %d of tx %d in block %d: %w", vout, index, height, err)
		}
		if out == nil {
			out = make(map[uint32]*Spend)
		}
		out[vout] = s
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	// The spenders' txids are read after the scan, not nested in it, and
	// together: the blockTxids rows they lie in, each once.
	rows, vouts := []AddrTxsAt{}, [][]uint32{}
	row := make(map[uint32]int) // spender height → its place in rows
	for vout, s := range out {
		i, ok := row[s.Height]
		if !ok {
			i = len(rows)
			row[s.Height] = i
			rows, vouts = append(rows, AddrTxsAt{Height: s.Height}), append(vouts, nil)
		}
		rows[i].Txs = append(rows[i].Txs, AddrTx{Index: s.Index})
		vouts[i] = append(vouts[i], vout)
	}
	if err := FillRowsTxids(r, rows); err != nil {
		return nil, fmt.Errorf("spenders of tx %d in block %d: %w", index, height, err)
	}
	for i := range rows {
		for j, t := range rows[i].Txs {
			out[vouts[i][j]].Txid = t.Txid
		}
	}
	return out, nil
}

// ReadBlockUndo returns the undo data of a block inside the rollback
// window, with the txids filled in from blockTxids: the block's own, and
// those of the txs that created the outputs its inputs spend.
func ReadBlockUndo(r Reader, height uint32) (BlockUndo, error) {
	v, err := r.get(CFBlockTxs, heightKey(height))
	if err != nil || v == nil {
		return nil, err
	}
	u, err := unpackBlockUndo(v)
	if err == nil {
		err = fillUndoTxids(r, height, u)
	}
	if err != nil {
		return nil, fmt.Errorf("undo of block %d: %w", height, err)
	}
	return u, nil
}

// fillUndoTxids resolves the positions in a block's undo data to txids.
func fillUndoTxids(r Reader, height uint32, u BlockUndo) error {
	txids, err := ReadBlockTxids(r, height)
	if err != nil {
		return err
	}
	if len(txids) != len(u) {
		return fmt.Errorf("%w: %d txs in the undo data, %d in blockTxids", ErrCorrupt, len(u), len(txids))
	}
	for i := range u {
		u[i].Txid = txids[i]
		for j := range u[i].Prevouts {
			p := &u[i].Prevouts[j]
			switch {
			case p.Height == height && p.Index < uint32(i):
				p.Txid = txids[p.Index] // an earlier tx of the same block
			case p.Height >= height:
				return fmt.Errorf("%w: tx %d input %d spends tx %d of block %d", ErrCorrupt, i, j, p.Index, p.Height)
			default:
				if p.Txid, err = txidAt(r, p.Height, p.Index); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ReadCachedTx returns a cached raw tx.
func ReadCachedTx(r Reader, txid bchain.Hash) ([]byte, error) {
	return r.get(CFTransactions, txCacheKey(txid))
}

// ReadCachedTxs is ReadCachedTx for several txs in one read (a MultiGet
// on RocksDB); out[i] is nil when the cache has no copy of txids[i].
func ReadCachedTxs(r Reader, txids []bchain.Hash) ([][]byte, error) {
	keys := make([][]byte, len(txids))
	for i, t := range txids {
		keys[i] = txCacheKey(t)
	}
	return getMany(r, CFTransactions, keys)
}

// WriteCachedTx stores a raw tx in the cache.
func (d *DB) WriteCachedTx(txid bchain.Hash, raw []byte) error {
	b := d.NewBatch()
	defer b.Destroy()
	b.put(CFTransactions, txCacheKey(txid), raw)
	// Cache writes are not block writes: they do not count for fault
	// injection and may be lost in a crash without harm.
	return d.writeUncounted(b)
}

// blockbookOrder turns a stored row (the block's txs in reverse block
// order; per tx its inputs, then its outputs) into the order Blockbook
// answers. Blockbook's connect visits the outputs of all the block's txs
// first, then the inputs of all of them, appending a tx to the address's
// list when it first meets it (addToAddressesMap), and packTxIndexes
// stores that list reversed, which reads return as stored. So the txs
// that only spend from the address come first, newest first, then those
// paying to it, newest first; a tx's indexes are its outputs, then its
// inputs, each ascending. It may reorder txs itself.
func blockbookOrder(txs []AddrTx) []AddrTx {
	// Stable partitions in place, each element looked at once: a page
	// orders ~30 rows of ~30 entries, where a stable sort's comparator
	// looked at each tx's indexes again per comparison.
	spendOnly := 0 // txs[:spendOnly] only spend from the address, in row order
	for i := range txs {
		// Stored: inputs (^vin, ascending vin) then outputs; Blockbook's:
		// outputs then inputs, each part in its order.
		ix, outs := txs[i].Indexes, 0
		for j, v := range ix {
			if v >= 0 {
				copy(ix[outs+1:j+1], ix[outs:j])
				ix[outs] = v
				outs++
			}
		}
		if outs == 0 { // pays nothing to the address
			t := txs[i]
			copy(txs[spendOnly+1:i+1], txs[spendOnly:i])
			txs[spendOnly] = t
			spendOnly++
		}
	}
	return txs
}

// IterateUtxos visits a descriptor's unspent outputs, newest first. The
// *Utxo fn sees is valid during the call only (one is reused).
func IterateUtxos(r Reader, desc bchain.AddrDesc, fn func(*Utxo) (bool, error)) error {
	var u Utxo
	return r.iterate(CFAddressUtxos, nil, descPrefix(desc, 0), func(k, v []byte) (bool, error) {
		if _, err := unpackUtxo(k, v, &u); err != nil {
			return false, err
		}
		return fn(&u)
	})
}

// ReadBlockFilter returns the stored Golomb filter of the block with the
// given hash: nil when filters are disabled, the filter is empty, or the
// block is not (or no longer) in the active chain.
func ReadBlockFilter(r Reader, hash bchain.Hash) ([]byte, error) {
	v, err := r.get(CFBlockFilter, blockFilterKey(hash))
	if err != nil || v == nil {
		return nil, err
	}
	if _, err := unpackBlockFilter(v); err != nil {
		return nil, fmt.Errorf("filter of block %s: %w", hash, err)
	}
	return v, nil
}

// ReadFilterParams returns the block filter parameters the index was built
// with; ok is false before the first NewUtxoIndex stored them.
func ReadFilterParams(r Reader) (p FilterParams, ok bool, err error) {
	v, err := r.get(CFDefault, stateKeyFilters)
	if err != nil || v == nil {
		return FilterParams{}, false, err
	}
	p, err = unpackFilterParams(v)
	return p, err == nil, err
}
