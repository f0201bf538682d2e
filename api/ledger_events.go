package api

import (
	"context"
	"fmt"
	"sort"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// LedgerEvent is a block added to or removed from the index's chain, at
// Seq in the stream of such events.
type LedgerEvent struct {
	Seq     int64
	Removed bool
	Height  uint32
	Hash    bchain.Hash
}

// LedgerEvents derives the stream from the active chain and the removal
// log (db removals.go), read in one snapshot. Every block connected is
// an event and every removal another, in the order they happened: after
// i removals and with the block at h the tip, connected blocks number
// h+1+i, so removal i (of the block at h_i) is event h_i+1+2i, and an
// event s that is no removal, with k removals before it, adds the block
// at height s-2k. That block is the one the first later removal at that
// height took away, or the active chain's if none did. The stream depends
// on nothing but the index, so a restart and a replica give the same.
//
// Its length and the page's first removal are found by point reads
// (O(log n)); the rows are read from there on, one chunk at a time, as far
// as the page's removals and the first later removal at each added height
// need (a later removal at or below a height ends the search for it: the
// block there was removed by then). A height never removed again needs the
// rest of the log, read once per page: later events skip every chunk whose
// lowest removal is above their height.
func (s *core) LedgerEvents(ctx context.Context, offset int64, limit int) ([]LedgerEvent, int64, error) {
	v, err := s.newView()
	if err != nil {
		return nil, 0, err
	}
	defer v.release()
	n, err := db.CountRemovals(v.snap)
	if err != nil {
		return nil, 0, err
	}
	blocks := int64(0)
	if v.hasTip {
		blocks = int64(v.tip.Height) + 1
	}
	last := blocks + 2*int64(n) - 1
	if offset < 0 {
		offset = max(0, last-int64(limit)+1)
	}
	rm := &removalCursor{snap: v.snap, n: n}
	k, err := rm.firstAtOrAfter(offset)
	if err != nil {
		return nil, 0, err
	}
	out := []LedgerEvent{}
	for seq := offset; seq <= last && len(out) < limit; seq++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if k < n {
			r, err := rm.at(k)
			if err != nil {
				return nil, 0, err
			}
			if removedAt(k, r) == seq {
				out = append(out, LedgerEvent{Seq: seq, Removed: true, Height: r.Height, Hash: r.Hash})
				k++
				continue
			}
		}
		h := seq - 2*int64(k)
		ev := LedgerEvent{Seq: seq, Height: uint32(h)}
		hash, found, err := rm.removedLater(k, h)
		if err != nil {
			return nil, 0, err
		}
		if !found {
			var meta *db.BlockMeta
			if h >= 0 {
				if meta, err = db.ReadBlockMeta(v.snap, uint32(h)); err != nil {
					return nil, 0, err
				}
			}
			if meta == nil {
				return nil, 0, fmt.Errorf("%w: event %d adds height %d, which the chain does not hold", db.ErrCorrupt, seq, h)
			}
			hash = meta.Hash
		}
		ev.Hash = hash
		out = append(out, ev)
	}
	return out, last, nil
}

// removedAt is the event sequence of removal i.
func removedAt(i int, r db.Removal) int64 { return int64(r.Height) + 1 + 2*int64(i) }

// removalCursor reads the removal log of one snapshot in bounded parts:
// one chunk of rows at a time, and the lowest height of each chunk read,
// so a search for a low height skips chunks it has seen only higher
// removals in.
type removalCursor struct {
	snap *db.Snapshot
	n    int
	// rows[i-from] is removal i, for the chunk read last.
	from int
	rows []db.Removal
	// minHeight[c] is the lowest height among the removals of chunk c.
	minHeight map[int]uint32
}

// removalChunk is how many rows one read takes.
const removalChunk = 64

// at returns removal i (i < n).
func (c *removalCursor) at(i int) (db.Removal, error) {
	if i < c.from || i >= c.from+len(c.rows) {
		if err := c.read(i / removalChunk); err != nil {
			return db.Removal{}, err
		}
	}
	return c.rows[i-c.from], nil
}

// read replaces the held rows with chunk ci, and notes its lowest height.
func (c *removalCursor) read(ci int) error {
	c.from, c.rows = ci*removalChunk, c.rows[:0]
	low := uint32(1<<32 - 1)
	err := db.ScanRemovals(c.snap, c.from, func(j int, r db.Removal) (bool, error) {
		c.rows = append(c.rows, r)
		low = min(low, r.Height)
		return j+1 < c.from+removalChunk, nil
	})
	if err != nil {
		return err
	}
	if want := min(removalChunk, c.n-c.from); len(c.rows) < want {
		return fmt.Errorf("%w: removal %d of %d missing", db.ErrCorrupt, c.from+len(c.rows), c.n)
	}
	if c.minHeight == nil {
		c.minHeight = map[int]uint32{}
	}
	c.minHeight[ci] = low
	return nil
}

// firstAtOrAfter is the first removal whose event is at or after seq
// (removal events grow with the index: the removal after one at h is at
// h-1 or above), by bisection over point reads.
func (c *removalCursor) firstAtOrAfter(seq int64) (int, error) {
	var err error
	k := sort.Search(c.n, func(i int) bool {
		if err != nil {
			return true
		}
		r, ok, e := db.ReadRemoval(c.snap, i)
		if e == nil && !ok {
			e = fmt.Errorf("%w: removal %d of %d missing", db.ErrCorrupt, i, c.n)
		}
		if e != nil {
			err = e
			return true
		}
		return removedAt(i, r) >= seq
	})
	return k, err
}

// removedLater returns the hash of the block at height h that the first
// removal from index k on at that height took away. A removal below h
// before any at h cannot be (the tip went below h only by removing the
// block there), so the search stops at the first removal at or below h.
func (c *removalCursor) removedLater(k int, h int64) (bchain.Hash, bool, error) {
	for j := k; j < c.n; j++ {
		// A chunk seen to hold only higher removals cannot end the search.
		if low, ok := c.minHeight[j/removalChunk]; ok && int64(low) > h {
			j = (j/removalChunk+1)*removalChunk - 1
			continue
		}
		r, err := c.at(j)
		if err != nil {
			return bchain.Hash{}, false, err
		}
		switch {
		case int64(r.Height) == h:
			return r.Hash, true, nil
		case int64(r.Height) < h:
			return bchain.Hash{}, false, fmt.Errorf("%w: removal %d at height %d before any at %d, which the chain added", db.ErrCorrupt, j, r.Height, h)
		}
	}
	return bchain.Hash{}, false, nil
}
