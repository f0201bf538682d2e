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

// A small round counts what its rows hold, not 1 MiB per column family:
// the rows of 40 small blocks are far below a round of 8 MiB (4 MiB while
// another round flushes), one round. With whole 1 MiB arena chunks every
// block's families filled it, a round per block (at the 64 MB default
// budget, 14.4 MiB, the twenty-odd families of a Bitcoin block with block
// filters did: TestE2EBlockFilters loaded 240 blocks in 240 rounds).
func TestBulkSmallRoundsAreNotOneBlock(t *testing.T) {
	chain := newSynthChain(8)
	for range 40 {
		chain.next("")
	}
	ref := newTestIndex(t, openTestDB(t), 7, filterVariants[1].p)
	connectAll(t, ref, chain.blocks)
	x := newTestIndex(t, openTestDB(t), 7, filterVariants[1].p)
	st := bulkConnect(t, x, chain.blocks, BulkOptions{RoundBytes: 8 << 20, CacheBytes: 1 << 20})
	if st.Rounds != 1 {
		t.Fatalf("%d rounds for %d blocks, want 1", st.Rounds, st.Blocks)
	}
	assertIdentical(t, x.db, ref.db)
}

// cfRows.bytes is the memory its arena and references hold: a few rows
// hold a few KiB, and however many rows, the arena holds at least their
// bytes and at most about twice (chunks double up to arenaChunk).
func TestCfRowsBytes(t *testing.T) {
	var c cfRows
	c.add(make([]byte, 30), make([]byte, 10), opPut)
	if b := c.bytes(); b > firstArenaChunk+256*32 {
		t.Fatalf("one row holds %d bytes", b)
	}
	payload := 40
	for payload < 5*arenaChunk {
		c.add(make([]byte, 30), make([]byte, 10), opPut)
		payload += 40
	}
	refs := int64(c.n) * 32
	if b := c.bytes(); b < int64(payload)+refs || b > 2*int64(payload)+2*refs+arenaChunk {
		t.Fatalf("%d rows of %d bytes in all: bytes() %d", c.n, payload, b)
	}
}
