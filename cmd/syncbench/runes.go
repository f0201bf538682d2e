package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// generateRunes writes the runes chain (chaingen.Runes: etchings, mints
// and transfers mixed with payments) to path.
func generateRunes(path string, blocks, txs int) error {
	g := chaingen.New(&chaincfg.RegressionNetParams, "runes")
	st, err := g.Runes(chaingen.RunesBenchSpec(&chaincfg.RegressionNetParams, blocks, txs))
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "runes chain: %d etchings, %d mints, %d transfers, %d payments\n",
		st.Etchings, st.Mints, st.Transfers, st.Payments)
	return chaingen.WriteBlocksFile(path, g.Blocks())
}

// printRunesRows prints the Runes index's rows of a stopped index by kind
// (the key's first byte, docs/schema.md#runes), raw bytes of keys and
// values, and per rune-moving tx (a 't' row each).
func printRunesRows(dir string) {
	if !*runesRows {
		return
	}
	d, err := openRO(dir)
	if err != nil {
		fmt.Println("  runes rows:", err)
		return
	}
	defer d.Close()
	snap, err := d.Snapshot()
	if err != nil {
		fmt.Println("  runes rows:", err)
		return
	}
	defer snap.Release()
	type kind struct{ rows, bytes int }
	kinds := map[byte]*kind{}
	err = db.Iterate(snap, db.CFRunes, nil, nil, func(k, v []byte) (bool, error) {
		if len(k) == 0 {
			return true, nil
		}
		c := kinds[k[0]]
		if c == nil {
			c = &kind{}
			kinds[k[0]] = c
		}
		c.rows++
		c.bytes += len(k) + len(v)
		return true, nil
	})
	if err != nil {
		fmt.Println("  runes rows:", err)
		return
	}
	moving := 0
	if c := kinds['t']; c != nil {
		moving = c.rows
	}
	keys := make([]int, 0, len(kinds))
	total := 0
	for k, c := range kinds {
		keys = append(keys, int(k))
		total += c.bytes
	}
	sort.Ints(keys)
	fmt.Printf("runes rows (raw key+value bytes; %d rune-moving txs, a 't' row each):\n", moving)
	for _, k := range keys {
		c := kinds[byte(k)]
		per := 0.0
		if moving > 0 {
			per = float64(c.bytes) / float64(moving)
		}
		fmt.Printf("  '%c': %d rows, %d B (%.1f B per rune-moving tx)\n", k, c.rows, c.bytes, per)
	}
	if moving > 0 {
		fmt.Printf("  all: %d B, %.1f B per rune-moving tx\n", total, float64(total)/float64(moving))
	}
}

var runesRows = flag.Bool("runesrows", false, "after the clean stop, print the Runes index's rows by kind and per rune-moving tx")
