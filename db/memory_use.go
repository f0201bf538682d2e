package db

// MemoryUse is the native memory an engine holds, by part, in bytes; the
// parts an engine does not have are 0. It tells which part grows when the
// process's RSS goes over its budget (app/memory.go plans these parts).
type MemoryUse struct {
	BlockCache   int64 // the block cache's charge, index and filter blocks included
	Pinned       int64 // the part of it that readers and iterators hold
	Memtables    int64 // active and immutable memtables, summed over families
	TableReaders int64 // open table files' readers outside the block cache
	// The C allocator's heap: bytes handed out, and bytes free in it. Free
	// bytes are resident until trimmed (releaseFreeMemory); trimmed pages
	// still count here, so this bounds the fragmentation, not RSS.
	MallocInUse, MallocFree int64
}

// memoryReporter is implemented by engines that can account their memory.
type memoryReporter interface {
	MemoryUse(cfs []CF) MemoryUse
}

// MemoryUse reports the engine's native memory over the open families.
func (d *DB) MemoryUse() MemoryUse {
	d.mu.RLock()
	defer d.mu.RUnlock()
	r, ok := d.eng.(memoryReporter)
	if d.closed || !ok {
		return MemoryUse{}
	}
	return r.MemoryUse(d.cfs)
}

// memoryReleaser is implemented by engines whose allocator can give freed
// memory back to the system on request.
type memoryReleaser interface {
	ReleaseFreeMemory()
}

// releaseFreeMemory asks the engine to give back the memory its allocator
// holds free. A bulk load calls it after each round: the round's table
// files, written and ingested by many threads, leave freed memory spread
// over the C allocator's per-thread arenas, which it keeps otherwise.
func (d *DB) releaseFreeMemory() {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if r, ok := d.eng.(memoryReleaser); ok && !d.closed {
		r.ReleaseFreeMemory()
	}
}
