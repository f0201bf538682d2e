package rocksdb

import (
	"fmt"
	"strconv"

	"github.com/openexplorer/blockbook/db"
)

// The tuning a bulk load applies to a family while it runs (db.Engine's
// DeferCompaction and LoadCompression). Neither is persisted: an open
// always starts with the usual options, so a load killed while tuned
// leaves nothing behind but files that a later compaction rewrites.

// DeferCompaction moves cf's level-0 compaction trigger between its usual
// point and deferredCompactionTrigger.
func (e *engine) DeferCompaction(cf db.CF, deferred bool) error {
	h, err := e.writableHandle(cf)
	if h == nil {
		return err
	}
	trigger := level0CompactionTrigger
	if deferred {
		trigger = deferredCompactionTrigger
	}
	if err := e.rdb.SetOptionsCF(h, []string{"level0_file_num_compaction_trigger"}, []string{strconv.Itoa(trigger)}); err != nil {
		return fmt.Errorf("rocksdb: compaction trigger of %s: %w", cf, err)
	}
	return nil
}

// LoadCompression switches the compression of cf's last level between
// LZ4 (load) and its usual zstd. A bulk load's compactions rewrite the
// last level of a family keyed at random every few rounds, and zstd (with
// a dictionary trained for each file) cost several times LZ4's CPU there;
// the compaction after the load, which rewrites the family anyway, is
// made to rewrite every last-level file with zstd (Compact). Families
// without compression, or whose runs land in the last level as they are
// (Storage.Appended), are left alone.
func (e *engine) LoadCompression(cf db.CF, load bool) error {
	h, err := e.writableHandle(cf)
	if h == nil || e.opts.overlapRun[cf] == nil {
		return err
	}
	// The last level's options (level, dictionary) stay set; disabling
	// them makes the level use the upper levels' plain options.
	compression, opts := "kZSTD", "{enabled=true}"
	if load {
		compression, opts = "kLZ4Compression", "{enabled=false}"
	}
	if err := e.rdb.SetOptionsCF(h, []string{"bottommost_compression", "bottommost_compression_opts"}, []string{compression, opts}); err != nil {
		return fmt.Errorf("rocksdb: last-level compression of %s: %w", cf, err)
	}
	return nil
}
