package api

// runes_list.go: the explorer's list of runes (newest first, as ord's
// /runes lists them), its holder counts, and the runes each tx of an
// address's or account's list moved. The list reads the number rows, so
// a page reads only the entries it shows.

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
)

// runesView opens a view of a store that keeps the Runes index (else
// errRunesOff).
func (s *UtxoService) runesView() (*view, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	if err := runesOn(v.snap); err != nil {
		v.release()
		return nil, err
	}
	return v, nil
}

// RuneListEntry is a rune in the list: its entry, its cap (empty without
// terms or cap) and how many addresses hold it.
type RuneListEntry struct {
	RuneInfo
	Cap     string
	Holders uint64
}

// RuneList is a page of runes, newest (highest number) first.
type RuneList struct {
	Paging
	Count  uint64 // runes etched so far
	Height uint32 // the tip the page was read at
	Runes  []RuneListEntry
}

// RuneList answers page (from 1; past the end: the last) of size runes,
// newest first; the index must be on (else errRunesOff).
func (s *UtxoService) RuneList(_ context.Context, page, size int) (*RuneList, error) {
	v, err := s.runesView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	count, err := runes.ReadCount(v.snap)
	if err != nil {
		return nil, err
	}
	if count > 1<<40 {
		return nil, fmt.Errorf("%w: rune count %d", db.ErrCorrupt, count)
	}
	page, size, pages := clampPaging(page, size, int(count), s.cfg.Limits.MaxPageSize)
	out := &RuneList{Paging: Paging{Page: page, TotalPages: pages, ItemsOnPage: size}, Count: count, Height: v.tip.Height}
	start := uint64(page-1) * uint64(size)
	end := min(start+uint64(size), count)
	if end <= start {
		return out, nil
	}
	ids, err := runes.ReadIDsByNumber(v.snap, count-1-start, int(end-start))
	if err != nil {
		return nil, err
	}
	if uint64(len(ids)) != end-start {
		return nil, fmt.Errorf("%w: runes %d to %d lack number rows", db.ErrCorrupt, count-end, count-1-start)
	}
	for _, id := range ids {
		e, err := runes.ReadEntry(v.snap, id)
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, fmt.Errorf("%w: rune %s numbered but not etched", db.ErrCorrupt, id)
		}
		n, err := runes.ReadHolders(v.snap, id)
		if err != nil {
			return nil, err
		}
		r := RuneListEntry{RuneInfo: *runeInfo(e), Holders: n}
		if e.Terms != nil && e.Terms.Cap != nil {
			r.Cap = e.Terms.Cap.String()
		}
		out.Runes = append(out.Runes, r)
	}
	return out, nil
}

// RuneHolders answers how many addresses hold the rune of id (block:tx).
func (s *UtxoService) RuneHolders(_ context.Context, id string) (uint64, error) {
	rid, ok := parseRuneID(id)
	if !ok {
		return 0, userErr("rune id %q: not block:tx", truncate(id, 80))
	}
	v, err := s.runesView()
	if err != nil {
		return 0, err
	}
	defer v.release()
	return runes.ReadHolders(v.snap, rid)
}

// AddTxListRunes adds to the txs of an address's or account's list the
// runes of their inputs and outputs, as runes=true tx answers carry them:
// a confirmed tx's from the index, a pending one's as it would move them
// if mined next. A tx neither holds (gone in a reorg since the list was
// read) gets none.
func (s *UtxoService) AddTxListRunes(_ context.Context, txs []*Tx) error {
	if len(txs) == 0 {
		return nil
	}
	v, err := s.runesView()
	if err != nil {
		return err
	}
	defer v.release()
	var pr *pendingRunes
	for _, tx := range txs {
		txid, err := bchain.ParseHash(tx.Txid)
		if err != nil {
			return err
		}
		ta, err := db.ReadTxAddresses(v.snap, txid)
		if err != nil {
			return err
		}
		if ta != nil {
			if err := txRunes(v.snap, tx, ta); err != nil {
				return err
			}
			continue
		}
		if mtx := s.mempoolTx(txid); mtx != nil {
			if pr == nil {
				pr = s.pendingRunes(v)
			}
			if err := pr.pendingTxRunes(tx, mtx); err != nil {
				return err
			}
		}
	}
	return nil
}
