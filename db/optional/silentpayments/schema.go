// Package silentpayments is the optional index of Silent Payments (BIP352)
// tweaks (-silentpaymentsindex, "silent_payments_index" in
// blockchaincfg.json): for every tx with a taproot output and an eligible
// input, the tweak input_hash·A a light wallet needs to find its payments
// with one EC multiplication per tx (internal/bip352), and the tx's taproot
// outputs, whose spent state (from the core spends rows) gives the
// cut-through answers. It is a db.OptionalIndex; its rows live in the
// silentPayments column family (docs/schema.md, "silentPayments").
package silentpayments

// schema.go: the silentPayments rows. Notation as in db/schema.go.

import (
	"encoding/binary"
	"fmt"

	"github.com/openexplorer/blockbook/db"
)

// A row is one eligible tx of a confirmed block:
//
//	silentPayments: u32be(height) ‖ u32be(index) → tweak(33) ‖ uv(n) ‖ n × (uv(vout) ‖ uv(value))
//
// index is the tx's position in its block (blockTxids resolves it to the
// txid), tweak the compressed point input_hash·A, and the list the tx's
// taproot outputs (n ≥ 1) in vout order with their values. The rows are
// write-once: which outputs are spent later is read from the spends rows
// (db.SpentOutputsAt), which reorgs already keep exact, so the cut-through
// value (the highest unspent taproot value, 0 once all are spent) is
// exact at every tip without rows of its own to undo.

// keyLen is the length of a key.
const keyLen = 8

// TweakLen is the length of a tweak.
const TweakLen = 33

// maxOutputs bounds a row's output count: a tx cannot have more outputs
// than fit a block (9 bytes each at least), which keeps a corrupt count from
// allocating.
const maxOutputs = 1 << 20

// Output is one taproot output of an eligible tx.
type Output struct {
	Vout  uint32
	Value uint64
}

// Row is one eligible tx.
type Row struct {
	Height, Index uint32
	Tweak         [TweakLen]byte
	Outputs       []Output
}

// rowKey is the key of the tx at (height, index).
func rowKey(height, index uint32) []byte {
	k := make([]byte, 0, keyLen)
	k = binary.BigEndian.AppendUint32(k, height)
	return binary.BigEndian.AppendUint32(k, index)
}

// heightPrefix is the prefix of a block's rows.
func heightPrefix(height uint32) []byte { return binary.BigEndian.AppendUint32(nil, height) }

// packValue builds a row's value.
func packValue(r *Row) []byte {
	v := make([]byte, 0, TweakLen+1+len(r.Outputs)*8)
	v = append(v, r.Tweak[:]...)
	v = binary.AppendUvarint(v, uint64(len(r.Outputs)))
	for _, o := range r.Outputs {
		v = binary.AppendUvarint(v, uint64(o.Vout))
		v = binary.AppendUvarint(v, o.Value)
	}
	return v
}

// unpackRow decodes a row, refusing short keys and values, tweaks that are
// not compressed points' encodings, empty or unordered output lists,
// out-of-range or non-minimal varints and trailing bytes.
func unpackRow(key, val []byte) (Row, error) {
	var r Row
	if len(key) != keyLen {
		return r, corrupt("key of %d bytes", len(key))
	}
	r.Height, r.Index = binary.BigEndian.Uint32(key), binary.BigEndian.Uint32(key[4:])
	if len(val) < TweakLen+1 {
		return r, corrupt("value of %d bytes", len(val))
	}
	if val[0] != 2 && val[0] != 3 {
		return r, corrupt("tweak prefix %#x", val[0])
	}
	copy(r.Tweak[:], val)
	n, rest, err := uvarint(val[TweakLen:])
	if err != nil {
		return r, err
	}
	if n == 0 || n > maxOutputs || n > uint64(len(rest)/2) {
		return r, corrupt("%d outputs in %d bytes", n, len(rest))
	}
	r.Outputs = make([]Output, n)
	for i := range r.Outputs {
		var vout, value uint64
		if vout, rest, err = uvarint(rest); err != nil {
			return r, err
		}
		if value, rest, err = uvarint(rest); err != nil {
			return r, err
		}
		if vout > 0xffffffff || (i > 0 && uint32(vout) <= r.Outputs[i-1].Vout) {
			return r, corrupt("output %d: vout %d out of order or range", i, vout)
		}
		r.Outputs[i] = Output{Vout: uint32(vout), Value: value}
	}
	if len(rest) != 0 {
		return r, corrupt("%d trailing bytes", len(rest))
	}
	return r, nil
}

// uvarint reads a minimal varint (db.Uvarint), naming the family in errors.
func uvarint(b []byte) (uint64, []byte, error) {
	v, rest, err := db.Uvarint(b)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", "silentPayments", err)
	}
	return v, rest, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: silentPayments: %s", db.ErrCorrupt, fmt.Sprintf(format, args...))
}
