package rocksdb

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// Ingestion must leave the staged run's bytes alone: a crash after RocksDB
// took the run in but before the staged name was gone leaves it staged,
// and recovery ingests it again. RocksDB writes a global sequence number
// into the file it ingests when the run overlaps existing data; with the
// staged file linked into the database (move_files) that write changed the
// staged run in place, and its second ingestion failed with "Corruption:
// ... global seqno property" (found by the kill -9 campaign,
// e2e/torture_kills_test.go), so the index could not be reopened.
func TestIngestLeavesStagedRunIntact(t *testing.T) {
	dir := t.TempDir()
	e, err := openEngine(testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	key := []byte("key")
	b := e.NewBatch()
	b.Put(db.CFDefault, key, []byte("old")) // overlap: the run gets a global seqno
	if err := e.Write(b, true); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	stage := func() (string, []byte) {
		w, err := e.NewRun(db.CFDefault, "run.sst")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Add(key, []byte("new"), false); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		path, err := e.runPath("run.sst")
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return path, data
	}
	path, staged := stage()
	// A second name of the staged file sees what ingestion does to it.
	kept := filepath.Join(t.TempDir(), "kept.sst")
	if err := os.Link(path, kept); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.IngestRun(db.CFDefault, "run.sst"); err != nil || !ok {
		t.Fatalf("ingest: %v %v", ok, err)
	}
	if after, err := os.ReadFile(kept); err != nil || !bytes.Equal(after, staged) {
		t.Fatalf("ingestion changed the staged run (%v)", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("staged name left after the ingestion: %v", err)
	}
	// What recovery does after a crash right before the staged name went.
	if err := os.Link(kept, path); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.IngestRun(db.CFDefault, "run.sst"); err != nil || !ok {
		t.Fatalf("second ingestion of the same run: %v %v", ok, err)
	}
	v, err := e.Get(db.CFDefault, key)
	if err != nil || string(v) != "new" {
		t.Fatalf("value after ingestion: %q %v", v, err)
	}
}
