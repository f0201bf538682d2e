package rocksdb

import (
	"fmt"
	"strconv"

	"github.com/openexplorer/blockbook/db"
)

// The tuning a bulk load applies to a family while it runs
// (db.Engine's TuneForLoad). None is persisted: an open always starts
// with the usual options, so a load killed while tuned leaves nothing
// behind but files that a later compaction rewrites.

// TuneForLoad sets cf's tuning to t with one SetOptions call for the parts
// that change: each call rewrites the OPTIONS file, every family's options
// serialized (0.15 to 0.33 s of CPU in a profile of the whale chain's
// sync when each part was a call of its own, docs/performance.md).
func (e *engine) TuneForLoad(cf db.CF, t db.LoadTuning) error {
	h, err := e.writableHandle(cf)
	if h == nil {
		return err
	}
	e.tuningMu.Lock()
	defer e.tuningMu.Unlock()
	cur := e.tuning[cf]
	var keys, values []string
	if t.DeferCompaction != cur.DeferCompaction {
		keys, values = deferCompaction(keys, values, t.DeferCompaction)
	}
	if e.opts.recompressed(cf) {
		if t.Compression != cur.Compression {
			keys, values = loadCompression(keys, values, t.Compression)
		}
		if t.SmallBlocks != cur.SmallBlocks && blockBytes(cf.Storage()) > smallBlockBytes {
			keys, values = loadSmallBlocks(keys, values, cf, t.SmallBlocks)
		}
	}
	if len(keys) > 0 {
		if err := e.rdb.SetOptionsCF(h, keys, values); err != nil {
			return fmt.Errorf("rocksdb: load tuning %+v of %s: %w", t, cf, err)
		}
	}
	// Only once RocksDB took the options: a failed switch must not leave
	// runs written for a compaction the family's options do not plan.
	if e.opts.recompressed(cf) {
		e.loadRuns[cf].Store(t.Compression)
	}
	e.tuning[cf] = t
	return nil
}

// deferCompaction moves a family's level-0 compaction triggers between their
// usual points and the deferred ones. RocksDB starts a level-0 compaction
// at a number of files or at a size (max_bytes_for_level_base, 256 MiB),
// whichever comes first; deferring only the number left the size to
// merge the runs of a 2 GB budget's load every 14 to 21 rounds.
func deferCompaction(keys, values []string, deferred bool) ([]string, []string) {
	files, bytes := level0CompactionTrigger, levelBaseBytes
	if deferred {
		files, bytes = deferredCompactionTrigger, deferredLevel0Bytes
	}
	return append(keys, "level0_file_num_compaction_trigger", "max_bytes_for_level_base"),
		append(values, strconv.Itoa(files), strconv.FormatUint(bytes, 10))
}

// loadCompression switches the compression of a family's last level between
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
func loadCompression(keys, values []string, load bool) ([]string, []string) {
	// The last level's options (level, dictionary) stay set; disabling
	// them makes the level use the upper levels' plain options.
	compression, opts := "kZSTD", "{enabled=true}"
	if load {
		compression, opts = "kLZ4Compression", "{enabled=false}"
	}
	return append(keys, "bottommost_compression", "bottommost_compression_opts"), append(values, compression, opts)
}

// loadSmallBlocks switches the data blocks of a family's new files between
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
func loadSmallBlocks(keys, values []string, cf db.CF, load bool) ([]string, []string) {
	size := blockBytes(cf.Storage())
	if load {
		size = smallBlockBytes
	}
	return append(keys, "block_based_table_factory"), append(values, fmt.Sprintf("{block_size=%d}", size))
}
