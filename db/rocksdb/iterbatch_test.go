package rocksdb

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Batched iteration sees what stepping one entry at a time saw: every
// entry of a prefix in order both ways, across batches of growing size,
// entries larger than the pooled buffer, a stop by the visitor after any
// entry (and nested scans inside a visit, each with its own buffer).
func TestIterateBatched(t *testing.T) {
	e, err := openEngine(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}()
	cf := db.CFDefault
	type kv struct{ k, v string }
	var want []kv // prefix "p", in key order
	b := e.NewBatch()
	for i := range 1000 {
		v := fmt.Sprint("v", i)
		switch i {
		case 3, 400:
			v = string(bytes.Repeat([]byte{byte(i)}, 3*iterBuf/2)) // larger than a pooled buffer
		case 700:
			v = string(bytes.Repeat([]byte{7}, iterBuf-20)) // nearly fills one
		}
		k := fmt.Sprintf("p%04d", i)
		b.Put(cf, []byte(k), []byte(v))
		want = append(want, kv{k, v})
	}
	b.Put(cf, []byte("o"), []byte("before"))
	b.Put(cf, []byte("q"), []byte("after"))
	if err := e.Write(b, false); err != nil {
		t.Fatal(err)
	}
	scan := func(reverse bool, stopAfter int) []kv {
		var got []kv
		fn := func(k, v []byte) (bool, error) {
			if len(got) == 5 { // a nested scan in the middle of a batch
				var inner int
				if err := e.Iterate(cf, nil, []byte("p00"), func(_, _ []byte) (bool, error) { inner++; return true, nil }); err != nil || inner != 100 {
					t.Errorf("nested scan: %d entries, %v", inner, err)
				}
			}
			got = append(got, kv{string(k), string(v)})
			return len(got) != stopAfter, nil
		}
		var err error
		if reverse {
			err = e.IterateReverse(cf, nil, []byte("p"), fn)
		} else {
			err = e.Iterate(cf, nil, []byte("p"), fn)
		}
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	back := slices.Clone(want)
	slices.Reverse(back)
	for _, stop := range []int{1, 2, 3, 4, 255, 256, 257, 511, 999, -1} {
		n := len(want)
		if stop > 0 {
			n = stop
		}
		if got := scan(false, stop); !slices.Equal(got, want[:n]) {
			t.Errorf("forward, stop after %d: %d entries, want %d (or different ones)", stop, len(got), n)
		}
		if got := scan(true, stop); !slices.Equal(got, back[:n]) {
			t.Errorf("reverse, stop after %d: %d entries, want %d (or different ones)", stop, len(got), n)
		}
	}
	var all []string
	if err := e.Iterate(cf, nil, nil, func(k, _ []byte) (bool, error) { all = append(all, string(k)); return true, nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != 1002 || all[0] != "o" || all[1001] != "q" {
		t.Errorf("no prefix: %d entries, from %q to %q", len(all), all[0], all[len(all)-1])
	}
}
