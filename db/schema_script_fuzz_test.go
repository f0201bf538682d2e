package db

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func FuzzUnpackBlockMetaHeader(f *testing.F) {
	f.Add(packBlockMeta(&BlockMeta{Hash: bchain.Hash{2}, Time: 1700000000, TxCount: 3000, Size: 1 << 20, Header: bytes.Repeat([]byte{7}, 80)}))
	f.Add(append(packBlockMeta(&BlockMeta{Hash: bchain.Hash{2}}), 0)) // an empty header is not canonical
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackBlockMeta(b)
		checkCanonical(t, b, err, func() []byte { return packBlockMeta(v) })
	})
}

func FuzzUnpackBlockTxids(f *testing.F) {
	f.Add(blockTxidKey(800000, 46), bytes.Repeat([]byte{7}, 32))
	f.Add(blockTxidKey(1, 0), bytes.Repeat([]byte{7}, 32*txidsPerRow))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, key, val []byte) {
		h, c, err := unpackBlockTxidKey(key)
		checkCanonical(t, key, err, func() []byte { return blockTxidKey(h, c) })
		txids, err := unpackBlockTxids(val)
		checkCanonical(t, val, err, func() []byte {
			var b []byte
			for _, id := range txids {
				b = append(b, id[:]...)
			}
			return b
		})
	})
}

func FuzzUnpackBalanceKey(f *testing.F) {
	desc := []byte{0x00, 0x14, 1, 2, 3}
	f.Add(balanceKey(desc))
	f.Add(desc)
	f.Add(make([]byte, scriptHashPrefixLen))
	f.Fuzz(func(t *testing.T, key []byte) {
		v, err := unpackBalanceKey(key)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error is not ErrCorrupt: %v", err)
			}
			return
		}
		if h := sha256.Sum256(v); !bytes.Equal(append(h[:scriptHashPrefixLen:scriptHashPrefixLen], v...), key) {
			t.Fatalf("accepted %x", key)
		}
	})
}

func TestScriptRowsRoundTrip(t *testing.T) {
	m := &BlockMeta{Hash: bchain.Hash{9}, Time: 5, TxCount: 2, Size: 300, Header: bytes.Repeat([]byte{1}, 80)}
	got, err := unpackBlockMeta(packBlockMeta(m))
	if err != nil || !bytes.Equal(got.Header, m.Header) || got.Hash != m.Hash {
		t.Fatalf("block meta with header: %+v, %v", got, err)
	}
	noHeader := packBlockMeta(&BlockMeta{Hash: bchain.Hash{9}})
	if _, err := unpackBlockMeta(append(noHeader, 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty header accepted: %v", err)
	}
	for _, n := range []int{0, 33, 32 * (txidsPerRow + 1)} {
		if _, err := unpackBlockTxids(make([]byte, n)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("blockTxids value of %d bytes accepted: %v", n, err)
		}
	}
	if _, _, err := unpackBlockTxidKey(make([]byte, 7)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("7-byte blockTxids key accepted: %v", err)
	}
	desc := bchain.AddrDesc{0x51}
	other := balanceKey(bchain.AddrDesc{0x52})
	if _, err := unpackBalanceKey(append(other[:scriptHashPrefixLen:scriptHashPrefixLen], desc...)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("descriptor under a wrong hash accepted: %v", err)
	}
	if _, err := unpackBalanceKey(desc); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a bare descriptor (format 3's key) accepted: %v", err)
	}
}
