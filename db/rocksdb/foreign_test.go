package rocksdb

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

func testOptions(dir string) db.Options {
	return db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"}
}

// openTestEngine opens an engine on dir with testOptions, closed when the
// test ends.
func openTestEngine(t *testing.T, dir string) *engine {
	t.Helper()
	e, err := openEngine(testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// rawCreate makes a RocksDB database with the named column families and
// the given keys in the default family, as another program (or an older
// version of this one) would.
func rawCreate(t *testing.T, dir string, names []string, defaults map[string][]byte) {
	t.Helper()
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	opts.SetCreateIfMissing(true)
	opts.SetCreateIfMissingColumnFamilies(true)
	cfOpts := make([]*grocksdb.Options, len(names))
	for i := range cfOpts {
		cfOpts[i] = opts
	}
	rdb, handles, err := grocksdb.OpenDbColumnFamilies(opts, dir, names, cfOpts)
	if err != nil {
		t.Fatal(err)
	}
	wo := grocksdb.NewDefaultWriteOptions()
	for k, v := range defaults {
		if err := rdb.Put(wo, []byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	wo.Destroy()
	for _, h := range handles {
		h.Destroy()
	}
	rdb.Close()
}

func listCFs(t *testing.T, dir string) []string {
	t.Helper()
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	names, err := grocksdb.ListColumnFamilies(opts, dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// An index of format 1 (no blockFilter column family) is refused without
// being modified: its column families stay what they were.
func TestOpenRefusesOlderFormatUnchanged(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
		if cf != db.CFBlockFilter {
			names = append(names, cf.String())
		}
	}
	// The default family's "format" key, u32be(1) (db/schema.go).
	rawCreate(t, dir, names, map[string][]byte{"format": {0, 0, 0, 1}})
	_, err := Open(testOptions(dir))
	if !errors.Is(err, db.ErrIncompatible) || !strings.Contains(err.Error(), "format version 1") {
		t.Fatalf("format 1 index: %v", err)
	}
	if after := listCFs(t, dir); !slices.Equal(after, slices.Sorted(slices.Values(names))) {
		t.Fatalf("column families changed to %v", after)
	}
}

// Blockbook's own Bitcoin datadir has a fiatRates column family too (and
// no other we do not know): it is still refused, and left untouched.
func TestBlockbookDatadirRefusedUntouched(t *testing.T) {
	dir := t.TempDir()
	names := []string{"default", "height", "addresses", "blockTxs", "transactions", "fiatRates", "addressBalance", "txAddresses"}
	rawCreate(t, dir, names, map[string][]byte{"internalState": []byte(`{"coin":"Bitcoin"}`)})
	_, err := Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Bitcoin", Network: "mainnet"})
	if !errors.Is(err, db.ErrIncompatible) || !strings.Contains(err.Error(), "written by Blockbook") {
		t.Fatalf("Blockbook datadir: %v", err)
	}
	if after := listCFs(t, dir); !slices.Equal(after, slices.Sorted(slices.Values(names))) {
		t.Fatalf("column families changed to %v", after)
	}
}

// A datadir with column families of another program is refused.
func TestForeignDatadirRefused(t *testing.T) {
	dir := t.TempDir()
	rawCreate(t, dir, []string{"default", "height", "somethingElse"}, nil)
	if _, err := Open(testOptions(dir)); !errors.Is(err, db.ErrIncompatible) || !strings.Contains(err.Error(), "somethingElse") {
		t.Fatalf("foreign datadir: %v", err)
	}
	// An index of one coin is refused for another.
	dir = t.TempDir()
	d, err := Open(testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	o := testOptions(dir)
	o.Coin = "Other"
	if _, err := Open(o); !errors.Is(err, db.ErrIncompatible) {
		t.Fatalf("index of another coin: %v", err)
	}
	// A read-only open of an empty directory finds no index.
	o = testOptions(t.TempDir())
	o.ReadOnly = true
	if _, err := Open(o); err == nil {
		t.Fatalf("read-only open of nothing: %v", err)
	}
}

// createIndexWithout makes a format-2 index holding every column family but
// the given ones, as earlier builds of this version wrote it.
func createIndexWithout(t *testing.T, skip ...db.CF) string {
	t.Helper()
	return createIndexOf(t, testOptions, skip...)
}

// createIndexOf is createIndexWithout for an index opened with opts.
func createIndexOf(t *testing.T, options func(string) db.Options, skip ...db.CF) string {
	t.Helper()
	dir := t.TempDir()
	d, err := Open(options(dir))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	names := listCFs(t, dir)
	cfOpts := make([]*grocksdb.Options, len(names))
	for i := range cfOpts {
		cfOpts[i] = opts
	}
	rdb, handles, err := grocksdb.OpenDbColumnFamilies(opts, dir, names, cfOpts)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		for _, cf := range skip {
			if n == cf.String() {
				if err := rdb.DropColumnFamily(handles[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, h := range handles {
		h.Destroy()
	}
	rdb.Close()
	return dir
}

// An index made before the fiatRates column family existed keeps working:
// a read-only open reads no rates and changes nothing, a normal open adds
// the family. A missing chain column family is still refused.
func TestOpenAddsMissingFiatRates(t *testing.T) {
	dir := createIndexWithout(t, db.CFFiatRates)
	before := listCFs(t, dir)
	if slices.Contains(before, db.CFFiatRates.String()) {
		t.Fatal("the family was not dropped")
	}
	o := testOptions(dir)
	o.ReadOnly = true
	ro, err := Open(o)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	if cur, err := db.ReadFiatCurrent(ro); cur != nil || err != nil {
		t.Errorf("read-only current: %+v %v", cur, err)
	}
	if got, err := db.FindFiatTickers(ro, []int64{1}, ""); err != nil || got[0] != nil {
		t.Errorf("read-only find: %+v %v", got, err)
	}
	if last, err := ro.LastFiatTicker(""); last != nil || err != nil {
		t.Errorf("read-only last: %+v %v", last, err)
	}
	ro.Close()
	if after := listCFs(t, dir); !slices.Equal(after, before) {
		t.Fatalf("read-only open changed the column families to %v", after)
	}

	d, err := Open(testOptions(dir))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := d.WriteFiatTickers([]*db.FiatTicker{{Time: 1700006400, Rates: map[string]float64{"usd": 100}}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if after := listCFs(t, dir); !slices.Contains(after, db.CFFiatRates.String()) {
		t.Fatalf("fiatRates not added: %v", after)
	}

	dir = createIndexWithout(t, db.CFSpends)
	if _, err := Open(testOptions(dir)); !errors.Is(err, db.ErrIncompatible) {
		t.Fatalf("index without spends opened: %v", err)
	}
}

// An index of format 2 (before the blockTxids and scriptHashes column
// families) is refused with the resync message, unmodified.
func TestOpenRefusesFormat2Unchanged(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
		if cf != db.CFBlockTxids {
			names = append(names, cf.String())
		}
	}
	rawCreate(t, dir, names, map[string][]byte{"format": {0, 0, 0, 2}})
	_, err := Open(testOptions(dir))
	if !errors.Is(err, db.ErrIncompatible) || !strings.Contains(err.Error(), "format version 2, this binary writes version 4") ||
		!strings.Contains(err.Error(), "resync required") {
		t.Fatalf("format 2 index: %v", err)
	}
	if after := listCFs(t, dir); !slices.Equal(after, slices.Sorted(slices.Values(names))) {
		t.Fatalf("column families changed to %v", after)
	}
}

// An index of format 3 (txids repeated where format 4 stores tx positions,
// and a scriptHashes family) is refused with the resync message, its rows
// untouched: reading its rows as format 4 would give wrong answers. So is
// one made by a build of main before format 4 dropped scriptHashes.
func TestOpenRefusesFormat3Unchanged(t *testing.T) {
	for _, c := range []struct {
		format byte
		want   string
	}{
		{3, "format version 3, this binary writes version 4"},
		{4, "made by an older build of this program"},
	} {
		dir := t.TempDir()
		names := []string{"scriptHashes"}
		for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
			names = append(names, cf.String())
		}
		rawCreate(t, dir, names, map[string][]byte{"format": {0, 0, 0, c.format}, "tip": make([]byte, 36)})
		_, err := Open(testOptions(dir))
		if !errors.Is(err, db.ErrIncompatible) || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "resync required") {
			t.Fatalf("format %d index: %v", c.format, err)
		}
		o := testOptions(dir)
		o.ReadOnly = true
		if _, err := Open(o); !errors.Is(err, db.ErrIncompatible) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("read-only open of a format %d index: %v", c.format, err)
		}
		if after := listCFs(t, dir); !slices.Equal(after, slices.Sorted(slices.Values(names))) {
			t.Fatalf("column families changed to %v", after)
		}
	}
}

// An index made before the pushdata family existed opens: a read-only open
// leaves it as it is and finds the index off, a normal open adds the empty
// family (the index stays off: its state key is unset).
func TestOpenAddsMissingOptionalFamily(t *testing.T) {
	dir := createIndexWithout(t, db.CFPushdata)
	before := listCFs(t, dir)
	o := testOptions(dir)
	o.ReadOnly = true
	ro, err := Open(o)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	if on, err := db.OptionalMarked(ro, "pushdata"); on || err != nil {
		t.Errorf("read-only: marked %v %v", on, err)
	}
	ro.Close()
	if after := listCFs(t, dir); !slices.Equal(after, before) {
		t.Fatalf("read-only open changed the column families to %v", after)
	}
	d, err := Open(testOptions(dir))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	d.Close()
	if after := listCFs(t, dir); !slices.Contains(after, db.CFPushdata.String()) {
		t.Fatalf("pushdata not added: %v", after)
	}
}
