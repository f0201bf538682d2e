package rocksdb

// #include <malloc.h>
import "C"

import (
	"strconv"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// MemoryUse sums RocksDB's memory properties over cfs and reads glibc's
// allocator statistics (mallinfo2 walks every arena; it is meant for a
// metrics scrape, not a hot path).
func (e *engine) MemoryUse(cfs []db.CF) db.MemoryUse {
	var m db.MemoryUse
	if e.closed.Load() {
		return m
	}
	if e.opts.cache != nil {
		m.BlockCache = int64(e.opts.cache.GetUsage())
		m.Pinned = int64(e.opts.cache.GetPinnedUsage())
	}
	for _, cf := range cfs {
		h := e.handle(cf)
		if h == nil {
			continue
		}
		m.Memtables += e.intProperty("rocksdb.cur-size-all-mem-tables", h)
		m.TableReaders += e.intProperty("rocksdb.estimate-table-readers-mem", h)
	}
	mi := C.mallinfo2()
	m.MallocInUse = int64(mi.uordblks) + int64(mi.hblkhd)
	m.MallocFree = int64(mi.fordblks)
	return m
}

// intProperty reads a numeric property of a column family; 0 when RocksDB
// does not report it.
func (e *engine) intProperty(name string, h *grocksdb.ColumnFamilyHandle) int64 {
	n, _ := strconv.ParseInt(e.rdb.GetPropertyCF(name, h), 10, 64)
	return n
}

// ReleaseFreeMemory returns the free pages of every glibc arena to the
// system (malloc_trim releases whole free pages inside the arenas, not
// only at their tops).
func (e *engine) ReleaseFreeMemory() { C.malloc_trim(0) }
