package mesh_test

import (
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// TestEventsAcrossRepeatedReorgs makes three reorgs over the same heights
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
	chain := make([]blockID, tip+1) // the index's chain as the test moves it
	for i, e := range want {
		chain[i] = e.BlockIdentifier
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
