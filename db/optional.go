package db

// optional.go: the optional indexes of Bitcoin-type chains (address
// prefixes, pushdata hashes, Silent Payments tweaks, Runes), modelled on
// btcd's blockchain/indexers. Each one implements
// OptionalIndex; the UtxoIndex calls every enabled one inside the same
// atomic write as the core connect and disconnect, and feeds their rows
// into the same bulk rounds, so an optional index is as crash-safe and
// reorg-exact as the core families without a branch of its own in them.

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
)

// OptionalIndex is an index an operator switches on or off.
//
// ConnectBlock's rows must depend only on the block and on the index's
// state at the tip the block extends: that is what makes a disconnect the
// exact mirror of a connect and a bulk load equal to per-block connects (a
// bulk round takes ConnectBlock's rows as they are, sorted with the
// round's). Most indexes read nothing. One that reads its own earlier
// rows (runes: an output's runes come from the outputs it spends) must
// see the rows it has handed out that are not in the database yet (a bulk
// round's, a batch not yet written), keep them itself (runes' overlay),
// and say so with OwnRowsReader.
type OptionalIndex interface {
	// Name names the index in logs and messages, and is its state key in
	// the default family: written (value 1, or VersionedOptional's
	// version) when the index is switched on
	// over an empty index, so that an index built without it can refuse
	// it (see UtxoIndex.EnableOptional).
	Name() string
	// CFs are the column families the index writes. A bulk load defers
	// their compaction like its write-only families', unless the index
	// reads them (OwnRowsReader).
	CFs() []CF
	// ConnectBlock writes the rows of connecting b.
	ConnectBlock(w RowWriter, b *OptionalBlock) error
	// DisconnectBlock writes the rows that undo ConnectBlock(b).
	DisconnectBlock(w RowWriter, b *OptionalBlock) error
}

// OptionalBlock is what an optional index sees of a block being connected
// or disconnected. Indexed carries the positions and the resolved spent
// outputs: Indexed.Txs[i].Inputs[j] is the output Block.Txs[i].Vin[j]
// spends (its descriptor is the output script, except that P2PK scripts
// are filed under the key's P2PKH one).
type OptionalBlock struct {
	// Block is the node's block, with scripts and witnesses. On a
	// disconnect it is fetched again by hash (RefillFunc) when an enabled
	// index says it reads it (NodeBlockReader); otherwise it is nil there.
	Block   *bchain.Block
	Indexed *IndexedBlock
}

// NodeBlockReader is implemented by an optional index whose rows come
// from the node's block (scripts, witnesses), which the index itself does
// not keep: disconnecting a block then asks the node for it by hash, as
// the refill of the rollback window does.
type NodeBlockReader interface {
	ReadsNodeBlock() bool
}

// OwnRowsReader is implemented by an optional index that reads its own
// rows while connecting a block, at random places, every block. A bulk
// load does not defer the compaction of its families (BulkLoader.writeOnly):
// with up to hundreds of level-0 files, each read that finds nothing (most
// do) would probe every file's filter.
type OwnRowsReader interface {
	ReadsOwnRows() bool
}

// MemoryUser is implemented by an optional index that holds memory for
// blocks whose rows the database does not hold yet (runes' overlay). A
// bulk load counts what it holds for the blocks at or above from (the
// round being built) against that round's share of the memory budget
// (-syncmemory), with the round's rows.
type MemoryUser interface {
	PendingBytes(from uint32) int64
}

// BalanceEvent says what a write does to a descriptor's addressBalance row.
type BalanceEvent uint8

const (
	// BalanceCreated: the descriptor gets its first tx.
	BalanceCreated BalanceEvent = iota
	// BalanceDeleted: the descriptor loses its last tx (a disconnect).
	BalanceDeleted
	// BalanceMayCreate: a bulk round writes a merge operand for a balance
	// it does not know, so the row may be new (or may exist already).
	BalanceMayCreate
)

// BalanceFollower is implemented by an optional index whose rows follow
// the addressBalance rows (one row per address with txs), such as the
// address-prefix index. The core calls it in the write that creates or
// deletes a balance row, per block and in bulk rounds alike.
type BalanceFollower interface {
	BalanceRow(w RowWriter, desc bchain.AddrDesc, ev BalanceEvent)
}

// RowWriter takes an optional index's rows into the write they belong to:
// a block's batch or a bulk round.
type RowWriter interface {
	Put(cf CF, key, value []byte)
	Delete(cf CF, key []byte)
}

// rowsWriter appends rows to a block's rows (blockRows), which a batch or
// a bulk round then takes.
type rowsWriter struct{ r *blockRows }

func (w rowsWriter) Put(cf CF, k, v []byte) {
	w.r.muts = append(w.r.muts, mutation{cf: cf, key: k, value: v})
}

func (w rowsWriter) Delete(cf CF, k []byte) {
	w.r.muts = append(w.r.muts, mutation{cf: cf, key: k, del: true})
}

// batchWriter writes rows into a batch.
type batchWriter struct{ b *Batch }

func (w batchWriter) Put(cf CF, k, v []byte) { w.b.put(cf, k, v) }
func (w batchWriter) Delete(cf CF, k []byte) { w.b.del(cf, k) }

// roundWriter writes rows into a bulk round's runs.
type roundWriter struct{ r *round }

func (w roundWriter) Put(cf CF, k, v []byte) {
	if v == nil {
		v = []byte{}
	}
	w.r.cfs[cf].add(k, v, opPut)
}

func (w roundWriter) Delete(cf CF, k []byte) { w.r.cfs[cf].add(k, nil, opDelete) }

// optionalSet is the index manager: the enabled optional indexes, in the
// order they were enabled.
type optionalSet struct {
	all       []OptionalIndex
	followers []BalanceFollower
}

func (s *optionalSet) add(idx OptionalIndex) {
	s.all = append(s.all, idx)
	if f, ok := idx.(BalanceFollower); ok {
		s.followers = append(s.followers, f)
	}
}

func (s *optionalSet) connect(rows *blockRows, blk *bchain.Block, ib *IndexedBlock) error {
	ob := &OptionalBlock{Block: blk, Indexed: ib}
	for _, idx := range s.all {
		if err := idx.ConnectBlock(rowsWriter{rows}, ob); err != nil {
			return fmt.Errorf("%s index, block %d: %w", idx.Name(), ib.Height, err)
		}
	}
	return nil
}

func (s *optionalSet) disconnect(rows *blockRows, blk *bchain.Block, ib *IndexedBlock) error {
	ob := &OptionalBlock{Block: blk, Indexed: ib}
	for _, idx := range s.all {
		if err := idx.DisconnectBlock(rowsWriter{rows}, ob); err != nil {
			return fmt.Errorf("%s index, disconnecting block %d: %w", idx.Name(), ib.Height, err)
		}
	}
	return nil
}

// readsNodeBlock reports whether a disconnect must fetch the node's block.
func (s *optionalSet) readsNodeBlock() bool {
	return slices.ContainsFunc(s.all, func(idx OptionalIndex) bool {
		r, ok := idx.(NodeBlockReader)
		return ok && r.ReadsNodeBlock()
	})
}

func (s *optionalSet) balanceRow(w RowWriter, desc bchain.AddrDesc, ev BalanceEvent) {
	for _, f := range s.followers {
		f.BalanceRow(w, desc, ev)
	}
}

// pendingBytes sums the enabled indexes' memory for the blocks at or
// above from (MemoryUser).
func (s *optionalSet) pendingBytes(from uint32) int64 {
	var n int64
	for _, idx := range s.all {
		if m, ok := idx.(MemoryUser); ok {
			n += m.PendingBytes(from)
		}
	}
	return n
}

// writeOnlyCFs lists the column families of the enabled indexes that do
// not read their own rows.
func (s *optionalSet) writeOnlyCFs() []CF {
	var out []CF
	for _, idx := range s.all {
		if r, ok := idx.(OwnRowsReader); ok && r.ReadsOwnRows() {
			continue
		}
		out = append(out, idx.CFs()...)
	}
	return out
}

// EnableOptional switches an optional index on (want) or leaves it off,
// and reports whether it is on. The index's state key (its Name) marks a
// datadir that keeps its rows: it is written only on an empty index, so an
// index that holds blocks without the mark refuses the switch
// (ErrIncompatible: its earlier blocks' rows would be missing; building
// them needs a reindex into an empty datadir), and a marked index keeps
// the rows whatever want says, so they never go stale. A read-only DB
// only reports the mark.
func (x *UtxoIndex) EnableOptional(idx OptionalIndex, want bool) (enabled bool, err error) {
	key := []byte(idx.Name())
	marked, err := x.db.get(CFDefault, key)
	if err != nil {
		return false, err
	}
	if marked == nil && !want {
		return false, nil
	}
	if x.OptionalEnabled(idx.Name()) {
		return true, nil // already on: the first one stays
	}
	version := optionalVersion(idx)
	if marked != nil && (len(marked) != 1 || marked[0] != version) {
		return false, fmt.Errorf("%w: %s keeps the %s index's rows of version %v, this binary writes version %d; "+
			"its rows are incomplete for this version: point -datadir at an empty directory to reindex",
			ErrIncompatible, x.db.path, idx.Name(), marked, version)
	}
	if marked == nil {
		if n, err := x.db.countKeys(CFHeight, 1); err != nil {
			return false, err
		} else if n > 0 {
			return false, fmt.Errorf("%w: %s was indexed without the %s index; "+
				"building it requires a reindex: point -datadir at an empty directory (or leave the index off)",
				ErrIncompatible, x.db.path, idx.Name())
		}
		if x.db.ReadOnly() {
			return false, nil
		}
		b := x.db.NewBatch()
		defer b.Destroy()
		b.put(CFDefault, key, []byte{version})
		if err := x.db.writeUncounted(b); err != nil {
			return false, err
		}
	}
	x.opt.add(idx)
	return true, nil
}

// VersionedOptional is an optional index whose rows changed after it first
// shipped: its state key holds RowsVersion, and a datadir marked with
// another version refuses it, since its earlier blocks lack the new rows.
type VersionedOptional interface {
	RowsVersion() byte
}

// optionalVersion is the version the state key of idx holds (1 unless
// the index says otherwise).
func optionalVersion(idx OptionalIndex) byte {
	if v, ok := idx.(VersionedOptional); ok {
		return v.RowsVersion()
	}
	return 1
}

// OptionalEnabled reports whether an optional index of this name is on.
func (x *UtxoIndex) OptionalEnabled(name string) bool {
	return slices.ContainsFunc(x.opt.all, func(o OptionalIndex) bool { return o.Name() == name })
}

// OptionalMarked reports whether the datadir r reads keeps the rows of the
// optional index of this name (its state key is set).
func OptionalMarked(r Reader, name string) (bool, error) {
	v, err := r.get(CFDefault, []byte(name))
	return v != nil, err
}

// IsAddedOptional reports whether the column family is an optional
// index's that an index made before it may lack: opening adds it empty
// (its state key is unset, so the index stays off there).
func (c CF) IsAddedOptional() bool { return cfInfos[c].optional }

// Get reads one row for an optional index's accessors (nil: absent).
func Get(r Reader, cf CF, key []byte) ([]byte, error) { return r.get(cf, key) }

// Iterate visits the rows of cf at or after start (prefix when start is
// nil) that begin with prefix, in key order, until fn returns false; for
// an optional index's accessors. k and v are valid during the call only.
func Iterate(r Reader, cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return r.iterate(cf, start, prefix, fn)
}

// SpentOutputsAt calls fn with the position (tx index, vout) of every
// output created in the block at height that a confirmed tx spends: the
// spends rows under the height, in key order. An optional index whose
// answers follow later spends reads them here instead of keeping a copy
// that reorgs would have to undo.
func SpentOutputsAt(r Reader, height uint32, fn func(index, vout uint32)) error {
	return r.iterate(CFSpends, nil, heightKey(height), func(k, _ []byte) (bool, error) {
		_, index, vout, err := unpackSpendKey(k)
		if err != nil {
			return false, err
		}
		fn(index, vout)
		return true, nil
	})
}

// Uvarint reads a minimal LEB128 varint, as the db package's decoder does,
// for an optional index's decoders: a truncated, over-long or non-minimal
// one is ErrCorrupt.
func Uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("%w: bad varint", ErrCorrupt)
	}
	if n > 1 && b[n-1] == 0 {
		return 0, nil, fmt.Errorf("%w: non-minimal varint", ErrCorrupt)
	}
	return v, b[n:], nil
}
