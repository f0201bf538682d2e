package db

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// The engines' packages import db, so db's own tests cannot import them;
// engines_ext_test.go (package db_test, same test binary) sets these.
var (
	OpenMemDB   func(Options) (*DB, error)
	OpenRocksDB func(Options) (*DB, error)
)

// Open opens the index of db's tests: in memory, as they test the index
// logic (the RocksDB specifics are tested in db/rocksdb), unless a test
// switches engines with onEngine.
func Open(o Options) (*DB, error) { return openEngine(o) }

var openEngine = func(o Options) (*DB, error) { return OpenMemDB(o) }

// onEngine runs fn with Open opening the given engine (db's tests do not
// run in parallel).
func onEngine(open func(Options) (*DB, error), fn func()) {
	saved := openEngine
	openEngine = open
	defer func() { openEngine = saved }()
	fn()
}

// The same blocks give byte-identical indexes on every engine, connected
// block by block, in bulk, and rolled back.
func TestEnginesIndexIdentically(t *testing.T) {
	chain := newSynthChain(11)
	for range 60 {
		chain.next("")
	}
	f := filterVariants[1].p
	var utxo []*DB
	for _, open := range []func(Options) (*DB, error){OpenMemDB, OpenRocksDB} {
		for _, bulk := range []bool{false, true} {
			var d *DB
			onEngine(open, func() { d = openTestDB(t) })
			x := newTestIndex(t, d, 20, f)
			if bulk {
				// A round per block (ingests over ingested rows), then one.
				bulkConnect(t, x, chain.blocks[:20], BulkOptions{RoundBytes: 1, CacheBytes: 1})
				bulkConnect(t, x, chain.blocks[20:50], BulkOptions{RoundBytes: 1 << 30})
			} else {
				connectAll(t, x, chain.blocks[:50])
			}
			connectAll(t, x, chain.blocks[50:])
			for range 5 {
				if _, _, err := x.DisconnectTip(chain.refill); err != nil {
					t.Fatal(err)
				}
			}
			utxo = append(utxo, d)
		}
	}
	for _, d := range utxo[1:] {
		assertIdentical(t, utxo[0], d)
	}

	eth := newEthSynth(12)
	for range 40 {
		eth.next("")
	}
	// Through the Ethereum tests' own helper, which follows its API.
	var idx []*EthIndex
	for _, open := range []func(Options) (*DB, error){OpenMemDB, OpenRocksDB} {
		onEngine(open, func() { idx = append(idx, newEthTestIndex(t, 10, eth.blocks)) })
	}
	diffs, err := Diff(idx[0].db, idx[1].db, ColumnFamilies(bchain.ChainEthereumType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}
