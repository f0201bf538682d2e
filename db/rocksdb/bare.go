package rocksdb

import "github.com/openexplorer/blockbook/db"

// OpenEngine opens the RocksDB engine of an index without the index layer
// over it (no format checks, no recovery): for a benchmark that writes and
// ingests its own runs (cmd/syncbench's independent bound).
func OpenEngine(o db.Options) (db.Engine, error) { return openEngine(o) }
