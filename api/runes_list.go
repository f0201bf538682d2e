package api

// runes_list.go: the explorer's list of runes (newest first, as ord's
// /runes lists them), its holder counts, and the runes each tx of an
// address's or account's list moved. The list reads the number rows, so
// a page reads only the entries it shows.

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/mempool"
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

// runeCount opens a view with open and reads how many runes were etched
// in it (the lists' opening); the caller releases the view.
func runeCount(open func() (*view, error)) (*view, uint64, error) {
	v, err := open()
	if err != nil {
		return nil, 0, err
	}
	count, err := runes.ReadCount(v.snap)
	if err == nil && count > 1<<40 {
		err = fmt.Errorf("%w: rune count %d", db.ErrCorrupt, count)
	}
	if err != nil {
		v.release()
		return nil, 0, err
	}
	return v, count, nil
}

// newestRuneIDs reads the ids of the runes [start, end) of the newest
// first list of count, by a seek to the lowest number row among them.
func newestRuneIDs(v *view, count, start, end uint64) ([]runes.RuneID, error) {
	if end <= start {
		return nil, nil
	}
	ids, err := runes.ReadIDsByNumber(v.snap, count-1-start, int(end-start))
	if err != nil {
		return nil, err
	}
	if uint64(len(ids)) != end-start {
		return nil, fmt.Errorf("%w: runes %d to %d lack number rows", db.ErrCorrupt, count-end, count-1-start)
	}
	return ids, nil
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
	v, count, err := runeCount(s.runesView)
	if err != nil {
		return nil, err
	}
	defer v.release()
	page, size, pages := clampPaging(page, size, int(count), s.cfg.Limits.MaxPageSize)
	out := &RuneList{Paging: Paging{Page: page, TotalPages: pages, ItemsOnPage: size}, Count: count, Height: v.tip.Height}
	start := uint64(page-1) * uint64(size)
	ids, err := newestRuneIDs(v, count, start, min(start+uint64(size), count))
	if err != nil {
		return nil, err
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

// listRunes adds to txs the runes of their inputs and outputs, as
// runes=true tx answers carry them, in one answer's view and from the
// rows the answer read: a confirmed tx's from the index, a pending one's
// as it would move them if mined next. One serves an answer (a tx, or an
// address's or account's list with AddressQuery.ListRunes), one
// goroutine at a time: it reads the runes marker once and each rune's
// entry once. (A page of full txs, rendered on 8 goroutines, makes one
// per tx after checking the marker once.) A nil *listRunes adds nothing.
type listRunes struct {
	s       *UtxoService
	v       *view
	checked bool // the index keeps runes
	names   runeNames
	pr      *pendingRunes // made on the first pending tx
}

// newListRunes returns the answer's rune reader when on (else nil).
func (s *UtxoService) newListRunes(v *view, on bool) *listRunes {
	if !on {
		return nil
	}
	return &listRunes{s: s, v: v, names: runeNames{r: v.snap}}
}

// add adds tx's runes: from ta when confirmed, else from mtx when pending
// (neither: from the node, nothing to add); errRunesOff when the index
// keeps no runes.
func (l *listRunes) add(tx *Tx, ta *db.TxAddresses, mtx *mempool.Tx) error {
	if l == nil {
		return nil
	}
	if !l.checked {
		if err := runesOn(l.v.snap); err != nil {
			return err
		}
		l.checked = true
	}
	switch {
	case ta != nil:
		return txRunes(&l.names, tx, ta)
	case mtx == nil:
		return nil
	}
	if l.pr == nil {
		l.pr = l.s.pendingRunes(l.v)
	}
	return l.pr.pendingTxRunes(&l.names, tx, mtx)
}
