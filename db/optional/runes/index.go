package runes

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// Name is the index's name and state key (db.OptionalIndex).
const Name = "runes"

// Index is the runes index. It reads its own earlier rows (through the
// overlay, then the database) to connect a block; a disconnect replays
// the block's undo row, so it needs nothing from the node.
type Index struct {
	r   db.Reader
	net runestone.Network

	mu sync.Mutex
	ov overlay
}

var (
	_ db.OptionalIndex = (*Index)(nil)
	_ db.OwnRowsReader = (*Index)(nil)
	_ db.MemoryUser    = (*Index)(nil)
)

// New returns the runes index of a network over the database r.
func New(r db.Reader, net runestone.Network) *Index { return &Index{r: r, net: net} }

func (*Index) Name() string { return Name }

// RowsVersion is 2 since the per-tx ('t') and per-address history ('h')
// rows, 3 since the number rows ('i'), 4 since the holder counts ('k'):
// a datadir indexed with an earlier version lacks them for its blocks.
func (*Index) RowsVersion() byte    { return 4 }
func (*Index) CFs() []db.CF         { return []db.CF{db.CFRunes} }
func (*Index) ReadsNodeBlock() bool { return false }

// ReadsOwnRows says that a block's rows come from earlier ones
// (db.OwnRowsReader): a bulk load keeps compacting the family it reads.
func (*Index) ReadsOwnRows() bool { return true }

// get reads a row as the index has written it so far.
func (x *Index) get(k []byte) ([]byte, error) {
	if v, ok := x.ov.get(k); ok {
		return v, nil
	}
	return db.Get(x.r, db.CFRunes, k)
}

func (x *Index) settle(height uint32, connect bool) error {
	tip, ok, err := db.ReadTip(x.r)
	if err != nil {
		return err
	}
	x.ov.settle(tip.Height, ok, height, connect)
	return nil
}

// state is the ledger's view of the index.
type state struct{ x *Index }

func (s state) Balances(p Pos) ([]Balance, error) {
	v, err := s.x.get(outputKey(p))
	if err != nil || v == nil {
		return nil, err
	}
	return unpackBalances(v)
}

func (s state) Entry(id RuneID) (*Entry, error) { return readEntry(s.x.get, id) }

func (s state) IDByRune(r runestone.Rune) (RuneID, bool, error) { return idByRune(s.x.get, r) }

func (s state) RuneCount() (uint64, error) { return runeCount(s.x.get) }

// readEntry, idByRune and runeCount read rows through get (the index's
// overlay, or a snapshot).
func readEntry(get func([]byte) ([]byte, error), id RuneID) (*Entry, error) {
	if id.Block > 0xffffffff {
		return nil, nil
	}
	v, err := get(entryKey(id))
	if err != nil || v == nil {
		return nil, err
	}
	return unpackEntry(v)
}

func idByRune(get func([]byte) ([]byte, error), r runestone.Rune) (RuneID, bool, error) {
	v, err := get(nameKey(r))
	if err != nil || v == nil {
		return RuneID{}, false, err
	}
	id, err := unpackID(v)
	return id, err == nil, err
}

func runeCount(get func([]byte) ([]byte, error)) (uint64, error) {
	v, err := get(countKey)
	if err != nil || v == nil {
		return 0, err
	}
	n, k := binary.Uvarint(v)
	if k != len(v) {
		return 0, corrupt("count")
	}
	return n, nil
}

// ConnectBlock applies the block's runestones and writes the rows that
// changed, with an undo row holding the values they replaced.
func (x *Index) ConnectBlock(w db.RowWriter, b *db.OptionalBlock) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	blk, ib := b.Block, b.Indexed
	if blk == nil || len(blk.Txs) != len(ib.Txs) {
		return fmt.Errorf("block %d: no node block to read the runestones of", ib.Height)
	}
	if err := x.settle(ib.Height, true); err != nil {
		return err
	}
	if ib.Height < runestone.FirstRuneHeight(x.net) {
		return nil // before activation no block has runes (mainnet's first 840,000)
	}
	txs, descs := ledgerTxs(blk, ib)
	ch, err := ApplyBlock(state{x}, x.net, ib.Height, blk.Time, txs)
	if err != nil {
		return err
	}
	rows, err := x.rows(ch, descs)
	if err != nil {
		return err
	}
	op := x.ov.begin(ib.Height, true)
	if len(rows) == 0 {
		return nil
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	undo := make([]undoRow, 0, len(keys))
	for _, k := range keys {
		old, err := x.get([]byte(k))
		if err != nil {
			return err
		}
		undo = append(undo, undoRow{key: []byte(k), old: old})
		x.write(w, op, []byte(k), rows[k])
	}
	// Not in the overlay: only DisconnectBlock(h) reads it, once durable.
	w.Put(db.CFRunes, undoKey(ib.Height), packUndo(undo))
	return nil
}

func (x *Index) write(w db.RowWriter, op *ovOp, k, v []byte) {
	if v == nil {
		w.Delete(db.CFRunes, k)
	} else {
		w.Put(db.CFRunes, k, v)
	}
	x.ov.set(op, k, v)
}

// DisconnectBlock puts back what the block's undo row kept.
func (x *Index) DisconnectBlock(w db.RowWriter, b *db.OptionalBlock) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := b.Indexed.Height
	if err := x.settle(h, false); err != nil {
		return err
	}
	op := x.ov.begin(h, false)
	// The tip is h, so h's undo row is in the database (never in the
	// overlay).
	v, err := db.Get(x.r, db.CFRunes, undoKey(h))
	if err != nil || v == nil {
		return err
	}
	undo, err := unpackUndo(v)
	if err != nil {
		return fmt.Errorf("block %d: %w", h, err)
	}
	for _, u := range undo {
		x.write(w, op, u.key, u.old)
	}
	w.Delete(db.CFRunes, undoKey(h))
	return nil
}

// PendingBytes is the overlay's memory for the blocks at or above from
// (db.MemoryUser): a bulk load counts it against its round's budget.
func (x *Index) PendingBytes(from uint32) int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.ov.pendingBytes(from)
}

// ledgerTxs is the block as the ledger reads it, and the descriptors of
// the outputs it creates and spends (for the address rows).
func ledgerTxs(blk *bchain.Block, ib *db.IndexedBlock) ([]Tx, map[Pos]bchain.AddrDesc) {
	txs := make([]Tx, len(blk.Txs))
	descs := map[Pos]bchain.AddrDesc{}
	for i := range blk.Txs {
		btx, itx := &blk.Txs[i], &ib.Txs[i]
		t := Tx{Txid: btx.Txid, Index: uint32(i), Outputs: make([][]byte, len(btx.Vout))}
		for v := range btx.Vout {
			t.Outputs[v] = btx.Vout[v].Script
			if v < len(itx.Outputs) && itx.Outputs[v].Desc != nil {
				descs[Pos{ib.Height, uint32(i), uint32(v)}] = itx.Outputs[v].Desc
			}
		}
		for j := range btx.Vin {
			in := Input{Coinbase: itx.Coinbase, Witness: btx.Vin[j].Witness}
			if j < len(itx.Inputs) && !itx.Coinbase {
				p := itx.Inputs[j]
				in.Prev = Pos{p.Height, p.Index, p.Vout}
				in.PrevScript = p.Desc
				if p.Desc != nil {
					descs[in.Prev] = p.Desc
				}
			}
			t.Inputs = append(t.Inputs, in)
		}
		txs[i] = t
	}
	return txs, descs
}
