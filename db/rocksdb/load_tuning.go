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

// DeferCompaction moves cf's level-0 compaction triggers between their
// usual points and the deferred ones. RocksDB starts a level-0 compaction
// at a number of files or at a size (max_bytes_for_level_base, 256 MiB),
// whichever comes first; deferring only the number left the size to
// merge the runs of a 2 GB budget's load every 14 to 21 rounds.
func (e *engine) DeferCompaction(cf db.CF, deferred bool) error {
	h, err := e.writableHandle(cf)
	if h == nil {
		return err
	}
	files, bytes := level0CompactionTrigger, levelBaseBytes
	if deferred {
		files, bytes = deferredCompactionTrigger, deferredLevel0Bytes
	}
	if err := e.rdb.SetOptionsCF(h, []string{"level0_file_num_compaction_trigger", "max_bytes_for_level_base"},
		[]string{strconv.Itoa(files), strconv.FormatUint(bytes, 10)}); err != nil {
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
	if h == nil || !e.opts.recompressed(cf) {
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
