package gethdev

import (
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/core/types"
)

// ImportBlocks inserts into n the blocks src sealed above n's head, as a
// peer's blocks would arrive: two unpeered nodes on the same genesis where
// only src seals (e.g. a private relay and the public node). n must not
// Commit afterwards: its beacon still builds on its own last block.
func (n *Node) ImportBlocks(src *Node) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return errors.New("gethdev: stopped")
	}
	head, _ := n.Head()
	top, _ := src.Head()
	var blocks types.Blocks
	for h := head + 1; h <= top; h++ {
		b := src.eth.BlockChain().GetBlockByNumber(h)
		if b == nil {
			return fmt.Errorf("gethdev: source has no block %d", h)
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil
	}
	if _, err := n.eth.BlockChain().InsertChain(blocks); err != nil {
		return fmt.Errorf("gethdev: importing blocks %d-%d: %w", head+1, top, err)
	}
	if got, _ := n.Head(); got != top {
		return fmt.Errorf("gethdev: head %d after importing up to %d", got, top)
	}
	if err := n.syncPool(); err != nil {
		return err
	}
	return n.waitTxIndex()
}
