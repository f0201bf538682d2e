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
// log (db.ReadRemovals), read in one snapshot. Every block connected is
// an event and every removal another, in the order they happened: after
// i removals and with the block at h the tip, connected blocks number
// h+1+i, so removal i (of the block at h_i) is event h_i+1+2i, and an
// event s that is no removal, with k removals before it, adds the block
// at height s-2k. That block is the one the first later removal at that
// height removed, or the active chain's if none did. The stream depends
// on nothing but the index, so a restart and a replica give the same.
func (s *core) LedgerEvents(ctx context.Context, offset int64, limit int) ([]LedgerEvent, int64, error) {
	v, err := s.newView()
	if err != nil {
		return nil, 0, err
	}
	defer v.release()
	rm, err := db.ReadRemovals(v.snap)
	if err != nil {
		return nil, 0, err
	}
	blocks := int64(0)
	if v.hasTip {
		blocks = int64(v.tip.Height) + 1
	}
	removedAt := func(i int) int64 { return int64(rm[i].Height) + 1 + 2*int64(i) }
	last := blocks + 2*int64(len(rm)) - 1
	if offset < 0 {
		offset = max(0, last-int64(limit)+1)
	}
	k := sort.Search(len(rm), func(i int) bool { return removedAt(i) >= offset })
	out := []LedgerEvent{}
	for seq := offset; seq <= last && len(out) < limit; seq++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if k < len(rm) && removedAt(k) == seq {
			out = append(out, LedgerEvent{Seq: seq, Removed: true, Height: rm[k].Height, Hash: rm[k].Hash})
			k++
			continue
		}
		h := seq - 2*int64(k)
		ev := LedgerEvent{Seq: seq, Height: uint32(h)}
		found := false
		for j := k; j < len(rm) && !found; j++ {
			if int64(rm[j].Height) == h {
				ev.Hash, found = rm[j].Hash, true
			}
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
			ev.Hash = meta.Hash
		}
		out = append(out, ev)
	}
	return out, last, nil
}
