package db

// pendingCompactor is implemented by engines that can tell how many bytes
// their background compaction still has to rewrite (RocksDB's estimate).
type pendingCompactor interface {
	PendingCompactionBytes(cf CF) (int64, bool)
}

// CompactionDebt sums, over the column families, the level-0 table files
// and the estimated bytes pending compaction: how far background
// compaction lags behind the writes. Both are 0 for engines without them.
func (d *DB) CompactionDebt() (level0 int, pendingBytes int64) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return 0, 0
	}
	pc, _ := d.eng.(pendingCompactor)
	for _, cf := range d.cfs {
		if n, ok := d.eng.Level0Files(cf); ok {
			level0 += n
		}
		if pc != nil {
			if n, ok := pc.PendingCompactionBytes(cf); ok {
				pendingBytes += n
			}
		}
	}
	return level0, pendingBytes
}
