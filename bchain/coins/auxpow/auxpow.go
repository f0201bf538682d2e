// Package auxpow decodes merge-mined (AuxPoW) block headers, shared by the
// coins that accept proof of work done on a parent chain (Namecoin on
// Bitcoin, Dogecoin on Litecoin). A block whose version has the AuxPoW bit
// carries, after its 80-byte header, the parent chain's coinbase tx with its
// merkle branch, the merkle branch of the merge-mined chains, and the parent
// block's 80-byte header. The block's id is still the double SHA-256 of its
// own 80 bytes; the AuxPoW data only proves the work and is skipped when
// indexing.
package auxpow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// VersionFlag is the block version bit that marks a header followed by
// AuxPoW data. The chain id sits in the version's upper 16 bits.
const VersionFlag = 1 << 8

// MaxBranchLength bounds a merkle branch: a branch of n hashes proves a leaf
// in a tree of 2^n leaves, and both Namecoin and Dogecoin refuse chain
// branches longer than 30. The coinbase branch of a real parent block is
// far shorter (a 2^32-tx block cannot exist).
const MaxBranchLength = 32

// AuxPoW is the decoded merge-mining proof of a block.
type AuxPoW struct {
	// CoinbaseTx is the parent block's coinbase, whose script commits to
	// the merge-mined block.
	CoinbaseTx wire.MsgTx
	// BlockHash is the parent block's hash as the miner recorded it
	// (unused by consensus; often zero).
	BlockHash chainhash.Hash
	// CoinbaseBranch proves CoinbaseTx in the parent block's merkle tree;
	// CoinbaseIndex is its position (always 0 for a coinbase).
	CoinbaseBranch []chainhash.Hash
	CoinbaseIndex  int32
	// ChainBranch proves this chain's block hash in the merged-mining
	// tree; ChainIndex is its slot.
	ChainBranch []chainhash.Hash
	ChainIndex  int32
	// ParentHeader is the parent chain's 80-byte header whose work counts.
	ParentHeader wire.BlockHeader
}

// ErrMalformed is wrapped by every decoding error of AuxPoW data.
var ErrMalformed = errors.New("malformed auxpow")

// Decode reads the AuxPoW data at the start of raw (what follows a flagged
// 80-byte header) and returns it with its length in bytes.
func Decode(raw []byte) (*AuxPoW, int, error) {
	r := bytes.NewReader(raw)
	a := &AuxPoW{}
	if err := a.CoinbaseTx.Deserialize(r); err != nil {
		return nil, 0, fmt.Errorf("%w: parent coinbase tx: %v", ErrMalformed, err)
	}
	if _, err := io.ReadFull(r, a.BlockHash[:]); err != nil {
		return nil, 0, fmt.Errorf("%w: parent block hash: %v", ErrMalformed, err)
	}
	var err error
	if a.CoinbaseBranch, a.CoinbaseIndex, err = readBranch(r); err != nil {
		return nil, 0, fmt.Errorf("%w: coinbase merkle branch: %v", ErrMalformed, err)
	}
	if a.ChainBranch, a.ChainIndex, err = readBranch(r); err != nil {
		return nil, 0, fmt.Errorf("%w: chain merkle branch: %v", ErrMalformed, err)
	}
	if r.Len() < wire.MaxBlockHeaderPayload {
		return nil, 0, fmt.Errorf("%w: parent header: %d bytes left, want %d", ErrMalformed, r.Len(), wire.MaxBlockHeaderPayload)
	}
	if err := a.ParentHeader.Deserialize(r); err != nil {
		return nil, 0, fmt.Errorf("%w: parent header: %v", ErrMalformed, err)
	}
	return a, len(raw) - r.Len(), nil
}

// readBranch reads a merkle branch (a count and that many hashes) and the
// side mask that follows it.
func readBranch(r *bytes.Reader) ([]chainhash.Hash, int32, error) {
	n, err := wire.ReadVarInt(r, 0)
	if err != nil {
		return nil, 0, err
	}
	if n > MaxBranchLength {
		return nil, 0, fmt.Errorf("%d hashes, at most %d allowed", n, MaxBranchLength)
	}
	if uint64(r.Len()) < n*chainhash.HashSize+4 {
		return nil, 0, fmt.Errorf("%d hashes claimed, %d bytes left", n, r.Len())
	}
	branch := make([]chainhash.Hash, n)
	for i := range branch {
		_, _ = r.Read(branch[i][:]) // length checked above
	}
	var idx [4]byte
	_, _ = r.Read(idx[:])
	return branch, int32(binary.LittleEndian.Uint32(idx[:])), nil
}

// HasAuxPoW reports whether a block version announces AuxPoW data.
func HasAuxPoW(version int32) bool { return version&VersionFlag != 0 }

// ChainID is the merge-mined chain's id carried in a block version.
func ChainID(version int32) int32 { return version >> 16 }

// DecodeHeader is a btc.BlockCodec header decoder for merge-mined coins: it
// decodes the 80-byte header (stored as the block's header; the block hash
// is its double SHA-256) and, when the version has the AuxPoW flag, skips
// the AuxPoW data after checking it decodes. It returns the length of both.
func DecodeHeader(raw []byte, blk *bchain.Block) (int, error) {
	n, err := btc.DecodeHeader(raw, blk)
	if err != nil {
		return 0, err
	}
	if !HasAuxPoW(blk.Version) {
		return n, nil
	}
	_, m, err := Decode(raw[n:])
	if err != nil {
		return 0, err
	}
	return n + m, nil
}

// Codec is the block encoding of merge-mined coins whose txs are Bitcoin's.
var Codec = btc.BlockCodec{Header: DecodeHeader}

// ParseBlock decodes a serialized block of a merge-mined coin.
func ParseBlock(raw []byte) (*bchain.Block, error) { return btc.ParseBlockWith(raw, Codec) }

// BranchRoot is the merkle root that a branch proves for leaf at position
// index (bit i of index tells whether the leaf's side at level i is the
// right one), with Bitcoin's double SHA-256 tree hashing.
func BranchRoot(leaf chainhash.Hash, branch []chainhash.Hash, index int32) chainhash.Hash {
	h := leaf
	var buf [2 * chainhash.HashSize]byte
	for i, sib := range branch {
		if index>>uint(i)&1 != 0 {
			copy(buf[:32], sib[:])
			copy(buf[32:], h[:])
		} else {
			copy(buf[:32], h[:])
			copy(buf[32:], sib[:])
		}
		h = chainhash.DoubleHashH(buf[:])
	}
	return h
}
