package rocksdb

import (
	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// options is what an open engine owns besides the database: the DB-wide
// options, each column family's options, their table options and the block
// cache they all share.
type options struct {
	db *grocksdb.Options
	cf [db.NumCF]*grocksdb.Options // nil: a bare open, where db serves every family
	// overlapRun: a family's options for a bulk-load run ingested on top of
	// rows it already holds; nil where they are its usual ones (families
	// without compression, or Appended). See recompressed.
	overlapRun [db.NumCF]*grocksdb.Options
	tables     []*grocksdb.BlockBasedTableOptions
	cache      *grocksdb.Cache // nil for a bare open
	// sharedCache: cache belongs to the caller (a replica's instance
	// reopened over the same cache), destroy leaves it.
	sharedCache bool
}

// bareOptions are RocksDB's defaults, for opens that only read state.
func bareOptions() *options { return &options{db: grocksdb.NewDefaultOptions()} }

// forCF returns the options of a column family.
func (o *options) forCF(cf db.CF) *grocksdb.Options {
	if cf >= 0 && int(cf) < db.NumCF && o.cf[cf] != nil {
		return o.cf[cf]
	}
	return o.db
}

// forRun returns the options a bulk-load run of cf is written with. A run
// is compressed like the last level (zstd, with a trained dictionary for
// Repetitive families), but one into a family that already holds rows
// overlaps them (unless the family is Appended), so RocksDB ingests it at
// level 0 and a compaction rewrites it soon: such a run is compressed
// with LZ4 alone, like the upper levels. Training a dictionary for each
// round cost about a fifth of its flush on the whale chain, and zstd
// several times LZ4's CPU; the compaction that rewrites the run
// compresses the lasting file. A run into an empty family lands in the
// last level and keeps the last level's compression, unless a load is
// tuned (loadCompression: NewRun's holdsRows then says yes), whose
// compaction after it rewrites that run too. holdsRows is asked only for
// a family with other options for such runs.
func (o *options) forRun(cf db.CF, holdsRows func() bool) *grocksdb.Options {
	if o.recompressed(cf) && holdsRows() {
		return o.overlapRun[cf]
	}
	return o.forCF(cf)
}

// recompressed reports whether cf's files are compressed and its bulk-load
// runs overlap the rows it holds: compaction compresses those rows again,
// so a run gets LZ4 (forRun), a load may write the last level with LZ4
// (loadCompression), and Compact rewrites the last level with zstd.
func (o *options) recompressed(cf db.CF) bool {
	return cf >= 0 && int(cf) < db.NumCF && o.overlapRun[cf] != nil
}

func (o *options) destroy() {
	for _, set := range []*[db.NumCF]*grocksdb.Options{&o.cf, &o.overlapRun} {
		for i, c := range set {
			if c != nil {
				c.Destroy()
				set[i] = nil
			}
		}
	}
	o.db.Destroy()
	for _, t := range o.tables {
		t.Destroy()
	}
	o.tables = nil
	if o.cache != nil && !o.sharedCache {
		o.cache.Destroy()
	}
	o.cache = nil
}

// Compression of the bottommost level, which holds nearly all the data:
// zstd takes about 8% less space than LZ4 on these rows (docs/performance.md,
// "Compact index, step 2"). Levels above it, rewritten soon, keep the
// faster LZ4.
const (
	level0CompactionTrigger = 8
	// A bulk load defers the compaction of the families it only writes
	// (deferCompaction): each of its rounds adds one level-0 file,
	// and compacting them 8 at a time rewrote the level below, which holds
	// the whole family, every 8 rounds (at 12 M txs of the scale chain,
	// spends' 140 MB were rewritten 12 times). The compaction after the
	// load rewrites these families whole, so every compaction of them
	// during the load is work done twice; the trigger only bounds the
	// files a long load keeps open (a 2 GB budget's rounds hold about
	// 140,000 txs: a 20 M-tx load ingests 145 runs per family).
	deferredCompactionTrigger = 256
	// The size of level 0 that starts a compaction as well (RocksDB's
	// max_bytes_for_level_base, set to its default), and while a load
	// defers one: at 256 runs of about 15 MB, both bounds are near, and
	// a long load merges about 4 GiB at a time into a level below sized
	// the usual way (a larger base would make every merge rewrite the
	// whole family). At 20 M txs the largest deferred level 0
	// (addressUtxos) holds about 2.6 GB.
	levelBaseBytes      uint64 = 256 << 20
	deferredLevel0Bytes uint64 = 4 << 30
	// Writes stall only far above any trigger. The default stop (36 files)
	// is below the deferred trigger, where RocksDB would stop every write
	// without ever starting the compaction that ends the stall; and this
	// program's writes (a round's ingestion, a block's batch) never outrun
	// compaction enough to need the brake.
	level0SlowdownTrigger = 2 * deferredCompactionTrigger
	level0StopTrigger     = 3 * deferredCompactionTrigger

	zstdLevel = 3
	// A family with Repetitive values trains a dictionary of dictBytes from
	// the first dictBufferBytes of each file, which bounds the memory a
	// compaction or a bulk-load run holds for it.
	dictBytes       = 16 << 10
	dictTrainBytes  = 100 * dictBytes
	dictBufferBytes = 4 << 20
)

func newOptions(o *db.Options) *options { return newOptionsWithCache(o, nil) }

// newOptionsWithCache is newOptions reading through cache, which stays
// the caller's; nil: a new cache of o.CacheBytes, owned by the options.
func newOptionsWithCache(o *db.Options, cache *grocksdb.Cache) *options {
	out := &options{cache: cache, sharedCache: cache != nil}
	if cache == nil {
		cacheBytes := o.CacheBytes
		if cacheBytes <= 0 {
			cacheBytes = 64 << 20
		}
		out.cache = grocksdb.NewLRUCache(uint64(cacheBytes))
	}

	opts := grocksdb.NewDefaultOptions()
	opts.SetCreateIfMissing(true)
	opts.SetCreateIfMissingColumnFamilies(true)
	opts.SetLevelCompactionDynamicLevelBytes(true)
	opts.SetMaxBackgroundJobs(4)
	opts.SetBytesPerSync(8 << 20)
	wb := o.WriteBufferBytes
	if wb <= 0 {
		wb = 64 << 20
	}
	opts.SetWriteBufferSize(uint64(wb))
	opts.SetMaxWriteBufferNumber(2)
	opts.SetMaxTotalWalSize(512 << 20)
	// The rows written since the last memtable flush are in the WAL, and
	// stay there after a clean stop: after a short sync that is the whole
	// index (ethbench's 2,503-block chain: 4.9 of a 5.2 MB datadir, its
	// rows in no table file yet). zstd makes that WAL a quarter of its size
	// for a few tens of ms of CPU per 5 MB. (Flushing the memtables on
	// Close would empty it, but FlushCF waits while a flush would stall
	// writes, which after a cancelled compaction can hold a shutdown for
	// hours.)
	opts.SetWALCompression(grocksdb.ZSTDCompression)
	// A bulk round ingests one run per family, at level 0 where it overlaps
	// (hash keys overlap everything), and each level-0 compaction rewrites
	// the level below it. Compacting at 8 files, not 4, halves those
	// rewrites during a bulk load; at the tip, level-0 files come from
	// memtable flushes, which are rare, and Bloom filters keep the extra
	// files cheap to read past.
	opts.SetLevel0FileNumCompactionTrigger(level0CompactionTrigger)
	opts.SetMaxBytesForLevelBase(levelBaseBytes)
	opts.SetLevel0SlowdownWritesTrigger(level0SlowdownTrigger)
	opts.SetLevel0StopWritesTrigger(level0StopTrigger)
	// Flushes of all column families happen together, so a crash with the
	// WAL disabled (bulk loads) can never leave some families ahead of others.
	opts.SetAtomicFlush(true)
	if o.MaxOpenFiles > 0 {
		opts.SetMaxOpenFiles(o.MaxOpenFiles)
	} else {
		opts.SetMaxOpenFiles(-1)
	}
	out.db = opts

	tables := map[db.Storage]*grocksdb.BlockBasedTableOptions{}
	for cf := range db.NumCF {
		s := db.CF(cf).Storage()
		t := tables[s]
		if t == nil {
			t = out.newTable(s)
			tables[s] = t
		}
		c := opts.Clone()
		c.SetBlockBasedTableFactory(t)
		tuneCompression(c, s)
		if db.CF(cf).Merger() != nil {
			setMerger(c, db.CF(cf))
		}
		out.cf[cf] = c
		if !s.Random && !s.Appended {
			r := c.Clone()
			r.SetBottommostCompression(grocksdb.LZ4Compression)
			r.SetBottommostCompressionOptions(grocksdb.NewCompressionOptions(-14, 0, 0, 0), false)
			out.overlapRun[cf] = r
		}
	}
	return out
}

// newTable returns the table options for a family read as s says.
func (o *options) newTable(s db.Storage) *grocksdb.BlockBasedTableOptions {
	t := grocksdb.NewDefaultBlockBasedTableOptions()
	t.SetBlockCache(o.cache)
	t.SetBlockSize(blockBytes(s))
	if !s.Scanned {
		// Bloom filters make point lookups of absent keys (new addresses,
		// txs not yet seen) skip disk reads.
		t.SetFilterPolicy(grocksdb.NewBloomFilter(10))
	}
	t.SetCacheIndexAndFilterBlocks(true)
	t.SetCacheIndexAndFilterBlocksWithHighPriority(true)
	t.SetFormatVersion(5)
	o.tables = append(o.tables, t)
	return t
}

// smallBlockBytes is the block of a family whose reads take a row at a
// time, at random; other families have blocks of 16 KiB.
const smallBlockBytes = 4 << 10

// blockBytes is the data block size of a family stored as s says.
func blockBytes(s db.Storage) int {
	if s.Random || s.SmallReads {
		// A row (of txids, a balance, an address's latest txs) is read
		// alone; a small block is all a read decodes.
		return smallBlockBytes
	}
	return 16 << 10
}

func tuneCompression(c *grocksdb.Options, s db.Storage) {
	if s.Random {
		c.SetCompression(grocksdb.NoCompression)
		return
	}
	c.SetCompression(grocksdb.LZ4Compression)
	if s.Repetitive {
		setBottommostZstd(c, dictBytes)
	} else {
		setBottommostZstd(c, 0)
	}
}

// setBottommostZstd compresses the last level with zstd, with a trained
// dictionary of dict bytes if dict > 0.
func setBottommostZstd(c *grocksdb.Options, dict int) {
	c.SetBottommostCompression(grocksdb.ZSTDCompression)
	c.SetBottommostCompressionOptions(grocksdb.NewCompressionOptions(-14, zstdLevel, 0, dict), true)
	if dict > 0 {
		c.SetBottommostCompressionOptionsZstdMaxTrainBytes(dictTrainBytes, true)
		c.SetBottommostCompressionOptionsMaxDictBufferBytes(dictBufferBytes, true)
	} else {
		c.SetBottommostCompressionOptionsZstdMaxTrainBytes(0, true)
		c.SetBottommostCompressionOptionsMaxDictBufferBytes(0, true)
	}
}
