package syncer

import (
	"context"
	"errors"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// GroupIndex is an index that connects several consecutive blocks in one
// write (the Ethereum-type one): the catch-up's bulk connect.
type GroupIndex interface {
	NewGroup() (*db.EthGroup, error)
}

var _ GroupIndex = (*db.EthIndex)(nil)

const (
	// groupMaxBlocks caps the blocks of one write.
	groupMaxBlocks = 64
	// groupMaxBytes caps the bytes of one write's batch, and the
	// estimated bytes of its blocks held for the listeners until written.
	groupMaxBytes = 8 << 20
)

// groupCatchUp connects from..to in groups: a group is written when it is
// full or when the next block is not fetched yet, so the tip moves on
// while the connect side waits, and at the end whatever stopped the
// catch-up (done, a fetch error, a block not extending the tip). The
// listeners hear of each block once its group is written.
func (s *Syncer) groupCatchUp(ctx context.Context, gi GroupIndex, from, to uint32, prog *progress) error {
	g, err := gi.NewGroup()
	if err != nil {
		return err
	}
	defer g.Close()
	var done []*bchain.Block
	var held int64
	flush := func() error {
		if len(done) == 0 {
			return nil
		}
		if err := g.Flush(); err != nil {
			return err
		}
		for _, blk := range done {
			s.m.connected.Inc()
			s.m.txs.Add(float64(blk.TxCount()))
			s.tipChanged(BlockEvent{Tip: db.Tip{Height: blk.Height, Hash: blk.Hash}, HasTip: true, Connected: blk})
		}
		clear(done)
		done, held = done[:0], 0
		return nil
	}
	err = s.fetchParallelWithin(ctx, from, to, s.cfg.MemoryBudget, func(blk *bchain.Block) error {
		if err := g.ConnectBlock(blk); err != nil {
			return err
		}
		done, held = append(done, blk), held+blockBytes(blk)
		prog.block(blk)
		if len(done) >= groupMaxBlocks || held >= groupMaxBytes || g.Bytes() >= groupMaxBytes {
			return flush()
		}
		return nil
	}, flush)
	if ferr := flush(); ferr != nil && !errors.Is(err, ferr) {
		err = errors.Join(err, ferr)
	}
	return err
}
