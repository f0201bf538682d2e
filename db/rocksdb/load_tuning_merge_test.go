package rocksdb

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// A family's load tuning, all three parts at once, is one SetOptions call
// (one OPTIONS file written, where a call per part wrote three), a tuning
// that changes nothing writes none, and the usual tuning gives back the
// family's options exactly as they were.
func TestLoadTuningIsOneOptionsRewrite(t *testing.T) {
	dir := t.TempDir()
	e := openTestEngine(t, dir)
	cf := db.CFTxAddresses // recompressed, with blocks above the small size
	// How far one SetOptions call moves the OPTIONS file's number (its
	// temporary file takes a number too).
	_, n := optionsFileSections(t, dir, cf)
	if err := e.rdb.SetOptionsCF(e.handle(db.CFAddresses), []string{"level0_file_num_compaction_trigger"}, []string{"9"}); err != nil {
		t.Fatal(err)
	}
	before, n0 := optionsFileSections(t, dir, cf)
	step := n0 - n
	if step <= 0 {
		t.Fatalf("OPTIONS file %d after a SetOptions call, %d before", n0, n)
	}
	on := db.LoadTuning{DeferCompaction: true, Compression: true, SmallBlocks: true}
	if err := e.TuneForLoad(cf, on); err != nil {
		t.Fatal(err)
	}
	tuned, n1 := optionsFileSections(t, dir, cf)
	if n1 != n0+step {
		t.Fatalf("OPTIONS file %d after the tuning, %d before: want one rewrite", n1, n0)
	}
	for _, want := range []string{"level0_file_num_compaction_trigger=" + strconv.Itoa(deferredCompactionTrigger),
		"max_bytes_for_level_base=" + strconv.FormatUint(deferredLevel0Bytes, 10),
		"bottommost_compression=kLZ4Compression", "block_size=" + strconv.Itoa(smallBlockBytes)} {
		if !slices.Contains(tuned, want) {
			t.Errorf("tuned for the load without %s", want)
		}
	}
	if !e.loadRuns[cf].Load() {
		t.Error("runs not marked for the load's compression")
	}
	if err := e.TuneForLoad(cf, on); err != nil {
		t.Fatal(err)
	}
	if _, n := optionsFileSections(t, dir, cf); n != n1 {
		t.Fatalf("the same tuning again rewrote the OPTIONS file (%d, was %d)", n, n1)
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{}); err != nil {
		t.Fatal(err)
	}
	after, n2 := optionsFileSections(t, dir, cf)
	if n2 != n1+step {
		t.Fatalf("OPTIONS file %d after the untuning, %d before: want one rewrite", n2, n1)
	}
	if !slices.Equal(after, before) || e.loadRuns[cf].Load() {
		t.Fatalf("options after the load differ from before it:\nbefore %v\nafter  %v", before, after)
	}
}

// optionsFileSections returns cf's options (its CFOptions and table options
// sections) in the newest OPTIONS file of dir, one "name=value" a line,
// and that file's number.
func optionsFileSections(t *testing.T, dir string, cf db.CF) ([]string, int) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no OPTIONS file in %s: %v", dir, err)
	}
	newest, name := -1, ""
	for _, f := range names {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "OPTIONS-"))
		if err == nil && n > newest {
			newest, name = n, f
		}
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = line == `[CFOptions "`+cf.String()+`"]` || line == `[TableOptions/BlockBasedTable "`+cf.String()+`"]`
			continue
		}
		if in && line != "" {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no options of %s in %s", cf, name)
	}
	return out, newest
}
