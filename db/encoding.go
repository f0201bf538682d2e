package db

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// ErrCorrupt marks bytes in the index that do not decode. It is never
// expected: seeing it means the database was damaged or written by another
// program, and the caller must stop rather than serve a wrong value.
var ErrCorrupt = errors.New("corrupt index record")

// maxDescLen bounds descriptors read back from the index. Consensus limits a
// script to 10,000 bytes; anything longer is corruption.
const maxDescLen = 10_000

// encoder appends primitives to a byte slice.
type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) u32be(v uint32)   { e.b = binary.BigEndian.AppendUint32(e.b, v) }

// varint writes a signed value zigzag-encoded, as binary.AppendVarint does.
func (e *encoder) varint(v int64) { e.uvarint(uint64(v<<1) ^ uint64(v>>63)) }
func (e *encoder) raw(p []byte)   { e.b = append(e.b, p...) }
func (e *encoder) hash(h bchain.Hash) {
	e.b = append(e.b, h[:]...)
}
func (e *encoder) lenBytes(p []byte) {
	e.uvarint(uint64(len(p)))
	e.b = append(e.b, p...)
}

// decoder reads primitives with a sticky error: after the first failure
// every read returns zero values, and err() reports what went wrong. Callers
// decode a whole record, then check once. Returned byte slices alias the
// input.
type decoder struct {
	b   []byte
	e   error
	rec string // record name, for error messages
}

func newDecoder(rec string, b []byte) *decoder { return &decoder{b: b, rec: rec} }

func (d *decoder) fail(format string, args ...any) {
	if d.e == nil {
		d.e = fmt.Errorf("%w: %s: %s", ErrCorrupt, d.rec, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

// uvarint rejects truncated, overlong (>64 bit) and non-minimal encodings so
// that every value has exactly one byte representation.
func (d *decoder) uvarint() uint64 {
	if d.e != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	if n > 1 && d.b[n-1] == 0 {
		d.fail("non-minimal varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length or item count and checks it against the bytes left,
// given the smallest size one item can take, so a corrupt count cannot make
// the caller allocate a huge slice.
func (d *decoder) count(minItemSize int) int {
	v := d.uvarint()
	if d.e != nil {
		return 0
	}
	if minItemSize < 1 {
		minItemSize = 1
	}
	if v > uint64(len(d.b)/minItemSize) {
		d.fail("count %d exceeds remaining %d bytes", v, len(d.b))
		return 0
	}
	return int(v)
}

func (d *decoder) u32be() uint32 {
	p := d.bytes(4)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint32(p)
}

// varint reads a zigzag-encoded signed value (one representation each,
// as uvarint).
func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) uvarint32() uint32 {
	v := d.uvarint()
	if v > 0xffffffff {
		d.fail("value %d exceeds 32 bits", v)
		return 0
	}
	return uint32(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.e != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("need %d bytes, have %d", n, len(d.b))
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) hash() (h bchain.Hash) {
	if p := d.bytes(32); p != nil {
		copy(h[:], p)
	}
	return h
}

func (d *decoder) lenBytes(limit int) []byte {
	n := d.uvarint()
	if d.e != nil {
		return nil
	}
	if n > uint64(limit) {
		d.fail("length %d exceeds limit %d", n, limit)
		return nil
	}
	return d.bytes(int(n))
}

// more reports whether bytes remain to be read and no error occurred, so that
// loops reading items until the end stop at the first error.
func (d *decoder) more() bool { return d.e == nil && len(d.b) > 0 }

// done reports the sticky error, or an error if bytes are left over.
func (d *decoder) done() error {
	if d.e == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.e
}
