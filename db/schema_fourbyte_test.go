package db

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain/calldata"
)

func sigTexts(sigs []calldata.Signature) []string {
	out := make([]string, len(sigs))
	for i, s := range sigs {
		out[i] = s.Text()
	}
	return out
}

// A selector's signatures read back standard first, then by id; bad rows
// write nothing; the rows stay out of dumps; the cursor round-trips.
func TestFunctionSignatures(t *testing.T) {
	d := openEthTestDB(t)
	std, err := calldata.Standard()
	if err != nil {
		t.Fatal(err)
	}
	n, err := d.WriteStandardSignatures()
	if err != nil || n != len(std) || n < 15 {
		t.Fatalf("standard signatures: %d of %d, %v", n, len(std), err)
	}
	if n, err := d.WriteStandardSignatures(); n != 0 || err != nil {
		t.Fatalf("again: %d %v", n, err)
	}
	const transfer = "transfer(address,uint256)"
	sel := calldata.Selector(transfer)
	rows := []SignatureRow{{Selector: sel, ID: 900, Text: transfer}, {Selector: sel, ID: 7, Text: transfer}}
	if err := d.WriteSignatures(rows, &FourByteCursor{Next: "https://x/?page=2", Top: 900}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSignatures(d, sel)
	if err != nil || !slices.Equal(sigTexts(got), []string{transfer, transfer, transfer}) {
		t.Fatalf("read %v %v", sigTexts(got), err)
	}
	if c, err := ReadFourByteCursor(d); err != nil || *c != (FourByteCursor{Next: "https://x/?page=2", Top: 900}) {
		t.Fatalf("cursor %+v %v", c, err)
	}
	if got, err := ReadSignatures(d, 0x01020304); err != nil || got != nil {
		t.Fatalf("unknown selector: %v %v", got, err)
	}
	for _, bad := range []SignatureRow{
		{Selector: sel, ID: 1, Text: "transfer(address, uint256)"}, // not canonical: does not parse
		{Selector: sel + 1, ID: 1, Text: transfer},                 // not its selector
	} {
		if err := d.WriteSignatures([]SignatureRow{{Selector: calldata.Selector("ok()"), ID: 5, Text: "ok()"}, bad}, nil); !errors.Is(err, ErrBadSignatureRow) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if got, _ := ReadSignatures(d, calldata.Selector("ok()")); got != nil {
		t.Fatalf("a refused batch wrote %v", sigTexts(got))
	}
	var dump bytes.Buffer
	if err := Dump(d, d.cfs, &dump); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(dump.Bytes(), []byte(CFFunctionSignatures.String())) {
		t.Fatal("signatures in the dump")
	}
}

// A corrupt row or cursor is an error, never a wrong value.
func TestFunctionSignaturesCorrupt(t *testing.T) {
	d := openEthTestDB(t)
	b := d.NewBatch()
	b.put(CFFunctionSignatures, signatureKey(1, 1), []byte("not a signature"))
	b.put(CFFunctionSignatures, fourByteCursorKey, []byte{0x05, 'a'})
	if err := d.writeOffChain(b); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	if _, err := ReadSignatures(d, 1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("row: %v", err)
	}
	if _, err := ReadFourByteCursor(d); !errors.Is(err, ErrCorrupt) {
		t.Errorf("cursor: %v", err)
	}
}

func FuzzUnpackFourByteCursor(f *testing.F) {
	f.Add(packFourByteCursor(&FourByteCursor{Next: "https://www.4byte.directory/api/v1/signatures/?page=3", Done: 1, Top: 99}))
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := unpackFourByteCursor(b)
		if err != nil {
			return
		}
		if again := packFourByteCursor(c); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, c, again)
		}
	})
}

func FuzzUnpackSignatureRow(f *testing.F) {
	f.Add(signatureKey(0xa9059cbb, 0), []byte("transfer(address,uint256)"))
	f.Add([]byte("dl"), []byte("x"))
	f.Fuzz(func(t *testing.T, k, v []byte) {
		s, err := unpackSignatureRow(k, v)
		if err != nil {
			return
		}
		if len(k) != 8 || s.Text() != string(v) {
			t.Fatalf("%x → %q read as %q", k, v, s.Text())
		}
	})
}

// At most MaxSignaturesPerSelector signatures are read for a selector,
// the first in key order (anyone can add colliding ones to the directory).
func TestSignaturesPerSelectorBounded(t *testing.T) {
	d := openEthTestDB(t)
	const text = "approve(address,uint256)"
	sel := calldata.Selector(text)
	var rows []SignatureRow
	for id := uint32(1); id <= MaxSignaturesPerSelector+10; id++ {
		rows = append(rows, SignatureRow{Selector: sel, ID: id, Text: text})
	}
	if err := d.WriteSignatures(rows, nil); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSignatures(d, sel)
	if err != nil || len(got) != MaxSignaturesPerSelector {
		t.Fatalf("%d signatures read, want %d (%v)", len(got), MaxSignaturesPerSelector, err)
	}
}
