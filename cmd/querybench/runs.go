package main

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/querytime"
)

// Flags of the query lists (see main).
var (
	// runs is -runs: the query list is timed this many times, the
	// queries alternating within each run (querytime.Options).
	runs int
	// only is -only: time only the queries whose name matches.
	only *regexp.Regexp
	// memProfile is -memprofile: an allocation profile written at the end.
	memProfile string
)

// utxoTarget is the UTXO count of the second UTXO query's address: the
// one issue 46 measured Blockbook against had 411.
const utxoTarget = 411

// Aliases of the shared harness's types, as both modes name them.
type (
	opener = querytime.Opener
	query  = querytime.Query
)

// timeQueries times the list in -runs alternating runs (-only's subset)
// and writes -memprofile.
func timeQueries(open opener, queries []query, cold, warm int) error {
	if err := querytime.TimeQueries(open, queries, cold, warm, querytime.Options{Runs: runs, Only: only}); err != nil {
		return err
	}
	return writeMemProfile()
}

func writeMemProfile() error {
	if memProfile == "" {
		return nil
	}
	runtime.GC() // up-to-date statistics
	f, err := os.Create(memProfile)
	if err != nil {
		return err
	}
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	return errors.Join(err, f.Close())
}

// closestUtxoCount picks from the unspent outputs' descriptors the one
// whose count is closest to utxoTarget (ties: the smaller descriptor),
// returned with the count in txs.
func closestUtxoCount(unspent map[wire.OutPoint]string) busiest {
	count := map[string]int{}
	for _, d := range unspent {
		count[d]++
	}
	var best busiest
	for d, n := range count {
		best = closer(best, bchain.AddrDesc(d), n)
	}
	return best
}

// closer returns best or (desc, n), whichever count is closer to
// utxoTarget (ties: the smaller descriptor).
func closer(best busiest, desc bchain.AddrDesc, n int) busiest {
	dist := func(n int) int { return max(n-utxoTarget, utxoTarget-n) }
	if best.txs == 0 || dist(n) < dist(best.txs) || (dist(n) == dist(best.txs) && string(desc) < string(best.desc)) {
		return busiest{desc: bytes.Clone(desc), txs: n}
	}
	return best
}
