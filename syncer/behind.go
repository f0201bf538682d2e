package syncer

import (
	"context"
	"fmt"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// A node whose tip is below the index's: mid-reorg, catching up, or
// current with the index's last blocks dropped (invalidateblock).

// settleDelay is how long a node tip below ours must stay put before it is
// believed (rather than taken for a reorg in progress).
const settleDelay = 500 * time.Millisecond

// nodeBehind reports whether the node's tip is a block of the index, i.e.
// the node's active chain is a prefix of the index's chain.
func (s *Syncer) nodeBehind(nodeHeight uint32, nodeHash bchain.Hash) (bool, error) {
	ours, ok, err := s.index.BlockHash(nodeHeight)
	if err != nil {
		return false, err
	}
	return ok && ours == nodeHash, nil
}

// maxTipAge is how old a node's tip may be for the node to count as
// current: Bitcoin Core's and btcd's own test (a node with an older tip
// is downloading blocks).
const maxTipAge = 24 * time.Hour

// nodeCatchingUp decides what a node whose chain is a prefix of the
// index's is doing: it returns why the node is taken to be catching up
// (restarted from an old copy, reindexing, btcd after a kill that lost
// unflushed blocks), to be waited for, or "" when the node is current and
// has dropped the index's last blocks itself (invalidateblock), so the
// index rolls back to the node's tip as Blockbook does. Blockbook rolls
// back in both cases; unwinding for a node that is catching up would undo
// blocks only to connect them again, and below the rollback window it
// would stop the sync.
func (s *Syncer) nodeCatchingUp(tip db.Tip, nodeHeight uint32) (string, error) {
	if depth := tip.Height - nodeHeight; depth > s.index.Window() {
		return fmt.Sprintf("%d blocks behind, more than the rollback window of %d", depth, s.index.Window()), nil
	}
	t, err := s.index.BlockTime(nodeHeight)
	if err != nil {
		return "", fmt.Errorf("time of the node's tip block %d: %w", nodeHeight, err)
	}
	if age := time.Since(time.Unix(t, 0)); age > maxTipAge {
		return fmt.Sprintf("its tip is %s old", age.Round(time.Minute)), nil
	}
	return "", nil
}

// nodeSettled reports whether the node's tip is still hash after a short
// wait: a node whose chain is shorter than the index may be mid-reorg.
func (s *Syncer) nodeSettled(ctx context.Context, hash bchain.Hash) (bool, error) {
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(settleDelay):
	}
	_, again, err := s.node.BestBlock(ctx)
	if err != nil {
		return false, fmt.Errorf("node tip: %w", err)
	}
	return again == hash, nil
}
