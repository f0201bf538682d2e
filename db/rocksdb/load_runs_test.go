package rocksdb

import (
	"bytes"
	"os"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// writeRun stages the run of cf that add writes and returns its path and
// bytes.
func writeRun(t *testing.T, e *engine, cf db.CF, name string, add func(db.RunWriter) error) (string, []byte) {
	t.Helper()
	w, err := e.NewRun(cf, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := add(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	path, err := e.runPath(name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// A run into an empty family lands in the last level and gets its
// compression (zstd), except while the load's compression is on: then the
// compaction after the load rewrites it, and it is written with LZ4 like
// the runs that overlap rows. The table's properties name the compression.
func TestLoadRunsAreLZ4(t *testing.T) {
	e := openTestEngine(t, t.TempDir())
	cf := db.CFTxAddresses
	written := func() []byte {
		t.Helper()
		_, data := writeRun(t, e, cf, "run.sst", func(w db.RunWriter) error {
			for i := range 1000 {
				if err := w.Add([]byte{byte(i >> 8), byte(i)}, bytes.Repeat([]byte("descriptor"), 8), false); err != nil {
					return err
				}
			}
			return nil
		})
		if err := e.ClearRuns(); err != nil {
			t.Fatal(err)
		}
		return data
	}
	if data := written(); !bytes.Contains(data, []byte("ZSTD")) {
		t.Fatal("a run into an empty family, no load: not zstd")
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{Compression: true}); err != nil {
		t.Fatal(err)
	}
	if data := written(); bytes.Contains(data, []byte("ZSTD")) || !bytes.Contains(data, []byte("LZ4")) {
		t.Fatal("a run during a load: not LZ4")
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{Compression: false}); err != nil {
		t.Fatal(err)
	}
	if data := written(); !bytes.Contains(data, []byte("ZSTD")) {
		t.Fatal("a run after the load: not zstd")
	}
}
