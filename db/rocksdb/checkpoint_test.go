package rocksdb

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/db"
)

// A checkpoint of a live index opens as an index at the tip it reports,
// identical to the source at that tip, and the source goes on.
func TestCheckpointPerBlock(t *testing.T) {
	blocks := testChain(30)
	d, err := Open(testOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	x := index(t, d)
	connect(t, x, blocks[:20])
	dir := filepath.Join(t.TempDir(), "ckpt")
	info, err := d.Checkpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !info.HasTip || info.Tip.Height != 19 || info.Tip.Hash != blocks[19].Hash {
		t.Fatalf("checkpoint tip %+v", info)
	}
	if info.Files == 0 || info.Bytes == 0 || !info.SameFilesystem {
		t.Fatalf("checkpoint size: %+v", info)
	}
	connect(t, x, blocks[20:])
	c, err := Open(testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	assertIdentical(t, "checkpoint", c, memIndex(t, blocks[:20]))
	// The copy is an index of its own: it follows on from its tip.
	connect(t, index(t, c), blocks[20:])
	assertIdentical(t, "checkpoint continued", c, d)
}

// The target must be a new, absolute, clean directory outside the datadir.
func TestCheckpointRefusesBadTargets(t *testing.T) {
	data := t.TempDir()
	d, err := Open(testOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	existing := t.TempDir()
	for _, dir := range []string{"", "relative/ckpt", existing, existing + "/../ckpt", existing + "/./ckpt",
		existing + "/ckpt/", filepath.Join(existing, "no-parent", "ckpt"), filepath.Join(data, "ckpt")} {
		if _, err := d.Checkpoint(dir); !errors.Is(err, db.ErrCheckpointTarget) {
			t.Errorf("checkpoint into %q: %v, want ErrCheckpointTarget", dir, err)
		}
	}
	if entries, _ := os.ReadDir(existing); len(entries) != 0 {
		t.Errorf("refused checkpoints wrote %d entries", len(entries))
	}
}

// pausingEngine starts a checkpoint when a bulk round's first run is
// ingested, between the round's record and its tip, and gives it time to
// finish before ingesting on: without the gate the checkpoint would hold
// part of the round and its record, but not the staged runs.
type pausingEngine struct {
	db.Engine
	d     *db.DB
	dir   string
	once  sync.Once
	done  chan struct{}
	info  db.CheckpointInfo
	err   error
	early bool // the checkpoint finished while the round was ingesting
}

func (p *pausingEngine) Checkpoint(dir string) error {
	return p.Engine.(db.Checkpointer).Checkpoint(dir)
}

func (p *pausingEngine) IngestRun(cf db.CF, name string) (bool, error) {
	p.once.Do(func() {
		go func() {
			p.info, p.err = p.d.Checkpoint(p.dir)
			close(p.done)
		}()
		select {
		case <-p.done:
			p.early = true
		case <-time.After(300 * time.Millisecond):
		}
	})
	return p.Engine.IngestRun(cf, name)
}

// A checkpoint requested in the middle of a bulk round's commit holds the
// state after the round (it waits for the commit), never a part of it.
func TestCheckpointWaitsForBulkRound(t *testing.T) {
	blocks := testChain(40)
	dir := t.TempDir()
	e, err := openEngine(testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	p := &pausingEngine{Engine: e, dir: filepath.Join(t.TempDir(), "ckpt"), done: make(chan struct{})}
	d, err := db.OpenEngine(p, testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p.d = d
	x := index(t, d)
	connect(t, x, blocks[:25])
	l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[25:] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if p.err != nil {
		t.Fatal(p.err)
	}
	if p.early {
		t.Error("the checkpoint finished while a bulk round was being ingested")
	}
	if p.info.Tip.Height != 39 {
		t.Errorf("checkpoint at %d, want the round's tip 39", p.info.Tip.Height)
	}
	c, err := Open(testOptions(p.dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tip, _, err := db.ReadTip(c)
	if err != nil || tip.Height != p.info.Tip.Height {
		t.Fatalf("the checkpoint opens at %d (%v), reported %d", tip.Height, err, p.info.Tip.Height)
	}
	assertIdentical(t, "checkpoint taken during a round", c, memIndex(t, blocks))
}
