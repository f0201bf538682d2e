package ethmempool

import (
	"bytes"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
)

// Token calls whose transfer a pending tx announces: the selector, the
// standard and where the from, to, id and value words are (-1: absent;
// from absent means the sender).
var tokenCalls = []struct {
	selector            [4]byte
	standard            bchain.TokenStandard
	from, to, id, value int
	words               int // argument words the call needs
}{
	{[4]byte{0xa9, 0x05, 0x9c, 0xbb}, bchain.TokenERC20, -1, 0, -1, 1, 2}, // transfer(address,uint256)
	{[4]byte{0x23, 0xb8, 0x72, 0xdd}, bchain.TokenERC20, 0, 1, -1, 2, 3},  // transferFrom(address,address,uint256)
	{[4]byte{0x42, 0x84, 0x2e, 0x0e}, bchain.TokenERC721, 0, 1, 2, -1, 3}, // safeTransferFrom(address,address,uint256)
	{[4]byte{0xb8, 0x8d, 0x4f, 0xde}, bchain.TokenERC721, 0, 1, 2, -1, 4}, // safeTransferFrom(address,address,uint256,bytes)
	{[4]byte{0xf2, 0x42, 0x43, 0x2a}, bchain.TokenERC1155, 0, 1, 2, 3, 5}, // safeTransferFrom(address,address,uint256,uint256,bytes)
}

// PendingTransfers decodes the token transfer a pending tx's calldata asks
// for (transferFrom on an ERC721 contract decodes as ERC20: the selector is
// the same, and without the contract's code the two cannot be told apart).
// Malformed calldata yields nothing.
func PendingTransfers(tx *bchain.EthTx) []bchain.TokenTransfer {
	if tx.To == nil || len(tx.Data) < 4 {
		return nil
	}
	for _, c := range tokenCalls {
		if !bytes.Equal(tx.Data[:4], c.selector[:]) || len(tx.Data) < 4+32*c.words {
			continue
		}
		word := func(i int) []byte { return tx.Data[4+32*i : 4+32*(i+1)] }
		addr := func(i int) (bchain.EthAddress, bool) {
			var a bchain.EthAddress
			w := word(i)
			if !bytes.Equal(w[:12], make([]byte, 12)) {
				return a, false // not an address: the call would revert
			}
			copy(a[:], w[12:])
			return a, true
		}
		t := bchain.TokenTransfer{Standard: c.standard, Contract: *tx.To, From: tx.From, Value: big.NewInt(1)}
		var ok bool
		if c.from >= 0 {
			if t.From, ok = addr(c.from); !ok {
				return nil
			}
		}
		if t.To, ok = addr(c.to); !ok {
			return nil
		}
		if c.id >= 0 {
			t.TokenID = new(big.Int).SetBytes(word(c.id))
		}
		if c.value >= 0 {
			t.Value = new(big.Int).SetBytes(word(c.value))
		}
		return []bchain.TokenTransfer{t}
	}
	return nil
}

// parties lists the addresses a pending tx touches, each once.
func parties(tx *bchain.EthTx, transfers []bchain.TokenTransfer) []bchain.AddrDesc {
	var out []bchain.AddrDesc
	seen := map[bchain.EthAddress]bool{}
	add := func(a bchain.EthAddress) {
		if a != (bchain.EthAddress{}) && !seen[a] {
			seen[a] = true
			out = append(out, a.AddrDesc())
		}
	}
	add(tx.From)
	if tx.To != nil {
		add(*tx.To)
	}
	for _, t := range transfers {
		add(t.From)
		add(t.To)
	}
	return out
}
