package electrum

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/openexplorer/blockbook/bchain"
)

// hash256 is Bitcoin's double sha256.
func hash256(b []byte) [32]byte {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}

// internal turns a hash as shown (bchain.Hash) into the byte order it is
// hashed in.
func internal(h bchain.Hash) [32]byte {
	var r [32]byte
	for i := range h {
		r[i] = h[31-i]
	}
	return r
}

// shown renders a hash in internal byte order as clients show it.
func shown(h [32]byte) string {
	var r [32]byte
	for i := range h {
		r[i] = h[31-i]
	}
	return hex.EncodeToString(r[:])
}

// merkleBranch is the branch of leaf index to the root of leaves (an odd
// level pairs its last node with itself, as Bitcoin does), deepest pairing
// first, and the root.
func merkleBranch(leaves [][32]byte, index int) (branch [][32]byte, root [32]byte) {
	level := append([][32]byte(nil), leaves...)
	var buf [64]byte
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		branch = append(branch, level[index^1])
		next := make([][32]byte, 0, len(level)/2)
		for i := 0; i < len(level); i += 2 {
			copy(buf[:32], level[i][:])
			copy(buf[32:], level[i+1][:])
			next = append(next, hash256(buf[:]))
		}
		level, index = next, index/2
	}
	return branch, level[0]
}

func shownAll(hs [][32]byte) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = shown(h)
	}
	return out
}
