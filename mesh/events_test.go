package mesh_test

import (
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// TestEventsAcrossReorg follows /events/blocks over a reorg of depth 2
// made with the real index code (blocks T-1 and T disconnected, two
// others connected in their place): the stream adds the chain, removes
// the two blocks, adds the new ones, and leaves the served chain; a
// second service over the same index (a restart, a replica) answers the
// same stream.
func TestEventsAcrossReorg(t *testing.T) {
	af := apitest.New(t, apitest.Options{})
	f := newFixtureOver(t, af, nil)
	tip := af.TipHeight()
	before := eventsOf(t, f)
	if len(before) != tip+1 {
		t.Fatalf("%d events before the reorg, the chain has %d blocks", len(before), tip+1)
	}

	x, err := db.NewUtxoIndex(af.DB, af.Parser, 300, af.BlockFilters)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := x.DisconnectTip(nil); err != nil {
			t.Fatal(err)
		}
	}
	prev := before[tip-2].BlockIdentifier.Hash
	for h := tip - 1; h <= tip; h++ {
		blk, err := af.Parser.ParseBlock(af.Raw[h])
		if err != nil {
			t.Fatal(err)
		}
		// Another block at h: the same txs under another hash.
		blk.Height, blk.Hash[0] = uint32(h), blk.Hash[0]^0xff
		if blk.Prev, err = bchain.ParseHash(prev); err != nil {
			t.Fatal(err)
		}
		if err := x.ConnectBlock(blk); err != nil {
			t.Fatal(err)
		}
		prev = blk.Hash.String()
	}

	after := eventsOf(t, f)
	id := func(h int) blockID { return before[h].BlockIdentifier }
	want := append(slices.Clone(before),
		meshcheck.BlockEvent{Sequence: int64(tip + 1), BlockIdentifier: id(tip), Type: "block_removed"},
		meshcheck.BlockEvent{Sequence: int64(tip + 2), BlockIdentifier: id(tip - 1), Type: "block_removed"},
		meshcheck.BlockEvent{Sequence: int64(tip + 3), BlockIdentifier: blockHashAt(t, f, tip-1), Type: "block_added"},
		meshcheck.BlockEvent{Sequence: int64(tip + 4), BlockIdentifier: blockHashAt(t, f, tip), Type: "block_added"})
	if !slices.Equal(after, want) {
		t.Errorf("events after the reorg:\n%v\nwant\n%v", after[tip-1:], want[tip-1:])
	}
	if after[tip+3].BlockIdentifier == id(tip-1) {
		t.Error("the new block has the old hash")
	}
	if again := eventsOf(t, newFixtureOver(t, af, nil)); !slices.Equal(again, after) {
		t.Errorf("another service over the same index answers another stream")
	}
	// Without an offset: the last events.
	var last struct {
		MaxSequence int64                  `json:"max_sequence"`
		Events      []meshcheck.BlockEvent `json:"events"`
	}
	if err := f.client.Call("/events/blocks", map[string]any{"limit": 3}, &last); err != nil {
		t.Fatal(err)
	}
	if last.MaxSequence != int64(tip+4) || !slices.Equal(last.Events, want[tip+2:]) {
		t.Errorf("the last 3 events: %+v", last)
	}
}

// TestEventsAcrossRepeatedReorgs makes reorgs over the same heights (73,
// so the log spans several of the reader's chunks)
// with the real index code (removing a block the previous reorg added, so
// a height has several removals in the log) and checks the whole stream,
// read in pages of 7 from the start and in windows at every offset,
// against the events the test itself made.
func TestEventsAcrossRepeatedReorgs(t *testing.T) {
	af := apitest.New(t, apitest.Options{})
	f := newFixtureOver(t, af, nil)
	tip := af.TipHeight()
	want := eventsOf(t, f)
	x, err := db.NewUtxoIndex(af.DB, af.Parser, 300, af.BlockFilters)
	if err != nil {
		t.Fatal(err)
	}
	chain := make([]blockID, 0, tip+1) // the index's chain as the test moves it
	for _, e := range want {
		chain = append(chain, e.BlockIdentifier)
	}
	disconnect := func(n int) {
		for range n {
			if _, _, err := x.DisconnectTip(nil); err != nil {
				t.Fatal(err)
			}
			top := chain[len(chain)-1]
			chain = chain[:len(chain)-1]
			want = append(want, meshcheck.BlockEvent{Sequence: int64(len(want)), BlockIdentifier: top, Type: "block_removed"})
		}
	}
	connect := func(n int, variant byte) {
		for range n {
			h := len(chain)
			blk, err := af.Parser.ParseBlock(af.Raw[h])
			if err != nil {
				t.Fatal(err)
			}
			blk.Height, blk.Hash[0] = uint32(h), blk.Hash[0]^variant
			if blk.Prev, err = bchain.ParseHash(chain[h-1].Hash); err != nil {
				t.Fatal(err)
			}
			if err := x.ConnectBlock(blk); err != nil {
				t.Fatal(err)
			}
			id := blockID{Index: int64(h), Hash: blk.Hash.String()}
			chain = append(chain, id)
			want = append(want, meshcheck.BlockEvent{Sequence: int64(len(want)), BlockIdentifier: id, Type: "block_added"})
		}
	}
	disconnect(2)
	connect(2, 0x11)
	disconnect(1)
	connect(1, 0x22)
	disconnect(3)
	connect(3, 0x33)
	// Many more removals at the tip than one chunk of the log reader holds:
	// every lower height's search must skip past them, and get the same.
	for i := range 70 {
		disconnect(1)
		connect(1, byte(0x40+i))
	}

	if got := eventsOf(t, f); !slices.Equal(got, want) {
		t.Errorf("events after three reorgs:\n%v\nwant\n%v", got[tip-3:], want[tip-3:])
	}
	for off := tip - 3; off < len(want); off++ {
		var page struct {
			MaxSequence int64                  `json:"max_sequence"`
			Events      []meshcheck.BlockEvent `json:"events"`
		}
		if err := f.client.Call("/events/blocks", map[string]any{"offset": off, "limit": 3}, &page); err != nil {
			t.Fatal(err)
		}
		if page.MaxSequence != int64(len(want)-1) || !slices.Equal(page.Events, want[off:min(off+3, len(want))]) {
			t.Errorf("events from %d: %+v, want %v", off, page, want[off:min(off+3, len(want))])
		}
	}
}

// eventsOf follows the whole stream (meshcheck checks it) and compares
// the chain it leaves with the served one.
func eventsOf(t *testing.T, f *fixture) []meshcheck.BlockEvent {
	t.Helper()
	evs, chain, err := f.client.Events(7) // pages that split the reorg's events
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Current blockID `json:"current_block_identifier"`
	}
	if err := f.client.Call("/network/status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if int64(len(chain)) != st.Current.Index+1 {
		t.Fatalf("the events leave %d blocks, the tip is %v", len(chain), st.Current)
	}
	for h, id := range chain {
		if got := blockHashAt(t, f, h); got != id {
			t.Fatalf("the events leave %v at %d, /block answers %v", id, h, got)
		}
	}
	return evs
}

func blockHashAt(t *testing.T, f *fixture, h int) blockID {
	t.Helper()
	var b struct {
		Block struct {
			BlockIdentifier blockID `json:"block_identifier"`
		} `json:"block"`
	}
	if err := f.client.Call("/block", map[string]any{"block_identifier": map[string]any{"index": h}}, &b); err != nil {
		t.Fatal(err)
	}
	return b.Block.BlockIdentifier
}
