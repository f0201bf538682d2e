package rocksdb

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
)

type scriptClassifier struct{}

func (scriptClassifier) OutputAddrDesc(s []byte) bchain.AddrDesc { return s }

func testHash(parts ...any) bchain.Hash { return sha256.Sum256([]byte(fmt.Sprint(parts...))) }

// testChain returns n blocks: a coinbase paying two of a few scripts, and
// a tx spending the previous block's first coinbase output to a reused
// script and a new one, so that every column family gets rows, updates and
// deletions.
func testChain(n int) []*bchain.Block {
	var blocks []*bchain.Block
	for h := range uint32(n) {
		b := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: h, Hash: testHash("block", h), Time: 1_600_000_000 + int64(h)*600, Size: 300}}
		cb := bchain.Tx{Txid: testHash("cb", h), Vin: []bchain.Vin{{Coinbase: true}},
			Vout: []bchain.Vout{{Value: 5000, Script: []byte{0x51, byte(h % 4)}}, {Value: 100, Script: []byte{0x52, byte(h % 3)}}}}
		b.Txs = append(b.Txs, cb)
		if h > 0 {
			b.Prev = blocks[h-1].Hash
			b.Txs = append(b.Txs, bchain.Tx{Txid: testHash("tx", h),
				Vin:  []bchain.Vin{{PrevTxid: blocks[h-1].Txs[0].Txid}},
				Vout: []bchain.Vout{{Value: 2000, Script: []byte{0x53, 1}}, {Value: 2900, Script: []byte{0x53, byte(h)}}}})
		}
		blocks = append(blocks, b)
	}
	return blocks
}

var filters = db.FilterParams{P: 19, Scripts: db.FilterScriptsAll, ZeroedKey: true}

func index(t *testing.T, d *db.DB) *db.UtxoIndex {
	t.Helper()
	x, err := db.NewUtxoIndex(d, scriptClassifier{}, 10, filters)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func connect(t *testing.T, x *db.UtxoIndex, blocks []*bchain.Block) {
	t.Helper()
	for _, b := range blocks {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatalf("connect %d: %v", b.Height, err)
		}
	}
}

// memIndex is the reference: the blocks connected one by one in memory.
func memIndex(t *testing.T, blocks []*bchain.Block) *db.DB {
	t.Helper()
	d, err := memdb.Open(testOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	connect(t, index(t, d), blocks)
	return d
}

func assertIdentical(t *testing.T, what string, a, b *db.DB) {
	t.Helper()
	diffs, err := db.Diff(a, b, db.ColumnFamilies(bchain.ChainBitcoinType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s", what, d)
	}
}

var errCrash = errors.New("simulated crash")

// crashingEngine fails the at-th step of the bulk protocol (syncing the
// staged runs, a synced write, an ingest) and every write after it, as if
// the process had died right before that step.
type crashingEngine struct {
	db.Engine
	at    int
	steps atomic.Int32
	dead  atomic.Bool
}

func (c *crashingEngine) step() error {
	if c.dead.Load() || int(c.steps.Add(1)) >= c.at {
		c.dead.Store(true)
		return errCrash
	}
	return nil
}

func (c *crashingEngine) Write(b db.EngineBatch, sync bool) error {
	if c.dead.Load() {
		return errCrash
	}
	if sync {
		if err := c.step(); err != nil {
			return err
		}
	}
	return c.Engine.Write(b, sync)
}

func (c *crashingEngine) SyncRuns() error {
	if err := c.step(); err != nil {
		return err
	}
	return c.Engine.SyncRuns()
}

func (c *crashingEngine) IngestRun(cf db.CF, name string) (bool, error) {
	if err := c.step(); err != nil {
		return false, err
	}
	return c.Engine.IngestRun(cf, name)
}

// A crash before any step of the bulk-load protocol is completed (from the
// BulkRound record on) or forgotten (before it) when the index is reopened,
// and the staging directory is cleaned.
func TestBulkRecoversInterruptedRound(t *testing.T) {
	blocks := testChain(40)
	full, prefix := memIndex(t, blocks), memIndex(t, blocks[:25])
	completed, forgotten := 0, 0
	for at := 1; ; at++ {
		dir := t.TempDir()
		e, err := openEngine(testOptions(dir))
		if err != nil {
			t.Fatal(err)
		}
		d, err := db.OpenEngine(&crashingEngine{Engine: e, at: at}, testOptions(dir))
		if err != nil {
			t.Fatal(err)
		}
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
		_, finishErr := l.Finish()
		if finishErr != nil && !errors.Is(finishErr, errCrash) {
			t.Fatalf("step %d: %v", at, finishErr)
		}
		d.Close()

		d, err = Open(testOptions(dir))
		if err != nil {
			t.Fatalf("reopen after a crash at step %d: %v", at, err)
		}
		tip, _, err := db.ReadTip(d)
		switch {
		case err != nil:
			t.Fatal(err)
		case tip.Height == 39:
			assertIdentical(t, fmt.Sprintf("crash at step %d", at), d, full)
			completed++
		case tip.Height == 24:
			assertIdentical(t, fmt.Sprintf("crash at step %d", at), d, prefix)
			forgotten++
		default:
			t.Fatalf("crash at step %d: tip %d", at, tip.Height)
		}
		d.Close()
		if _, err := os.Stat(filepath.Join(dir, stagingDirName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("crash at step %d: staging directory left: %v", at, err)
		}
		if finishErr == nil {
			break // the protocol ran to its end: no later step to crash at
		}
		if at > 40 {
			t.Fatal("the protocol never completed")
		}
	}
	if forgotten < 2 || completed < 4 {
		t.Errorf("%d crashes forgotten, %d completed: the protocol's steps were not all reached", forgotten, completed)
	}
}
