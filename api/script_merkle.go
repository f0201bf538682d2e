package api

import (
	"crypto/sha256"

	"github.com/openexplorer/blockbook/bchain"
)

// MerkleBranch returns the merkle branch of the tx at pos among txids (a
// block's txids in block order, display byte order as bchain.Hash holds
// them): the sibling at each level of Bitcoin's tree, from the leaves up,
// in display order, as Electrum's get_merkle and Esplora's merkle-proof
// list them. A level with an odd number of nodes pairs its last node with
// itself. It returns nil for a pos outside txids, and an empty branch for
// a block of one tx.
func MerkleBranch(txids []bchain.Hash, pos int) []bchain.Hash {
	if pos < 0 || pos >= len(txids) {
		return nil
	}
	level := make([][32]byte, 0, len(txids)+1)
	for i := range txids {
		level = append(level, reverse32(txids[i]))
	}
	branch := []bchain.Hash{}
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		branch = append(branch, bchain.Hash(reverse32(level[pos^1])))
		next := make([][32]byte, 0, len(level)/2+1)
		for i := 0; i < len(level); i += 2 {
			next = append(next, merkleParent(level[i], level[i+1]))
		}
		level, pos = next, pos/2
	}
	return branch
}

// MerkleRoot returns the root of the tree over txids in display order
// (the header's merkle root as explorers print it); zero for no txids.
func MerkleRoot(txids []bchain.Hash) bchain.Hash {
	if len(txids) == 0 {
		return bchain.Hash{}
	}
	root := reverse32(txids[0])
	for _, sib := range MerkleBranch(txids, 0) {
		root = merkleParent(root, reverse32(sib))
	}
	return bchain.Hash(reverse32(root))
}

// merkleParent is the double SHA-256 of two nodes in internal byte order.
func merkleParent(l, r [32]byte) [32]byte {
	var buf [64]byte
	copy(buf[:32], l[:])
	copy(buf[32:], r[:])
	first := sha256.Sum256(buf[:])
	return sha256.Sum256(first[:])
}

func reverse32(h [32]byte) [32]byte {
	for i, j := 0, 31; i < j; i, j = i+1, j-1 {
		h[i], h[j] = h[j], h[i]
	}
	return h
}
