package rocksdb

import (
	"bytes"
	"errors"
	"fmt"
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
	e := openTestEngine(t, dir)
	key := []byte("key")
	b := e.NewBatch()
	b.Put(db.CFDefault, key, []byte("old")) // overlap: the run gets a global seqno
	if err := e.Write(b, true); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	stage := func() (string, []byte) {
		return writeRun(t, e, db.CFDefault, "run.sst", func(w db.RunWriter) error { return w.Add(key, []byte("new"), false) })
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

// A bulk-load run of a family with a compression dictionary trains one only
// when the family is empty: a run on top of existing rows goes to level 0
// and is rewritten by compaction, which trains the dictionary of the file
// that lasts.
func TestRunTrainsDictionaryOnlyIntoAnEmptyFamily(t *testing.T) {
	dir := t.TempDir()
	e := openTestEngine(t, dir)
	cf := db.CFTxAddresses
	if !cf.Storage().Repetitive {
		t.Fatalf("%s is no longer Repetitive; pick the family that is", cf)
	}
	stage := func(name string, seed int) []byte {
		t.Helper()
		_, data := writeRun(t, e, cf, name, func(w db.RunWriter) error {
			// Enough repetitive rows for the dictionary's training samples.
			for i := range 20000 {
				key := []byte(fmt.Sprintf("%08d-%d", i, seed))
				value := bytes.Repeat([]byte(fmt.Sprintf("descriptor %d;", i%97)), 4)
				if err := w.Add(key, value, false); err != nil {
					return err
				}
			}
			return nil
		})
		if ok, err := e.IngestRun(cf, name); err != nil || !ok {
			t.Fatalf("ingest %s: %v %v", name, ok, err)
		}
		return data
	}
	const dictBlock = "rocksdb.compression_dict"
	first := stage("first.sst", 1)
	if !bytes.Contains(first, []byte(dictBlock)) {
		t.Error("the run into the empty family has no compression dictionary")
	}
	if c := runCompression(first); c != "ZSTD" {
		t.Errorf("the run into the empty family is compressed with %s, want the last level's ZSTD", c)
	}
	second := stage("second.sst", 2)
	if bytes.Contains(second, []byte(dictBlock)) {
		t.Error("the run on top of existing rows trained a compression dictionary")
	}
	if c := runCompression(second); c != "LZ4" {
		t.Errorf("the run on top of existing rows is compressed with %s, want LZ4", c)
	}
}

// zstdMagic begins every zstd frame; RocksDB's zstd blocks are frames.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// runCompression tells whether an SST file's blocks are zstd frames
// ("ZSTD") or not ("LZ4": the only other compression these families use).
func runCompression(sst []byte) string {
	if bytes.Contains(sst, zstdMagic) {
		return "ZSTD"
	}
	return "LZ4"
}
