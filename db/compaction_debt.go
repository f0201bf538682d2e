package db

import "fmt"

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

// tuneForLoad sets each family's tuning for a bulk load to tuning(cf)
// (the zero LoadTuning: the usual options); the engine applies the parts
// that concern the family, in one step, and ignores families it does not
// hold. It is tuning, not data: a failure is logged, and the load goes on
// with the options the family had.
func (d *DB) tuneForLoad(tuning func(CF) LoadTuning) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return
	}
	for _, cf := range d.cfs {
		t := tuning(cf)
		if err := d.eng.TuneForLoad(cf, t); err != nil {
			d.log.Warn("tuning a family for a bulk load", "subsystem", "db", "cf", cf.String(), "tuning", fmt.Sprintf("%+v", t), "err", err)
		}
	}
}
