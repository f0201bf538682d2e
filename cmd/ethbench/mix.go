package main

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/tools/ethgen"
)

// block seals n txs: two NFT mints by the minter and one tx from each of
// n-2 distinct accounts.
func (g *gen) block(n int) error {
	mints := min(2, n)
	for range mints {
		if err := g.mintNFT(g.rng.IntN(len(g.acc)), false); err != nil {
			return err
		}
	}
	for _, s := range g.rng.Perm(len(g.acc))[:min(n-mints, len(g.acc))] {
		if err := g.op(s); err != nil {
			return err
		}
	}
	return g.commit()
}

// op sends one tx from account s: 33% ETH transfers, 25% ERC20, 10% ERC721,
// 7% ERC1155 single and 5% batch transfers, 15% Splitter calls (2-5
// internal transfers each), 2% calls whose inner transfer is reverted and
// 3% failing txs.
func (g *gen) op(s int) error {
	from := g.acc[s]
	j := g.rng.IntN(len(g.acc) - 1)
	if j >= s {
		j++ // anyone but the sender
	}
	to := g.acc[j].Addr
	switch r := g.rng.IntN(100); {
	case r < 33:
		o := ethgen.TxOpts{Type: txTypes[g.rng.IntN(3)], Value: finney(1 + g.rng.Int64N(1000))}
		return g.send(from, &to, nil, o, ethgen.Effects{}, "ETH transfer", false)
	case r >= 58 && r < 68 && len(g.owned[s]) > 0:
		id := g.owned[s][0]
		g.owned[s] = g.owned[s][1:]
		g.moves = append(g.moves, nftMove{id, j})
		method := "transferFrom"
		if r%2 == 0 {
			method = safeTransfer3
		}
		return g.call(from, g.nft, nil, nftC, tokens(erc721(g.nft, from.Addr, to, id)), "erc721 transfer", false, method, from.Addr, to, big.NewInt(id))
	case r < 68: // ERC20, also when the sender has no NFT to move
		v := ether(1 + g.rng.Int64N(1000))
		return g.call(from, g.token, nil, tokC, tokens(erc20(g.token, from.Addr, to, v)), "erc20 transfer", false, "transfer", to, v)
	case r < 75:
		id, v := 1+g.rng.Int64N(4), 1+g.rng.Int64N(10)
		return g.call(from, g.multi, nil, multiC, tokens(erc1155(g.multi, from.Addr, to, id, v)), "erc1155 transfer", false,
			"safeTransferFrom", from.Addr, to, big.NewInt(id), big.NewInt(v), []byte{})
	case r < 80:
		var ids, vals []*big.Int
		var tt []ethgen.TokenTransfer
		for _, k := range g.rng.Perm(4)[:2+g.rng.IntN(2)] {
			id, v := int64(k+1), 1+g.rng.Int64N(10)
			ids, vals = append(ids, big.NewInt(id)), append(vals, big.NewInt(v))
			tt = append(tt, erc1155(g.multi, from.Addr, to, id, v))
		}
		return g.call(from, g.multi, nil, multiC, tokens(tt...), "erc1155 batch transfer", false,
			"safeBatchTransferFrom", from.Addr, to, ids, vals, []byte{})
	case r < 95:
		var tos []common.Address
		for _, k := range g.rng.Perm(len(g.acc)) {
			if k != s {
				tos = append(tos, g.acc[k].Addr)
			}
			if len(tos) == 2+r%4 {
				break
			}
		}
		value := finney(10 + g.rng.Int64N(490))
		part := new(big.Int).Div(value, big.NewInt(int64(len(tos))))
		var eff ethgen.Effects
		for i, a := range tos {
			v := part
			if i == len(tos)-1 { // the Splitter gives the remainder to the last
				v = new(big.Int).Sub(value, new(big.Int).Mul(part, big.NewInt(int64(len(tos)-1))))
			}
			eff.Internal = append(eff.Internal, ethgen.InternalTransfer{Type: ethgen.InternalCall, From: g.splitter, To: a, Value: v})
		}
		return g.call(from, g.splitter, value, splitC, eff, "Splitter call (internal transfers)", false, "split", tos)
	case r < 97: // succeeds; the inner transfer is reverted and not indexed
		return g.call(from, g.reverter, finney(1+g.rng.Int64N(100)), revC, ethgen.Effects{}, "Reverter.tryInner", false, "tryInner", to)
	case r == 98:
		return g.call(from, g.reverter, finney(1+g.rng.Int64N(100)), revC, ethgen.Effects{Fails: true}, "failed (revert)", false, "sendThenRevert", to)
	default:
		v := ether(2_000_000_000) // above the supply
		return g.call(from, g.token, nil, tokC, ethgen.Effects{Fails: true}, "failed (ERC20 above balance)", false, "transfer", to, v)
	}
}
