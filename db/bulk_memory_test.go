package db

import (
	"sync"
	"testing"
)

// memoryOptional is testOptional holding perBlock bytes for every block it
// connected, as runes' overlay holds rows until they are durable.
type memoryOptional struct {
	testOptional
	perBlock int64
	mu       sync.Mutex
	heights  []uint32
}

func (o *memoryOptional) ConnectBlock(w RowWriter, b *OptionalBlock) error {
	o.mu.Lock()
	o.heights = append(o.heights, b.Indexed.Height)
	o.mu.Unlock()
	return o.testOptional.ConnectBlock(w, b)
}

func (o *memoryOptional) PendingBytes(from uint32) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n int64
	for _, h := range o.heights {
		if h >= from {
			n += o.perBlock
		}
	}
	return n
}

// A round flushes once an optional index's memory for its blocks
// (MemoryUser) and its rows together reach its half of the budget: the
// same load takes more rounds when the index holds bytes, and reads the
// same.
func TestBulkRoundCountsOptionalMemory(t *testing.T) {
	chain := newSynthChain(8)
	for range 40 {
		chain.next("")
	}
	const roundBytes = 256 << 20 // the rows of 40 blocks are far below half
	ref := newTestIndex(t, openTestDB(t), 7, filterVariants[1].p)
	if on, err := ref.EnableOptional(testOptional{}, true); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	connectAll(t, ref, chain.blocks)
	rounds := map[int64]int{}
	for _, perBlock := range []int64{0, roundBytes / 2 / 10} {
		x := newTestIndex(t, openTestDB(t), 7, filterVariants[1].p)
		if on, err := x.EnableOptional(&memoryOptional{perBlock: perBlock}, true); err != nil || !on {
			t.Fatalf("enable: %v %v", on, err)
		}
		st := bulkConnect(t, x, chain.blocks, BulkOptions{RoundBytes: roundBytes, CacheBytes: 1 << 20})
		rounds[perBlock] = st.Rounds
		assertIdentical(t, x.db, ref.db)
	}
	// 10 blocks fill half the budget: rounds of 10 blocks.
	if rounds[0] != 1 || rounds[roundBytes/2/10] != 4 {
		t.Fatalf("rounds by bytes held per block: %v, want 1 without and 4 with", rounds)
	}
}
