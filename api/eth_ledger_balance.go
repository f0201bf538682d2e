package api

import (
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// EthLedgerBalances reads the ETH balance from the node at the block (an
// archive node answers any height) and checks that the node's block at
// that height is the index's; token balances are the sums of the ERC-20
// transfers the index lists for desc up to the block, each block read
// from the node once (at most maxTokenHeights blocks).
func (s *EthService) EthLedgerBalances(ctx context.Context, desc bchain.AddrDesc, height uint32, hash bchain.Hash, tokens bool) (*EthBalances, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if err := v.checkBlock(height, hash); err != nil {
		return nil, err
	}
	wei, err := s.eth.Balance(ctx, desc, bchain.EthBlockTag(height))
	if err != nil {
		return nil, err
	}
	nodeHash, err := s.backend.Chain.BlockHash(ctx, height)
	if err != nil {
		return nil, err
	}
	if nodeHash != hash {
		return nil, fmt.Errorf("%w: the node's block %d is %s, the index's %s", ErrBlockChanged, height, nodeHash, hash)
	}
	out := &EthBalances{Wei: wei}
	if tokens {
		out.Tokens, err = s.tokenBalancesAt(ctx, v, desc, height)
	}
	return out, err
}

// tokenBalancesAt sums desc's ERC-20 transfers up to height, per contract
// (sorted by contract). A token without the index's metadata has an empty
// symbol and 0 decimals.
func (s *EthService) tokenBalancesAt(ctx context.Context, v *view, desc bchain.AddrDesc, height uint32) ([]EthTokenBalance, error) {
	type blockTxs struct {
		height uint32
		txids  map[bchain.Hash]bool
	}
	var blocks []blockTxs
	err := db.IterateEthAddrTxs(v.snap, desc, height, 0, func(row db.EthAddrTxsAt) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err // an address with millions of rows ends with the request
		}
		b := blockTxs{height: row.Height, txids: map[bchain.Hash]bool{}}
		for _, t := range row.Txs {
			if slices.ContainsFunc(t.Roles, func(r db.EthRole) bool { return r.Kind == db.EthRoleToken }) {
				b.txids[t.Txid] = true
			}
		}
		if len(b.txids) > 0 {
			if len(blocks) >= maxTokenHeights {
				return false, fmt.Errorf("%w: token transfers in more than %d blocks", ErrTooMany, maxTokenHeights)
			}
			blocks = append(blocks, b)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	r := newEthRenderer(s, v)
	sums := map[bchain.EthAddress]*big.Int{}
	for _, b := range blocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		meta, err := db.ReadBlockMeta(v.snap, b.height)
		if err != nil || meta == nil {
			return nil, fmt.Errorf("%w: no block %d below the tip (%v)", db.ErrCorrupt, b.height, err)
		}
		blk, err := r.block(ctx, meta.Hash, b.height)
		if err != nil {
			return nil, err
		}
		r.forget(meta.Hash) // one block in memory at a time, not up to maxTokenHeights
		for i := range blk.Eth.Txs {
			tx := &blk.Eth.Txs[i]
			if !b.txids[tx.Hash] {
				continue
			}
			for _, tt := range tx.Transfers {
				if tt.Standard != bchain.TokenERC20 || tt.Value == nil {
					continue
				}
				sum := sums[tt.Contract]
				if sum == nil {
					sum = new(big.Int)
					sums[tt.Contract] = sum
				}
				if string(tt.From[:]) == string(desc) {
					sum.Sub(sum, tt.Value)
				}
				if string(tt.To[:]) == string(desc) {
					sum.Add(sum, tt.Value)
				}
			}
		}
	}
	out := make([]EthTokenBalance, 0, len(sums))
	for c, sum := range sums {
		tb := EthTokenBalance{Info: bchain.EthContractInfo{Contract: c, Standard: bchain.TokenERC20}, Value: sum}
		ci, err := r.contract(c.AddrDesc())
		if err != nil {
			return nil, err
		}
		if ci != nil {
			tb.Info.Name, tb.Info.Symbol, tb.Info.Decimals = ci.Name, ci.Symbol, int(ci.Decimals)
		}
		out = append(out, tb)
	}
	slices.SortFunc(out, func(a, b EthTokenBalance) int { return slices.Compare(a.Info.Contract[:], b.Info.Contract[:]) })
	return out, nil
}
