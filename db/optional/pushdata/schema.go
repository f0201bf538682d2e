// Package pushdata is the optional index of pushdata hashes (-pushdataindex,
// "pushdata_index" in blockchaincfg.json): the sha256 of every data push of
// 20, 32, 33 or 65 bytes in a tx's output scripts, input scripts and
// witnesses, including the pushes inside P2SH redeem scripts and P2WSH
// witness scripts, to the txs and positions that carry it. A wallet finds
// with it every tx that used a public key or a hash, whatever the script
// type (P2PK, bare multisig, keys inside P2SH and P2WSH scripts), which the
// address index alone cannot answer. It is a db.OptionalIndex; its rows
// live in the pushdata column family (docs/schema.md, "pushdata").
package pushdata

// schema.go: the pushdata rows. Notation as in db/schema.go.

import (
	"encoding/binary"
	"fmt"

	"github.com/openexplorer/blockbook/db"
)

// A row is one push at one position of a confirmed tx:
//
//	pushdata: sha256(push) ‖ u32be(height) ‖ uv(index) ‖ uv(n << 1 | input) → (empty)
//
// index is the tx's index in its block (the compact position the
// addresses rows use; blockTxids resolves it to the txid), n the output or
// input number, input 1 for an input (its script or witness) and 0 for an
// output. A prefix scan on the hash lists its txs oldest first. The rows
// are write-once: a connect puts them and the disconnect of the same block
// deletes the same keys. A push found twice at one position is one row.

// hashLen is the length of a key's hash.
const hashLen = 32

// maxKeyLen bounds a key: the hash, the height and two 5-byte varints
// (index and code fit in 32 and 33 bits).
const maxKeyLen = hashLen + 4 + 5 + 5

// Ref is one row: a push's hash at one position.
type Ref struct {
	Hash   [32]byte
	Height uint32
	Index  uint32 // the tx's index in its block
	N      uint32 // output or input number
	Input  bool
}

// rowKey builds the key of r.
func rowKey(r Ref) []byte {
	k := make([]byte, 0, maxKeyLen)
	k = append(k, r.Hash[:]...)
	k = binary.BigEndian.AppendUint32(k, r.Height)
	k = binary.AppendUvarint(k, uint64(r.Index))
	code := uint64(r.N) << 1
	if r.Input {
		code |= 1
	}
	return binary.AppendUvarint(k, code)
}

// unpackRow decodes a pushdata row, refusing truncated, over-long and
// non-minimal varints, out-of-range numbers, trailing bytes and a value.
func unpackRow(key, val []byte) (Ref, error) {
	var r Ref
	if len(val) != 0 {
		return r, corrupt("value of %d bytes", len(val))
	}
	if len(key) < hashLen+4+2 || len(key) > maxKeyLen {
		return r, corrupt("key of %d bytes", len(key))
	}
	copy(r.Hash[:], key)
	r.Height = binary.BigEndian.Uint32(key[hashLen:])
	rest := key[hashLen+4:]
	index, rest, err := uvarint(rest)
	if err != nil {
		return r, err
	}
	code, rest, err := uvarint(rest)
	if err != nil {
		return r, err
	}
	if len(rest) != 0 {
		return r, corrupt("%d trailing bytes", len(rest))
	}
	if index > 0xffffffff || code>>1 > 0xffffffff {
		return r, corrupt("index %d or code %d out of range", index, code)
	}
	r.Index, r.N, r.Input = uint32(index), uint32(code>>1), code&1 == 1
	return r, nil
}

// uvarint reads a minimal varint (db.Uvarint), naming the family in errors.
func uvarint(b []byte) (uint64, []byte, error) {
	v, rest, err := db.Uvarint(b)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", "pushdata", err)
	}
	return v, rest, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: pushdata: %s", db.ErrCorrupt, fmt.Sprintf(format, args...))
}
