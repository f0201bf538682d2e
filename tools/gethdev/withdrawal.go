package gethdev

import (
	"context"
	"errors"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// AddWithdrawal queues a beacon withdrawal of gwei to addr through geth's
// dev_addWithdrawal (Options.Withdrawals) and waits until a block holding
// it is the head; it returns that block's number. Geth seals up to 10
// queued withdrawals per block.
func (n *Node) AddWithdrawal(ctx context.Context, index, validator uint64, addr common.Address, gwei uint64) (uint64, error) {
	c := n.stack.Attach()
	defer c.Close()
	w := &types.Withdrawal{Index: index, Validator: validator, Address: addr, Amount: gwei}
	if err := c.CallContext(ctx, nil, "dev_addWithdrawal", w); err != nil {
		return 0, err
	}
	for {
		head := n.eth.BlockChain().CurrentBlock().Number.Uint64()
		for h := head; h > 0; h-- {
			b := n.eth.BlockChain().GetBlockByNumber(h)
			if b == nil || len(b.Withdrawals()) == 0 {
				continue
			}
			if last := b.Withdrawals()[len(b.Withdrawals())-1]; last.Index >= index {
				for _, x := range b.Withdrawals() {
					if x.Index == index {
						return h, nil
					}
				}
				continue
			}
			break // a block with older withdrawals only: ours is not sealed yet
		}
		select {
		case <-ctx.Done():
			return 0, errors.Join(ctx.Err(), errors.New("gethdev: withdrawal not sealed"))
		case <-time.After(20 * time.Millisecond):
		}
	}
}
