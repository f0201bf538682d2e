package db

// functionSignatures: the function signatures that decode Ethereum-type
// txs' input data (parsedData, bchain/calldata), by 4-byte selector.
// Off-chain like fiatRates: no block connect or disconnect touches it,
// dumps leave it out, and opening adds it to an index that lacks it, so
// an index made before it needs no resync. Part of schema.go, kept apart
// for size.
//
//	u32be(selector) ‖ u32be(id) → text signature   (UTF-8, canonical:
//	                                                 "transfer(address,uint256)")
//	"dl"                        → lb(next) ‖ uv(done) ‖ uv(top)
//
// id is the 4-byte directory's id of the signature, or 0 for the
// standard contracts' ABIs (calldata.Standard), written at start; a
// selector's signatures are tried in key order, so the standard one first
// and then the directory's oldest first, as Blockbook's rows
// (selector ‖ id) are. "dl" is the downloader's place (fourbyte): next is
// the directory page to fetch ("" between walks), done the highest id
// of a completed walk, top the highest id the current walk has read.
// Signature rows are 8-byte keys and "dl" 2 bytes, so no selector's prefix
// scan meets it.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/openexplorer/blockbook/bchain/calldata"
)

var fourByteCursorKey = []byte("dl")

// maxFourByteURL bounds the stored next-page URL.
const maxFourByteURL = 4096

// ErrBadSignatureRow is a signature row that cannot be stored.
var ErrBadSignatureRow = errors.New("invalid function signature row")

// SignatureRow is one stored function signature.
type SignatureRow struct {
	Selector uint32
	ID       uint32 // 0: a standard ABI's
	Text     string
}

// FourByteCursor is the 4-byte directory downloader's place.
type FourByteCursor struct {
	Next string // the page a walk goes on with; "" between walks
	Done uint32 // the highest id of the last completed walk
	Top  uint32 // the highest id the current walk has read
}

func signatureKey(selector, id uint32) []byte {
	k := binary.BigEndian.AppendUint32(make([]byte, 0, 8), selector)
	return binary.BigEndian.AppendUint32(k, id)
}

func packFourByteCursor(c *FourByteCursor) []byte {
	e := encoder{}
	e.lenBytes([]byte(c.Next))
	e.uvarint(uint64(c.Done))
	e.uvarint(uint64(c.Top))
	return e.b
}

func unpackFourByteCursor(b []byte) (*FourByteCursor, error) {
	d := newDecoder("functionSignatures cursor", b)
	c := &FourByteCursor{Next: string(d.lenBytes(maxFourByteURL))}
	c.Done, c.Top = d.uvarint32(), d.uvarint32()
	return c, d.done()
}

// unpackSignatureRow checks a stored row: an 8-byte key and a signature
// text that parses.
func unpackSignatureRow(k, v []byte) (calldata.Signature, error) {
	if len(k) != 8 {
		return calldata.Signature{}, fmt.Errorf("%w: functionSignatures key of %d bytes", ErrCorrupt, len(k))
	}
	s, err := calldata.ParseSignature(string(v))
	if err != nil {
		return calldata.Signature{}, fmt.Errorf("%w: functionSignatures %x: %v", ErrCorrupt, k, err)
	}
	return s, nil
}

// MaxSignaturesPerSelector bounds the signatures tried for one selector:
// anyone can add colliding ones to the directory, and each is a decode
// attempt for every tx that calls the selector.
const MaxSignaturesPerSelector = 16

// ReadSignatures returns the signatures stored for a selector, in key
// order (the standard ABI's first, then by the directory's id), at most
// MaxSignaturesPerSelector of them.
func ReadSignatures(r Reader, selector uint32) ([]calldata.Signature, error) {
	var out []calldata.Signature
	prefix := binary.BigEndian.AppendUint32(nil, selector)
	err := r.iterate(CFFunctionSignatures, nil, prefix, func(k, v []byte) (bool, error) {
		s, err := unpackSignatureRow(k, v)
		if err != nil {
			return false, err
		}
		out = append(out, s)
		return len(out) < MaxSignaturesPerSelector, nil
	})
	return out, err
}

// ReadSignature returns the text stored under (selector, id), "" if none.
func ReadSignature(r Reader, selector, id uint32) (string, error) {
	v, err := r.get(CFFunctionSignatures, signatureKey(selector, id))
	return string(v), err
}

// ReadFourByteCursor returns the downloader's place (zero before its
// first page).
func ReadFourByteCursor(r Reader) (*FourByteCursor, error) {
	v, err := r.get(CFFunctionSignatures, fourByteCursorKey)
	if err != nil || v == nil {
		return &FourByteCursor{}, err
	}
	return unpackFourByteCursor(v)
}

// WriteSignatures stores rows (replacing the texts of existing keys) and,
// unless nil, the downloader's new place, in one atomic write: a page of
// the directory is stored with the cursor past it or not at all. A row
// whose text does not parse or does not hash to its selector writes
// nothing.
func (d *DB) WriteSignatures(rows []SignatureRow, cursor *FourByteCursor) error {
	b := d.NewBatch()
	defer b.Destroy()
	for _, r := range rows {
		if _, err := calldata.ParseSignature(r.Text); err != nil {
			return fmt.Errorf("%w: %v", ErrBadSignatureRow, err)
		}
		if sel := calldata.Selector(r.Text); sel != r.Selector {
			return fmt.Errorf("%w: %q has selector %08x, not %08x", ErrBadSignatureRow, r.Text, sel, r.Selector)
		}
		b.put(CFFunctionSignatures, signatureKey(r.Selector, r.ID), []byte(r.Text))
	}
	if cursor != nil {
		if len(cursor.Next) > maxFourByteURL {
			return fmt.Errorf("%w: next page URL of %d bytes", ErrBadSignatureRow, len(cursor.Next))
		}
		b.put(CFFunctionSignatures, fourByteCursorKey, packFourByteCursor(cursor))
	}
	return d.writeOffChain(b)
}

// WriteStandardSignatures stores the standard ABIs' signatures (id 0)
// that the index lacks or holds with another text; it writes nothing when
// all are there.
func (d *DB) WriteStandardSignatures() (int, error) {
	sigs, err := calldata.Standard()
	if err != nil {
		return 0, err
	}
	var rows []SignatureRow
	for _, s := range sigs {
		text := s.Text()
		sel := calldata.Selector(text)
		have, err := ReadSignature(d, sel, 0)
		if err != nil {
			return 0, err
		}
		if have != text {
			rows = append(rows, SignatureRow{Selector: sel, Text: text})
		}
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return len(rows), d.WriteSignatures(rows, nil)
}
