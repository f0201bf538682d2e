package app

import (
	"math"
	"runtime/debug"
)

// memoryPlan divides the -syncmemory budget of the sync among its users so
// that the process's peak RSS stays within it whatever the chain size:
//
//	1/8  RocksDB block cache while bulk loading (then back to -dbcache)
//	1/8  RocksDB memtables (two per column family)
//	1/8  other native memory: table builders and readers, compaction buffers
//	5/8  the Go heap, enforced with a soft memory limit while bulk loading;
//	     3/4 of it for the sync worker (blocks fetched ahead, UTXO cache,
//	     a round's rows), the rest is the garbage collector's headroom
type memoryPlan struct {
	blockCache  int64
	writeBuffer int64 // per memtable
	goLimit     int64
	syncWorker  int64
}

func planMemory(budget int64, columnFamilies int) memoryPlan {
	eighth := budget / 8
	p := memoryPlan{blockCache: eighth, writeBuffer: eighth / int64(2*max(columnFamilies, 1))}
	p.goLimit = budget - 3*eighth
	p.syncWorker = p.goLimit * 3 / 4
	return p
}

// bulkMemory returns the sync worker's OnBulk hook: during a bulk load the
// block cache shrinks to its share and the Go heap gets a soft limit; after
// it, the operator's -dbcache applies again.
func (p memoryPlan) bulkMemory(setCache func(int64), dbCache int64) func(bool) {
	return func(active bool) {
		if active {
			setCache(p.blockCache)
			// The loader's live memory is bounded by its shares; the soft
			// limit caps the heap, and the collector keeps its normal pace
			// below it (gcPercentBulk).
			debug.SetMemoryLimit(p.goLimit)
			debug.SetGCPercent(gcPercentBulk)
			return
		}
		setCache(dbCache)
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// gcPercentBulk is the collector's pace during a bulk load, under the soft
// limit. With the collector off (-1) until the limit, a large budget let
// the heap grow through gigabytes of fresh pages that the kernel must
// zero and fault in one by one; that made a one-round sync slower than
// one of several rounds. Collecting at twice the live heap reuses warm
// pages and costs work proportional to what is allocated.
const gcPercentBulk = 100
