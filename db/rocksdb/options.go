package rocksdb

import (
	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// options is what an open engine owns besides the database: the DB-wide
// options, each column family's options, their table options and the block
// cache they all share.
type options struct {
	db     *grocksdb.Options
	cf     [db.NumCF]*grocksdb.Options // nil: a bare open, where db serves every family
	tables []*grocksdb.BlockBasedTableOptions
	cache  *grocksdb.Cache // nil for a bare open
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

func (o *options) destroy() {
	for i, c := range o.cf {
		if c != nil {
			c.Destroy()
			o.cf[i] = nil
		}
	}
	o.db.Destroy()
	for _, t := range o.tables {
		t.Destroy()
	}
	o.tables = nil
	if o.cache != nil {
		o.cache.Destroy()
		o.cache = nil
	}
}

// Compression of the bottommost level, which holds nearly all the data:
// zstd takes about 8% less space than LZ4 on these rows (docs/performance.md,
// "Compact index, step 2"). Levels above it, rewritten soon, keep the
// faster LZ4.
const (
	zstdLevel = 3
	// A family with Repetitive values trains a dictionary of dictBytes from
	// the first dictBufferBytes of each file, which bounds the memory a
	// compaction or a bulk-load run holds for it.
	dictBytes       = 16 << 10
	dictTrainBytes  = 100 * dictBytes
	dictBufferBytes = 4 << 20
)

func newOptions(o *db.Options) *options {
	cacheBytes := o.CacheBytes
	if cacheBytes <= 0 {
		cacheBytes = 64 << 20
	}
	out := &options{cache: grocksdb.NewLRUCache(uint64(cacheBytes))}

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
		out.cf[cf] = c
	}
	return out
}

// newTable returns the table options for a family read as s says.
func (o *options) newTable(s db.Storage) *grocksdb.BlockBasedTableOptions {
	t := grocksdb.NewDefaultBlockBasedTableOptions()
	t.SetBlockCache(o.cache)
	if s.Random || s.SmallReads {
		// A row (of txids, a balance, an address's latest txs) is read
		// alone; a small block is all a read decodes.
		t.SetBlockSize(4 << 10)
	} else {
		t.SetBlockSize(16 << 10)
	}
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

func tuneCompression(c *grocksdb.Options, s db.Storage) {
	if s.Random {
		c.SetCompression(grocksdb.NoCompression)
		return
	}
	c.SetCompression(grocksdb.LZ4Compression)
	c.SetBottommostCompression(grocksdb.ZSTDCompression)
	if !s.Repetitive {
		c.SetBottommostCompressionOptions(grocksdb.NewCompressionOptions(-14, zstdLevel, 0, 0), true)
		return
	}
	c.SetBottommostCompressionOptions(grocksdb.NewCompressionOptions(-14, zstdLevel, 0, dictBytes), true)
	c.SetBottommostCompressionOptionsZstdMaxTrainBytes(dictTrainBytes, true)
	c.SetBottommostCompressionOptionsMaxDictBufferBytes(dictBufferBytes, true)
}
