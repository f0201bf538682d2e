package db

import (
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// PayingTx is a tx of a descriptor's addresses row at one height that pays
// the descriptor an output: its txid and its place in the block's order
// among the row's txs (0: the row's first tx in the block).
type PayingTx struct {
	Txid  bchain.Hash
	Place int32
}

// AddrPayingTxs reads desc's addresses rows at heights and returns, per
// height (heights[i]'s in out[i]), the row's txs paying desc an output
// index v for which pays(i, v) holds, with their places and txids: what
// orders a descriptor's UTXOs of one block (the addressUtxos keys order
// them by txid) as Blockbook and Electrum list them. The rows are read in
// one call and seen uncopied where the engine can (ManyVisitor), scanned
// without decoding their entries' indexes into slices, and only the kept
// txs' txids are resolved (FillRowsTxids: one more read, or the txid
// cache): listing a whale's UTXOs reads hundreds of rows of tens of txs,
// and decoding them whole and mapping every kept tx by txid was most of
// that answer's time. A height without a row has none.
func AddrPayingTxs(r Reader, desc bchain.AddrDesc, heights []uint32, pays func(i int, vout uint32) bool) ([][]PayingTx, error) {
	keys := make([][]byte, len(heights))
	for i, h := range heights {
		keys[i] = addressesKey(desc, h)
	}
	// Each row's kept txs and their places are scanned into scratch, then
	// copied to slabs: one slice grown for all rows' would be reallocated
	// again and again (a whale's UTXOs keep ~11,000 txs of ~360 rows).
	var scratch []AddrTx
	var scratchPlaces []int32
	var slab []AddrTx
	var placeSlab []int32
	kept := make([][]AddrTx, len(heights))
	places := make([][]int32, len(heights))
	total, seen := 0, 0
	err := visitMany(r, CFAddresses, keys, func(i int, v []byte) error {
		var n int32
		var err error
		scratch, scratchPlaces, n, err = scanPayingTxs(v, i, pays, scratch[:0], scratchPlaces[:0])
		if err != nil {
			return fmt.Errorf("address %s height %d: %w", desc, heights[i], err)
		}
		seen++
		k := len(scratch)
		if k == 0 {
			return nil
		}
		if cap(slab)-len(slab) < k {
			// Room for the rows left if they keep as many, within a slab.
			c := max(k, min(payingSlab, k*(len(heights)-seen+1)))
			slab, placeSlab = make([]AddrTx, 0, c), make([]int32, 0, c)
		}
		start := len(slab)
		slab, placeSlab = append(slab, scratch...), append(placeSlab, scratchPlaces...)
		kept[i], places[i] = slab[start:len(slab):len(slab)], placeSlab[start:len(slab):len(slab)]
		for j := range places[i] {
			places[i][j] = n - 1 - places[i][j] // stored in reverse block order
		}
		total += k
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows := make([]AddrTxsAt, 0, len(heights))
	for i, txs := range kept {
		if len(txs) > 0 {
			rows = append(rows, AddrTxsAt{Height: heights[i], Txs: txs})
		}
	}
	if err := FillRowsTxids(r, rows); err != nil {
		return nil, fmt.Errorf("address %s: %w", desc, err)
	}
	all := make([]PayingTx, 0, total)
	out := make([][]PayingTx, len(heights))
	for i, txs := range kept {
		start := len(all)
		for j := range txs {
			all = append(all, PayingTx{Txid: txs[j].Txid, Place: places[i][j]})
		}
		out[i] = all[start:len(all):len(all)]
	}
	return out, nil
}

// payingSlab is how many kept txs AddrPayingTxs allocates room for at a
// time.
const payingSlab = 4096

// scanPayingTxs appends to kept the txs of the addresses row v (nil: no
// row) that pay an output index pays(i, ·) accepts, their positions in
// the row to places, and returns the row's tx count. It checks the row as
// unpackAddrTxs does, without making its entries.
func scanPayingTxs(v []byte, i int, pays func(int, uint32) bool, kept []AddrTx, places []int32) ([]AddrTx, []int32, int32, error) {
	if v == nil {
		return kept, places, 0, nil
	}
	d := decoder{b: v, rec: "addresses"}
	var n int32
	prev := ^uint32(0)
	for d.more() {
		index := d.uvarint32()
		if n > 0 && d.e == nil && index >= prev {
			d.fail("tx index %d after %d", index, prev)
		}
		prev = index
		codes := d.count(1)
		if codes == 0 {
			d.fail("tx without indexes")
		}
		paying := false
		for range codes {
			c := d.uvarint()
			if c>>1 > 0x7fffffff {
				d.fail("index %d out of range", c>>1)
			}
			if !paying && c&1 == 0 && d.e == nil {
				paying = pays(i, uint32(c>>1))
			}
		}
		if paying && d.e == nil {
			kept, places = append(kept, AddrTx{Index: index}), append(places, n)
		}
		n++
	}
	return kept, places, n, d.done()
}
