package rocksdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/db"
)

// A secondary instance has no RocksDB snapshots (iterators refuse them,
// gets ignore them) and TryCatchUpWithPrimary changes what plain reads
// see, so a query could read half of a block the primary wrote meanwhile.
// Between two catch-ups, though, a secondary instance does not change. A replica
// therefore opens two secondary instances, each with half the block cache: queries
// take their snapshots on the current one, a catch-up brings the idle one
// up to date once the queries on it have finished, then makes it current.
// A query never waits for a catch-up; a catch-up waits for queries older
// than the previous one (bounded by catchUpWait, then it is retried).

// catchUpWait bounds how long a catch-up waits for queries on the idle
// instance to release their snapshots.
const catchUpWait = 2 * time.Second

// ErrCatchUpBusy means a catch-up was skipped because queries still held
// snapshots of the instance to update; the next attempt retries.
var ErrCatchUpBusy = errors.New("rocksdb: catch-up postponed, long queries hold the previous view")

// pair is the two secondary instances of a replica as one db.Engine.
type pair struct {
	o    db.Options
	dirs [2]string
	// manifests is the primary's MANIFEST (its CURRENT file) each instance
	// last read: a new one means the primary restarted, and the instance
	// is opened afresh rather than caught up across the switch.
	manifests [2]string
	inst      [2]*engine
	refs      [2]atomic.Int64 // open snapshots per instance
	cur       atomic.Int32    // index of the instance new reads use
	mu        sync.Mutex      // serializes catch-ups
	last      string          // fingerprint at the last catch-up
}

var _ db.Engine = (*pair)(nil)

func openPair(o db.Options, dir string) (*pair, error) {
	if o.CacheBytes <= 0 {
		o.CacheBytes = 64 << 20
	}
	o.CacheBytes /= 2
	p := &pair{o: o}
	for i := range p.inst {
		p.dirs[i] = filepath.Join(dir, fmt.Sprintf("instance%d", i))
		p.manifests[i] = currentManifest(o.Path)
		e, err := openSecondaryEngine(o, p.dirs[i])
		if err != nil {
			if i > 0 {
				_ = p.inst[0].Close()
			}
			return nil, err
		}
		p.inst[i] = e
	}
	return p, nil
}

func (p *pair) current() *engine { return p.inst[p.cur.Load()] }

// CatchUp updates the idle instance and makes it the current one. When
// the primary's WAL and MANIFEST files are as they were at the last
// catch-up, the current instance is up to date and nothing is done (a
// directory read instead of two RocksDB catch-ups).
func (p *pair) CatchUp() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fp, err := fingerprint(p.Path())
	if err != nil {
		return err
	}
	if fp == p.last && fp != "" {
		return nil
	}
	idle := 1 - p.cur.Load()
	deadline := time.Now().Add(catchUpWait)
	for p.refs[idle].Load() > 0 {
		if time.Now().After(deadline) {
			return ErrCatchUpBusy
		}
		time.Sleep(2 * time.Millisecond)
	}
	if m := currentManifest(p.o.Path); m != p.manifests[idle] {
		// The primary restarted: open the instance again on its new
		// MANIFEST (no query uses it: refs[idle] is 0 and stays so
		// until it is made current).
		e, err := openSecondaryEngine(p.o, p.dirs[idle])
		if err != nil {
			return fmt.Errorf("rocksdb: reopen after the primary's restart: %w", err)
		}
		old := p.inst[idle]
		p.inst[idle], p.manifests[idle] = e, m
		_ = old.Close()
	} else if err := p.inst[idle].CatchUp(); err != nil {
		return err
	}
	p.cur.Store(idle)
	p.last = fp
	return nil
}

// fingerprint names the state of the primary's WAL and MANIFEST files
// (names, sizes, modification times): every write the primary commits
// changes it.
func fingerprint(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("rocksdb: read the primary's directory: %w", err)
	}
	var b strings.Builder
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".log") && !strings.HasPrefix(n, "MANIFEST-") && n != "CURRENT" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return "", nil // gone meanwhile (a WAL recycled): catch up
		}
		fmt.Fprintf(&b, "%s:%d:%d;", n, info.Size(), info.ModTime().UnixNano())
	}
	return b.String(), nil
}

func (p *pair) Get(cf db.CF, key []byte) ([]byte, error) { return p.current().Get(cf, key) }

func (p *pair) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return p.current().Iterate(cf, start, prefix, fn)
}

func (p *pair) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return p.current().IterateReverse(cf, start, prefix, fn)
}

func (p *pair) NewBatch() db.EngineBatch { return p.current().NewBatch() }

func (p *pair) Write(db.EngineBatch, bool) error { return errSecondaryWrite }

// Snapshot pins the current instance until Release: no catch-up touches
// it meanwhile, so its plain reads are a consistent view. It re-checks the
// instance is still current after counting itself, so that a catch-up
// that started meanwhile either sees the count or is not on this one.
func (p *pair) Snapshot() (db.EngineSnapshot, error) {
	for {
		i := p.cur.Load()
		p.refs[i].Add(1)
		if p.cur.Load() != i {
			p.refs[i].Add(-1)
			continue
		}
		if p.inst[i].closed.Load() {
			p.refs[i].Add(-1)
			return nil, db.ErrClosed
		}
		return &pairSnapshot{e: p.inst[i], ref: &p.refs[i]}, nil
	}
}

// pairSnapshot is a pinned instance.
type pairSnapshot struct {
	e        *engine
	ref      *atomic.Int64
	released atomic.Bool
}

func (s *pairSnapshot) Get(cf db.CF, key []byte) ([]byte, error) {
	if s.released.Load() {
		return nil, errReleased
	}
	return s.e.Get(cf, key)
}

func (s *pairSnapshot) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if s.released.Load() {
		return errReleased
	}
	return s.e.Iterate(cf, start, prefix, fn)
}

func (s *pairSnapshot) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if s.released.Load() {
		return errReleased
	}
	return s.e.IterateReverse(cf, start, prefix, fn)
}

func (s *pairSnapshot) Release() {
	if !s.released.Swap(true) {
		s.ref.Add(-1)
	}
}

func (p *pair) NewRun(db.CF, string) (db.RunWriter, error) { return nil, errSecondaryWrite }
func (p *pair) SyncRuns() error                            { return errSecondaryWrite }
func (p *pair) IngestRun(db.CF, string) (bool, error)      { return false, errSecondaryWrite }
func (p *pair) ClearRuns() error                           { return errSecondaryWrite }
func (p *pair) Size() int64                                { return p.current().Size() }
func (p *pair) Compact(db.CF) error                        { return errSecondaryWrite }
func (p *pair) CancelCompaction()                          {}
func (p *pair) TuneForLoad(db.CF, db.LoadTuning) error     { return errSecondaryWrite }
func (p *pair) Level0Files(cf db.CF) (int, bool)           { return p.current().Level0Files(cf) }
func (p *pair) Path() string                               { return p.inst[0].Path() }

// SetCacheBytes resizes the instances' block caches to n together.
func (p *pair) SetCacheBytes(n int64) {
	p.inst[0].SetCacheBytes(n / 2)
	p.inst[1].SetCacheBytes(n / 2)
}

func (p *pair) Close() error {
	return errors.Join(p.inst[0].Close(), p.inst[1].Close())
}

// currentManifest is the content of the primary's CURRENT file (the name
// of its MANIFEST), "" when it cannot be read.
func currentManifest(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		return ""
	}
	return string(b)
}
