package rocksdb

import (
	"fmt"
	"strconv"

	"github.com/openexplorer/blockbook/db"
)

// The tuning a bulk load applies to a family while it runs (db.Engine's
// DeferCompaction, LoadCompression and LoadSmallBlocks). None is
// persisted: an open always starts with the usual options, so a load
// killed while tuned leaves nothing behind but files that a later
// compaction rewrites.

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
//
// The load's runs get LZ4 too (forRun), even a first run into an empty
// family, which lands in the last level: that Compact rewrites it like
// the rest. With zstd and a dictionary trained for the file, such a run
// cost 2 to 8 times an LZ4 one (BenchmarkRunWrite, docs/performance.md).
func (e *engine) LoadCompression(cf db.CF, load bool) error {
	h, err := e.writableHandle(cf)
	if h == nil || !e.opts.recompressed(cf) {
		return err
	}
	e.loadRuns[cf].Store(load)
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

// LoadSmallBlocks switches the data blocks of cf's new files between
// small ones (load) and the family's usual size. A bulk load reads
// txAddresses a row at a time, at random (the prevouts its UTXO cache
// lacks), and a read on a table file copies and checksums a whole block:
// at 20 M txs those reads took a third of their time copying 16 KiB
// blocks (docs/performance.md, steps 12 and 13). Queries keep the usual
// blocks, whose index is a quarter of the size: only a family whose every
// file the next Compact rewrites (recompressed) gets small blocks, and
// only while the load runs.
//
// RocksDB documents block_size as changeable by SetOptions. Before 9.9 it
// is set on the family's table factory in place, a race with the table
// builders that copy the options (facebook/rocksdb#10079), which a
// maintainer judged acceptable for options of 64 bits or less that are
// not pointers, such as this one.
func (e *engine) LoadSmallBlocks(cf db.CF, load bool) error {
	h, err := e.writableHandle(cf)
	if h == nil || !e.opts.recompressed(cf) {
		return err
	}
	size := blockBytes(cf.Storage())
	if size <= smallBlockBytes {
		return nil
	}
	if load {
		size = smallBlockBytes
	}
	if err := e.rdb.SetOptionsCF(h, []string{"block_based_table_factory"}, []string{fmt.Sprintf("{block_size=%d}", size)}); err != nil {
		return fmt.Errorf("rocksdb: block size of %s: %w", cf, err)
	}
	return nil
}
