package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// boundTimes is the lower bound of an initial sync: the work no sync can
// avoid, done single-threaded with the blocks already in memory.
type boundTimes struct{ decode, build, ingest time.Duration }

func (b boundTimes) total() time.Duration { return b.decode + b.build + b.ingest }

// lowerBound decodes the raw blocks, builds the same rows the index writes
// (the same pure step and round code, with memory unbounded so that there is
// one round and every prevout comes from memory), then sorts them, writes
// them as SST files and ingests them into an empty database. Block filters
// are built with the sync's parameters.
func lowerBound(chainFile, dir string, filters db.FilterParams) (boundTimes, error) {
	raws, err := rawBlocks(chainFile)
	if err != nil {
		return boundTimes{}, err
	}
	return lowerBoundRaw(raws, btc.NewParser(&chaincfg.RegressionNetParams), "Regtest", "regtest", dir, filters)
}

// rawBlocks reads the chain file as serialized blocks.
func rawBlocks(chainFile string) ([][]byte, error) {
	chain, err := chaingen.ReadBlocksFile(chainFile)
	if err != nil {
		return nil, err
	}
	raws := make([][]byte, len(chain))
	for i, b := range chain {
		var buf bytes.Buffer
		if err := b.Serialize(&buf); err != nil {
			return nil, err
		}
		raws[i] = buf.Bytes()
	}
	return raws, nil
}

// lowerBoundRaw is lowerBound on raw blocks from height 0, decoded by the
// coin's parser into an index of coin on network.
func lowerBoundRaw(raws [][]byte, parser bchain.UtxoParser, coin, network, dir string, filters db.FilterParams) (boundTimes, error) {
	var t boundTimes
	var err error
	start := time.Now()
	blocks := make([]*bchain.Block, len(raws))
	for h, raw := range raws {
		if blocks[h], err = parser.ParseBlock(raw); err != nil {
			return t, err
		}
		blocks[h].Height = uint32(h)
	}
	t.decode = time.Since(start)

	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: coin, Network: network,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return t, err
	}
	defer d.Close()
	x, err := db.NewUtxoIndex(d, parser, 300, filters)
	if err != nil {
		return t, err
	}
	// 1 GiB of caches: the UTXO cache's 768 MiB never fills on these chains
	// (every prevout comes from memory), and the filter of written
	// addresses, which a one-round load on an empty index never consults,
	// stays at 64 MiB instead of costing page faults.
	l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: 1 << 40, CacheBytes: 1 << 30, Workers: 1})
	if err != nil {
		return t, err
	}
	start = time.Now()
	for _, b := range blocks {
		if err := l.ConnectBlock(b); err != nil {
			return t, err
		}
	}
	t.build = time.Since(start)
	stats, err := l.Finish()
	t.ingest = stats.FlushTime
	return t, err
}

// printBound prints the lower bounds and the ratio of a sync's time to
// them; indep is skipped when rows is 0.
func printBound(bound boundTimes, indep indepTimes, rows int, elapsed time.Duration) {
	fmt.Printf("lower bound, single-threaded on the same blocks (decode %.2f s + build rows %.2f s + sort, write and ingest SST %.2f s): %.2f s\n",
		bound.decode.Seconds(), bound.build.Seconds(), bound.ingest.Seconds(), bound.total().Seconds())
	fmt.Printf("ratio sync / lower bound: %.2f\n", elapsed.Seconds()/bound.total().Seconds())
	if rows == 0 {
		return
	}
	fmt.Printf("independent lower bound, no sync code, one core (decode %.2f s + build %d rows %.2f s + sort %.2f s + write and ingest SST %.2f s): %.2f s\n",
		indep.decode.Seconds(), rows, indep.build.Seconds(), indep.sort.Seconds(), indep.ingest.Seconds(), indep.total().Seconds())
	fmt.Printf("ratio sync / independent bound: %.2f; sync's own bound / independent bound: %.2f\n",
		elapsed.Seconds()/indep.total().Seconds(), bound.total().Seconds()/indep.total().Seconds())
}
