package db

import (
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// Reading a descriptor's addresses rows newest first, in batches.

// AddrTxsAt is one addresses row: the txs of one descriptor in one block,
// in Blockbook's order (see blockbookOrder).
type AddrTxsAt struct {
	Height uint32
	Txs    []AddrTx
}

// IterateAddrTxs visits a descriptor's rows from height `from` (inclusive)
// down to height `to` (inclusive), newest block first, until fn returns
// false. Within a row the txs come in Blockbook's order, each with its
// txid (one blockTxids read per tx).
func IterateAddrTxs(r Reader, desc bchain.AddrDesc, from, to uint32, fn func(AddrTxsAt) (bool, error)) error {
	return iterateAddrTxs(r, desc, from, to, true, 0, fn)
}

// IterateAddrTxPositions is IterateAddrTxs without the txids (Txid is
// zero; ReadTxidAt(row.Height, tx.Index) gives it), for callers that skip
// most entries, such as a deep page of a long history.
func IterateAddrTxPositions(r Reader, desc bchain.AddrDesc, from, to uint32, fn func(AddrTxsAt) (bool, error)) error {
	return iterateAddrTxs(r, desc, from, to, false, 0, fn)
}

// IterateAddrTxPositionsWant is IterateAddrTxPositions for a caller that
// expects to take about `want` entries: the first scan ends once it holds
// that many, rather than at addrRowsBatch rows (a page of 1,000 txs of a
// busy address is ~30 rows).
func IterateAddrTxPositionsWant(r Reader, desc bchain.AddrDesc, from, to uint32, want int, fn func(AddrTxsAt) (bool, error)) error {
	return iterateAddrTxs(r, desc, from, to, false, want, fn)
}

func iterateAddrTxs(r Reader, desc bchain.AddrDesc, from, to uint32, txids bool, want int, fn func(AddrTxsAt) (bool, error)) error {
	return scanAddrRows(r, desc, from, to, txids, want, func(h uint32, txs []AddrTx) (bool, error) {
		return fn(AddrTxsAt{Height: h, Txs: blockbookOrder(txs)})
	})
}

// addrRowsBatch is how many addresses rows scanAddrRows decodes per scan
// (a variable so that tests cross batch boundaries on small chains).
var addrRowsBatch = 64

// scanAddrRows visits desc's rows from height `from` down to `to`
// (inclusive) as stored, with their txids when txids is set, until fn
// returns false. It reads the rows in batches and calls fn (and reads the
// txids) with no scan open: a read nested in a scan would take the
// database's read lock twice, which blocks for good once Close waits for
// it. The snapshot keeps the batches consistent. With want > 0 the first
// batch ends once it holds want entries (IterateAddrTxPositionsWant).
func scanAddrRows(r Reader, desc bchain.AddrDesc, from, to uint32, txids bool, want int, fn func(uint32, []AddrTx) (bool, error)) error {
	// Rows are decoded as fn takes them, not as scanned: a page ends
	// within a batch, often in its first half. With want, the first
	// batch's rows are decoded as scanned instead, to count their entries.
	type row struct {
		h    uint32
		from int // v is vals[from:to], or txs when decoded
		to   int
		txs  []AddrTx
	}
	prefix := descPrefix(desc, 0)
	rows := make([]row, 0, addrRowsBatch)
	var vals []byte // the batch's values, one buffer reused by each batch
	for {
		rows, vals = rows[:0], vals[:0]
		more, entries := false, 0
		err := r.iterate(CFAddresses, addressesKey(desc, from), prefix, func(k, v []byte) (bool, error) {
			_, h, err := unpackAddressesKey(k)
			if err != nil || h < to {
				return false, err
			}
			if len(rows) == addrRowsBatch || (want > 0 && entries >= want) {
				more = true
				return false, nil
			}
			if want > 0 {
				txs, err := unpackAddrTxs(v) // copies what it keeps
				if err != nil {
					return false, fmt.Errorf("address %s height %d: %w", desc, h, err)
				}
				rows = append(rows, row{h: h, txs: txs})
				entries += len(txs)
				return true, nil
			}
			rows = append(rows, row{h: h, from: len(vals), to: len(vals) + len(v)})
			vals = append(vals, v...)
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, rw := range rows {
			txs := rw.txs
			if txs == nil {
				if txs, err = unpackAddrTxs(vals[rw.from:rw.to]); err != nil { // copies what it keeps
					return fmt.Errorf("address %s height %d: %w", desc, rw.h, err)
				}
			}
			if txids {
				if err := fillTxids(r, rw.h, txs); err != nil {
					return fmt.Errorf("address %s height %d: %w", desc, rw.h, err)
				}
			}
			if ok, err := fn(rw.h, txs); err != nil || !ok {
				return err
			}
		}
		if !more {
			return nil
		}
		// A row below the batch exists, so the last height is above 0.
		from, want = rows[len(rows)-1].h-1, 0 // more than expected: whole batches
	}
}
