package app

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/syncer"
)

// -replica needs no other flag, has defaults for its lag thresholds, and
// refuses the flags that would write the index.
func TestReplicaFlags(t *testing.T) {
	o, err := ParseFlags([]string{"-blockchaincfg=x", "-datadir=/d", "-replica"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Replica.On || o.Replica.Dir != "" || o.Replica.MaxLag != 5*time.Second || o.Replica.MaxBlocks != 2 {
		t.Fatalf("replica options %+v", o.Replica)
	}
	for _, args := range [][]string{{"-sync"}, {"-rollback=5"}, {"-repair"}, {"-computedbstats"}, {"-replicamaxlag=100ms"}} {
		_, err := ParseFlags(append([]string{"-blockchaincfg=x", "-replica"}, args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "replica") {
			t.Errorf("-replica %v: %v", args, err)
		}
	}
	if _, err := ParseFlags([]string{"-blockchaincfg=x", "-sync", "-replicamaxlag=100ms"}, io.Discard); err != nil {
		t.Errorf("replica thresholds without -replica: %v", err)
	}
}

type scriptClassifier struct{}

func (scriptClassifier) OutputAddrDesc(s []byte) bchain.AddrDesc { return s }

// chainOf returns n coinbase-only blocks; salt makes a competing branch.
func chainOf(n int, salt string, from []*bchain.Block) []*bchain.Block {
	blocks := slices.Clone(from)
	for h := uint32(len(from)); h < uint32(n); h++ {
		b := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: h, Hash: sha256.Sum256(fmt.Appendf(nil, "%s%d", salt, h)), Time: 1_600_000_000 + int64(h)*600}}
		b.Txs = []bchain.Tx{{Txid: sha256.Sum256(fmt.Appendf(nil, "cb%s%d", salt, h)), Vin: []bchain.Vin{{Coinbase: true}},
			Vout: []bchain.Vout{{Value: 5000, Script: []byte{0x51, byte(h % 4)}}}}}
		if h > 0 {
			b.Prev = blocks[h-1].Hash
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// The replica's view of how the tip moved: new blocks in order; after a
// reorg the old branch's blocks disconnected newest first, then the new
// branch's connected, as the sync worker announces them.
func TestReplicaMoves(t *testing.T) {
	d, err := memdb.Open(db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	x, err := db.NewUtxoIndex(d, scriptClassifier{}, 10, db.FilterParams{P: 19, Scripts: db.FilterScriptsAll, ZeroedKey: true})
	if err != nil {
		t.Fatal(err)
	}
	a := chainOf(10, "a", nil)
	for _, b := range a[:6] {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	r := &replica{d: d, hashes: map[uint32]bchain.Hash{}}
	move := func() []syncer.BlockEvent {
		t.Helper()
		snap, err := d.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Release()
		tip, ok, err := db.ReadTip(snap)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := r.moves(snap, tip, ok)
		if err != nil {
			t.Fatal(err)
		}
		r.tip, r.hasTip = tip, ok
		if err := r.remember(snap, tip.Height); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	if evs := move(); len(evs) != 6 || evs[0].Tip.Height != 0 || evs[5].Tip.Hash != a[5].Hash {
		t.Fatalf("from an empty start: %+v", evs)
	}
	for _, b := range a[6:8] {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	if evs := move(); len(evs) != 2 || evs[0].Tip.Hash != a[6].Hash || evs[1].Tip.Hash != a[7].Hash || evs[0].Disconnected {
		t.Fatalf("two new blocks: %+v", evs)
	}
	// Reorg: 7 and 6 replaced by a branch of three from 6.
	for range 2 {
		if _, _, err := x.DisconnectTip(func(h uint32, _ bchain.Hash) (*bchain.Block, error) { return a[h], nil }); err != nil {
			t.Fatal(err)
		}
	}
	b := chainOf(9, "b", a[:6])
	for _, blk := range b[6:] {
		if err := x.ConnectBlock(blk); err != nil {
			t.Fatal(err)
		}
	}
	evs := move()
	if len(evs) != 5 {
		t.Fatalf("reorg: %d events %+v", len(evs), evs)
	}
	want := []struct {
		height uint32
		hash   bchain.Hash
		disc   bool
	}{{6, a[6].Hash, true}, {5, a[5].Hash, true}, {6, b[6].Hash, false}, {7, b[7].Hash, false}, {8, b[8].Hash, false}}
	for i, w := range want {
		if evs[i].Tip.Height != w.height || evs[i].Tip.Hash != w.hash || evs[i].Disconnected != w.disc || !evs[i].HasTip {
			t.Errorf("reorg event %d: %+v, want %+v", i, evs[i], w)
		}
	}
	if evs := move(); len(evs) != 0 {
		t.Fatalf("nothing moved: %+v", evs)
	}
}

// A catch-up that keeps failing is logged once it has failed for longer
// than the max lag, whatever the error (the postponements too), naming the
// latest one, then at most every replicaWarnEvery; a success re-arms it.
func TestReplicaWarnsOfLongFailures(t *testing.T) {
	var out strings.Builder
	t0 := time.Now()
	r := &replica{o: replicaOptions{MaxLag: 5 * time.Second}, lastOK: t0,
		log: slog.New(slog.NewTextHandler(&out, nil))}
	warnings := func() int { return strings.Count(out.String(), "level=WARN") }
	r.failed(rocksdb.ErrCatchUpBusy, t0.Add(time.Second))
	if warnings() != 0 {
		t.Fatalf("warned within the max lag: %s", out.String())
	}
	r.failed(rocksdb.ErrCatchUpMoving, t0.Add(6*time.Second))
	if warnings() != 1 || !strings.Contains(out.String(), "kept changing") {
		t.Fatalf("after the max lag of postponements: %q; want one warning naming the error", out.String())
	}
	r.failed(errors.New("disk on fire"), t0.Add(30*time.Second))
	if warnings() != 1 {
		t.Fatalf("warned again within a minute: %s", out.String())
	}
	r.failed(errors.New("disk on fire"), t0.Add(67*time.Second))
	if warnings() != 2 || !strings.Contains(out.String(), "disk on fire") {
		t.Fatalf("a minute later: %q; want a second warning naming the latest error", out.String())
	}
}
