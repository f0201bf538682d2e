package esplora

import (
	"crypto/sha256"
	"encoding/binary"
	"math/big"
	"slices"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// Merkle proofs and block headers. Hashes are kept as txids show them;
// hashing works on the reversed (internal) byte order.

func internal(h bchain.Hash) [32]byte {
	b := [32]byte(h)
	slices.Reverse(b[:])
	return b
}

func display(b [32]byte) bchain.Hash {
	slices.Reverse(b[:])
	return bchain.Hash(b)
}

func hashPair(l, r [32]byte) [32]byte {
	first := sha256.Sum256(append(l[:], r[:]...))
	return sha256.Sum256(first[:])
}

// merkleBranch is the sibling path of the leaf at pos from the bottom up
// (Electrum's get_merkle; an odd level pairs its last node with itself).
func merkleBranch(txids []bchain.Hash, pos int) []bchain.Hash {
	level := make([][32]byte, 0, len(txids)+1)
	for _, t := range txids {
		level = append(level, internal(t))
	}
	var branch []bchain.Hash
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		branch = append(branch, display(level[pos^1]))
		next := make([][32]byte, len(level)/2)
		for i := range next {
			next[i] = hashPair(level[2*i], level[2*i+1])
		}
		level, pos = next, pos/2
	}
	return branch
}

// merkleBlockProof serializes bitcoind's merkleblock (BIP37) for one tx:
// the header, the tx count, the hashes and flag bits of the partial tree.
func merkleBlockProof(blk *api.EsploraBlock, pos int) []byte {
	n := len(blk.Txids)
	leaves := make([][32]byte, n)
	for i, t := range blk.Txids {
		leaves[i] = internal(t)
	}
	width := func(h uint) int { return (n + (1 << h) - 1) >> h }
	var hashAt func(h uint, p int) [32]byte
	hashAt = func(h uint, p int) [32]byte {
		if h == 0 {
			return leaves[p]
		}
		l := hashAt(h-1, 2*p)
		r := l
		if 2*p+1 < width(h-1) {
			r = hashAt(h-1, 2*p+1)
		}
		return hashPair(l, r)
	}
	var hashes [][32]byte
	var bits []bool
	var build func(h uint, p int)
	build = func(h uint, p int) {
		parentOfMatch := pos>>h == p
		bits = append(bits, parentOfMatch)
		if h == 0 || !parentOfMatch {
			hashes = append(hashes, hashAt(h, p))
			return
		}
		build(h-1, 2*p)
		if 2*p+1 < width(h-1) {
			build(h-1, 2*p+1)
		}
	}
	height := uint(0)
	for width(height) > 1 {
		height++
	}
	build(height, 0)

	out := headerBytes(blk)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	out = appendVarInt(out, uint64(len(hashes)))
	for _, h := range hashes {
		out = append(out, h[:]...)
	}
	flags := make([]byte, (len(bits)+7)/8)
	for i, b := range bits {
		if b {
			flags[i/8] |= 1 << (i % 8)
		}
	}
	out = appendVarInt(out, uint64(len(flags)))
	return append(out, flags...)
}

func appendVarInt(b []byte, v uint64) []byte {
	switch {
	case v < 0xfd:
		return append(b, byte(v))
	case v <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(b, 0xfd), uint16(v))
	case v <= 0xffffffff:
		return binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xff), v)
}

// headerBytes serializes a block's 80-byte header.
func headerBytes(blk *api.EsploraBlock) []byte {
	out := make([]byte, 0, 80)
	out = binary.LittleEndian.AppendUint32(out, uint32(blk.Version))
	prev, root := internal(blk.Prev), internal(blk.MerkleRoot)
	out = append(out, prev[:]...)
	out = append(out, root[:]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(blk.Time))
	out = binary.LittleEndian.AppendUint32(out, blk.Bits)
	return binary.LittleEndian.AppendUint32(out, blk.Nonce)
}

// difficulty is the target of mainnet's difficulty 1 over the block's
// target (rust-bitcoin's difficulty_float, which electrs shows).
func difficulty(bits uint32) float64 {
	target := compactToBig(bits)
	if target.Sign() <= 0 {
		return 0
	}
	diff1 := compactToBig(0x1d00ffff)
	q := new(big.Float).Quo(new(big.Float).SetInt(diff1), new(big.Float).SetInt(target))
	f, _ := q.Float64()
	return f
}

func compactToBig(c uint32) *big.Int {
	mantissa := int64(c & 0x007fffff)
	exp := uint(c >> 24)
	n := big.NewInt(mantissa)
	if exp <= 3 {
		n.Rsh(n, 8*(3-exp))
	} else {
		n.Lsh(n, 8*(exp-3))
	}
	if c&0x00800000 != 0 {
		n.Neg(n)
	}
	return n
}
