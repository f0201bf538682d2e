package main

import (
	"slices"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// utxoBound returns a lower bound of a UTXO list's warm time, timed as
// many times as the query (warm) on the index the query reads: only the
// index work the answer cannot do without, with no HTTP, mempool check,
// rendering or JSON. That is the scan of desc's addressUtxos rows and,
// for the blocks where its outputs come from more than one tx (the index
// keys them by txid; the answer lists them in block order), the read of
// desc's addresses rows there and of the txids of the txs paying an
// output index one of the block's outputs has (db.AddrPayingTxs, through
// a txid cache as the service's, warmed by one untimed pass).
func utxoBound(open opener, desc bchain.AddrDesc) func(warm int) ([]time.Duration, error) {
	return func(warm int) ([]time.Duration, error) {
		d, srv, err := open()
		if err != nil {
			return nil, err
		}
		srv.Close()
		defer d.Close()
		cache := db.NewTxidCache(txidCacheMB << 20)
		var out []time.Duration
		for i := range warm + 1 {
			t, err := utxoReads(d, cache, desc)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, t)
			}
		}
		return out, nil
	}
}

// utxoReads does and times utxoBound's reads once.
func utxoReads(d *db.DB, cache *db.TxidCache, desc bchain.AddrDesc) (time.Duration, error) {
	start := time.Now()
	snap, err := d.Snapshot()
	if err != nil {
		return 0, err
	}
	defer snap.Release()
	tip, ok, err := db.ReadTip(snap)
	if err != nil {
		return 0, err
	}
	snap.UseTxidCache(cache, tip, ok)
	type out struct {
		height, vout uint32
		txid         bchain.Hash
	}
	var outs []out
	err = db.IterateUtxos(snap, desc, func(u *db.Utxo) (bool, error) {
		outs = append(outs, out{u.Height, u.Vout, u.Txid})
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	var heights []uint32
	var vouts [][]uint32 // per height in heights
	var low []uint64     // per height: the set of its vouts below 64
	for i := 0; i < len(outs); {
		j, mixed := i+1, false
		for ; j < len(outs) && outs[j].height == outs[i].height; j++ {
			mixed = mixed || outs[j].txid != outs[i].txid
		}
		if mixed {
			var vs []uint32
			var set uint64
			for _, o := range outs[i:j] {
				if o.vout < 64 {
					set |= 1 << o.vout
				} else {
					vs = append(vs, o.vout)
				}
			}
			heights, vouts, low = append(heights, outs[i].height), append(vouts, vs), append(low, set)
		}
		i = j
	}
	pays := func(i int, vout uint32) bool {
		if vout < 64 {
			return low[i]&(1<<vout) != 0
		}
		return slices.Contains(vouts[i], vout)
	}
	if _, err := db.AddrPayingTxs(snap, desc, heights, pays); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
