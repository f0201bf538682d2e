package db

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// cfRows across several reference chunks: sorted gives each live key's
// last value in key order, and a row marked dead through row(i) is gone.
func TestCfRowsAcrossChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 7))
	var c cfRows
	type want struct{ value []byte }
	last := map[string]want{}
	for i := range 2*refChunk + 123 {
		k := make([]byte, 4+rng.IntN(12))
		binary.BigEndian.PutUint32(k, uint32(rng.IntN(3*refChunk))) // repeats
		v := []byte(fmt.Sprint(i))
		if got := c.add(k, v, opPut); got != i {
			t.Fatalf("add %d returned %d", i, got)
		}
		dead := rng.IntN(10) == 0
		if dead {
			c.row(i).dead = true
		}
		if !dead { // a dead row hides nothing: an earlier live one still wins
			last[string(k)] = want{value: v}
		}
	}
	if c.len() != 2*refChunk+123 || len(c.refs) != 3 {
		t.Fatalf("%d rows in %d chunks", c.len(), len(c.refs))
	}
	rows := c.sorted(false)
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(rows) != len(keys) {
		t.Fatalf("%d sorted rows, want %d", len(rows), len(keys))
	}
	for i, r := range rows {
		if string(c.key(r)) != keys[i] || !bytes.Equal(c.value(r), last[keys[i]].value) {
			t.Fatalf("row %d: %x=%s, want %x=%s", i, c.key(r), c.value(r), keys[i], last[keys[i]].value)
		}
	}
}

// BenchmarkCfRowsAdd adds a round's worth of rows to one family.
func BenchmarkCfRowsAdd(b *testing.B) {
	k := make([]byte, 20)
	v := make([]byte, 12)
	for b.Loop() {
		var c cfRows
		for i := range 1 << 20 {
			binary.BigEndian.PutUint32(k, uint32(i))
			c.add(k, v, opPut)
		}
	}
}

// sorted orders keys that share their 8-byte prefix, or are shorter than
// it (zero-padded prefixes: "a" and "a\x00" share one), byte by byte, and
// of equal keys keeps the last added.
func TestCfRowsSortedSharedPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 8))
	var c cfRows
	last := map[string][]byte{}
	for i := range 5000 {
		k := make([]byte, rng.IntN(13))
		for j := range k {
			k[j] = []byte{0, 1, 0xff}[rng.IntN(3)]
		}
		if rng.IntN(2) == 0 && len(k) > 0 {
			k[0] = byte(rng.IntN(256)) // some spread, for the radix passes
		}
		v := []byte(fmt.Sprint(i))
		c.add(k, v, opPut)
		last[string(k)] = v
	}
	keys := slices.Sorted(maps.Keys(last))
	rows := c.sorted(false)
	if len(rows) != len(keys) {
		t.Fatalf("%d sorted rows, want %d", len(rows), len(keys))
	}
	for i, r := range rows {
		if string(c.key(r)) != keys[i] || !bytes.Equal(c.value(r), last[keys[i]]) {
			t.Fatalf("row %d: %x=%s, want %x=%s", i, c.key(r), c.value(r), keys[i], last[keys[i]])
		}
	}
}

// BenchmarkCfRowsSorted sorts a round's worth of one family's rows:
// addresses-like keys, a few addresses with many rows.
func BenchmarkCfRowsSorted(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c cfRows
	k := make([]byte, 26)
	whale := []byte("\x00\x14the whale's 20 bytes")
	for i := range 1 << 19 {
		if rng.IntN(4) == 0 {
			copy(k, whale)
		} else {
			for j := range 22 {
				k[j] = byte(rng.Uint32())
			}
		}
		binary.BigEndian.PutUint32(k[22:], uint32(i/200))
		c.add(k, k[:6], opPut)
	}
	for b.Loop() {
		c.sorted(false)
	}
}
