package db

import "slices"

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

// tuneForLoad tunes the index for a bulk load (on) or back: the families
// in writeOnly defer their level-0 compaction, and each family is offered
// the load's compression (the engine picks the families it applies to,
// and ignores those it does not hold). It is tuning, not data: a failure
// is logged, and the load goes on with the usual options.
func (d *DB) tuneForLoad(writeOnly []CF, on bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return
	}
	for _, cf := range d.cfs {
		if slices.Contains(writeOnly, cf) {
			if err := d.eng.DeferCompaction(cf, on); err != nil {
				d.log.Warn("changing when compaction starts", "subsystem", "db", "cf", cf.String(), "deferred", on, "err", err)
			}
		}
		if err := d.eng.LoadCompression(cf, on); err != nil {
			d.log.Warn("changing the last level's compression", "subsystem", "db", "cf", cf.String(), "load", on, "err", err)
		}
	}
}

// loadSmallBlocks gives the families in cfs small blocks while a bulk load
// reads them at random (on), or their usual blocks back. Tuning, like
// tuneForLoad: a failure is logged.
func (d *DB) loadSmallBlocks(cfs []CF, on bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return
	}
	for _, cf := range cfs {
		if slices.Contains(d.cfs, cf) {
			if err := d.eng.LoadSmallBlocks(cf, on); err != nil {
				d.log.Warn("changing the size of blocks", "subsystem", "db", "cf", cf.String(), "load", on, "err", err)
			}
		}
	}
}
