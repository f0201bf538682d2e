package db

import (
	"fmt"
	"log/slog"

	"github.com/openexplorer/blockbook/bchain"
)

// RefillFunc fetches a block by height and hash from the node.
type RefillFunc func(height uint32, hash bchain.Hash) (*bchain.Block, error)

// chainIndex is what the index of every chain type shares: the database,
// the rollback window and the height column.
type chainIndex struct {
	db   *DB
	keep uint32
	log  *slog.Logger
}

func newChainIndex(d *DB, keep int) chainIndex {
	if keep < 1 {
		keep = 1
	}
	return chainIndex{db: d, keep: uint32(keep), log: d.log.With("subsystem", "index")}
}

// DB returns the underlying database.
func (x *chainIndex) DB() *DB { return x.db }

// Window is the number of most recent blocks that can be disconnected.
func (x *chainIndex) Window() uint32 { return x.keep }

// Tip returns the last connected block.
func (x *chainIndex) Tip() (Tip, bool, error) { return ReadTip(x.db) }

// BlockHash returns the hash of the indexed block at height.
func (x *chainIndex) BlockHash(height uint32) (bchain.Hash, bool, error) {
	m, err := ReadBlockMeta(x.db, height)
	if err != nil || m == nil {
		return bchain.Hash{}, false, err
	}
	return m.Hash, true, nil
}

// CompactInBackground compacts the index after a bulk load.
func (x *chainIndex) CompactInBackground() { x.db.CompactInBackground() }

// BlockTime returns the timestamp of the indexed block at height.
func (x *chainIndex) BlockTime(height uint32) (int64, error) {
	m, err := ReadBlockMeta(x.db, height)
	if err != nil {
		return 0, err
	}
	if m == nil {
		return 0, fmt.Errorf("no block at height %d", height)
	}
	return m.Time, nil
}

// tipForWrite returns the tip a block write builds on: a bulk round whose
// record is written but whose ingest failed is finished first, since the
// round's rows are already (partly) in the families and its tip is the
// real one. Every read a connect or disconnect makes comes after this.
func (x *chainIndex) tipForWrite() (Tip, bool, error) {
	if err := x.db.resumePending(); err != nil {
		return Tip{}, false, err
	}
	return ReadTip(x.db)
}

// checkNext fails unless blk extends the tip (or is block 0 of an empty
// index).
func (x *chainIndex) checkNext(blk *bchain.Block) error {
	tip, ok, err := x.tipForWrite()
	if err != nil {
		return err
	}
	return extendsTip(tip, ok, blk)
}

// extendsTip fails unless blk extends tip (ok: the index has a tip).
func extendsTip(tip Tip, ok bool, blk *bchain.Block) error {
	if ok && (blk.Height != tip.Height+1 || blk.Prev != tip.Hash) {
		return fmt.Errorf("%w: block %d %s (parent %s), tip %d %s", ErrNotNextBlock, blk.Height, blk.Hash, blk.Prev, tip.Height, tip.Hash)
	}
	if !ok && blk.Height != 0 {
		return fmt.Errorf("%w: empty index starts at block 0, got %d", ErrNotNextBlock, blk.Height)
	}
	return nil
}

// commitDisconnect makes the block under h the tip (or empties the index)
// in b, logs h's removal (removals.go) and writes b. The removal's number
// is counted on the written DB: exact because each disconnect writes its
// own batch here, by the index's single writer, so no removal logged in
// an unwritten batch can be missed.
func (x *chainIndex) commitDisconnect(b *Batch, h uint32) (Tip, bool, error) {
	removed, err := ReadBlockMeta(x.db, h)
	if err != nil {
		return Tip{}, false, err
	}
	if removed == nil {
		return Tip{}, false, fmt.Errorf("%w: no block at the tip's height %d", ErrCorrupt, h)
	}
	n, err := CountRemovals(x.db)
	if err != nil {
		return Tip{}, false, err
	}
	logRemoval(b, n, h, removed.Hash)
	var newTip Tip
	if h > 0 {
		prev, err := ReadBlockMeta(x.db, h-1)
		if err != nil {
			return Tip{}, false, err
		}
		if prev == nil {
			return Tip{}, false, fmt.Errorf("%w: no block at height %d below the tip", ErrCorrupt, h-1)
		}
		newTip = Tip{Height: h - 1, Hash: prev.Hash}
		writeTip(b, newTip)
	} else {
		deleteTip(b)
	}
	if err := x.db.write(b); err != nil {
		return Tip{}, false, err
	}
	return newTip, h > 0, nil
}
