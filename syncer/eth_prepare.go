package syncer

import (
	"context"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// BlockPreparer is an index that needs more from the node than the block
// itself before it can connect it: the Ethereum-type index asks for the
// token metadata of contracts it meets for the first time. The worker
// prepares each block in its fetch step, right after fetching it (in
// parallel during catch-up), so that connecting a block never waits on
// the node and a node failure fails the block before anything is written.
type BlockPreparer interface {
	PrepareBlock(ctx context.Context, blk *bchain.Block) error
}

// fetchBlock fetches the block at height from the node and, for an index
// that needs it, prepares it for connect.
func (s *Syncer) fetchBlock(ctx context.Context, height uint32) (*bchain.Block, error) {
	hash, err := s.node.BlockHash(ctx, height)
	if err != nil {
		return nil, err
	}
	blk, err := s.node.Block(ctx, hash, height)
	if err != nil {
		return nil, err
	}
	if p, ok := s.index.(BlockPreparer); ok {
		if err := p.PrepareBlock(ctx, blk); err != nil {
			return nil, err
		}
	}
	return blk, nil
}

// The Ethereum-type index is prepared in the fetch step.
var _ BlockPreparer = (*db.EthIndex)(nil)
