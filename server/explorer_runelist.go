package server

import (
	"cmp"
	"context"
	"html/template"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// The explorer's runes beyond explorer_runes.go: the /runes list, the
// runes each listed tx moved for the address or account of the page (the
// answer's, api.AddressQuery.ListRunes), and its pending rune balances.

// runeLister is what these pages ask of the index (api.UtxoService).
type runeLister interface {
	RuneList(ctx context.Context, page, size int) (*api.RuneList, error)
}

// explorerRunesPerPage is the list's page size (ord's /runes pages 50).
const explorerRunesPerPage = 50

// lister returns the index's list queries when the index is on, else nil.
func (e *explorer) lister(ctx context.Context) (runeLister, error) {
	x, err := e.runes(ctx)
	if x == nil || err != nil {
		return nil, err
	}
	l, _ := x.(runeLister)
	return l, nil
}

// errNoRuneList is the list's answer without the index.
var errNoRuneList = &api.Error{Msg: "This explorer keeps no Runes index, so it has no list of runes (the server runs without -runesindex).", Err: api.ErrNotFound}

// runeList is /runes: every rune, newest first, a page at a time.
func (e *explorer) runeList(r *http.Request) (*result, error) {
	l, err := e.lister(r.Context())
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, errNoRuneList
	}
	list, err := l.RuneList(r.Context(), pageParam(r), explorerRunesPerPage)
	if err != nil {
		return nil, err
	}
	return &result{tmpl: "runelist", title: "Runes", page: list,
		pager: newPager(r, list.Page, list.TotalPages, false)}, nil
}

// runeMove is what a listed tx did to one rune of the page's address.
type runeMove struct {
	ID, SpacedName string
	Delta          string // signed atomic units
	Text           string // signed, with divisibility and symbol
	Neg            bool
}

// signedRunes sums own outputs' runes minus own inputs' runes by rune id
// (ok false: none of them had runes).
func signedRunes(ins, outs [][]api.RuneBalance) ([]runeMove, bool) {
	sums := map[string]*big.Int{}
	info := map[string]api.RuneBalance{}
	add := func(bs []api.RuneBalance, sign int) {
		for _, b := range bs {
			v, ok := new(big.Int).SetString(b.Amount, 10)
			if !ok {
				continue
			}
			if sums[b.ID] == nil {
				sums[b.ID], info[b.ID] = new(big.Int), b
			}
			if sign < 0 {
				v.Neg(v)
			}
			sums[b.ID].Add(sums[b.ID], v)
		}
	}
	for _, b := range ins {
		add(b, -1)
	}
	for _, b := range outs {
		add(b, 1)
	}
	if len(sums) == 0 {
		return nil, false
	}
	out := make([]runeMove, 0, len(sums))
	for id, v := range sums {
		b := info[id]
		abs := new(big.Int).Abs(v)
		text := runeAmount(abs.String(), b.Divisibility, b.Symbol)
		switch v.Sign() {
		case 1:
			text = "+" + text
		case -1:
			text = "-" + text
		}
		out = append(out, runeMove{ID: id, SpacedName: b.SpacedName, Delta: v.String(), Text: text, Neg: v.Sign() < 0})
	}
	slices.SortFunc(out, func(a, b runeMove) int { return compareRuneIDs(a.ID, b.ID) })
	return out, true
}

// txRuneMoves is what a listed tx moved of the page's runes.
type txRuneMoves struct {
	Txid  string
	Moves []runeMove
}

// runeMoves is what a listed tx (a tx or a fiatTx) moved of the page's
// address's (or account's) runes: the inputs and outputs marked isOwn;
// nil when none of them had runes.
func runeMoves(tx any) *txRuneMoves {
	t := txOf(tx)
	var ins, outs [][]api.RuneBalance
	for i := range t.Vin {
		if t.Vin[i].IsOwn {
			ins = append(ins, t.Vin[i].Runes)
		}
	}
	for i := range t.Vout {
		if t.Vout[i].IsOwn {
			outs = append(outs, t.Vout[i].Runes)
		}
	}
	m, ok := signedRunes(ins, outs)
	if !ok {
		return nil
	}
	return &txRuneMoves{Txid: t.Txid, Moves: m}
}

// runeRow is a rune of an address's balance table: confirmed and pending.
type runeRow struct {
	ID, SpacedName string
	Amount         string // confirmed atomic units; "" when none held
	Text           string
	Pending        *runeMove // what pending txs add; nil: nothing
}

// runeRows merges an answer's confirmed and pending rune balances, by id.
func runeRows(a *api.Address) []runeRow {
	if a == nil || a.Runes == nil {
		return nil
	}
	rows := map[string]*runeRow{}
	for _, b := range *a.Runes {
		rows[b.ID] = &runeRow{ID: b.ID, SpacedName: b.SpacedName, Amount: b.Amount, Text: runeAmount(b.Amount, b.Divisibility, b.Symbol)}
	}
	if a.UnconfirmedRunes != nil {
		for _, b := range *a.UnconfirmedRunes {
			neg := len(b.Amount) > 0 && b.Amount[0] == '-'
			abs := b.Amount
			if neg {
				abs = abs[1:]
			}
			m := &runeMove{ID: b.ID, SpacedName: b.SpacedName, Delta: b.Amount, Neg: neg, Text: runeAmount(abs, b.Divisibility, b.Symbol)}
			if neg {
				m.Text = "-" + m.Text
			} else {
				m.Text = "+" + m.Text
			}
			r := rows[b.ID]
			if r == nil {
				r = &runeRow{ID: b.ID, SpacedName: b.SpacedName, Text: runeAmount("0", b.Divisibility, b.Symbol)}
				rows[b.ID] = r
			}
			r.Pending = m
		}
	}
	out := make([]runeRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b runeRow) int { return compareRuneIDs(a.ID, b.ID) })
	return out
}

// compareRuneIDs orders block:tx ids by birth.
func compareRuneIDs(a, b string) int {
	ab, at := runeIDParts(a)
	bb, bt := runeIDParts(b)
	return cmp.Or(cmp.Compare(ab, bb), cmp.Compare(at, bt))
}

func runeIDParts(id string) (uint64, uint64) {
	b, t, _ := strings.Cut(id, ":")
	bn, _ := strconv.ParseUint(b, 10, 64)
	tn, _ := strconv.ParseUint(t, 10, 64)
	return bn, tn
}

// runeFuncs are the templates' rune helpers beyond runeAmount.
func (e *explorer) runeFuncs() template.FuncMap {
	return template.FuncMap{
		"runeMoves": runeMoves,
		"runeRows":  runeRows,
		// runesOn: the nav links the list when the index is on.
		"runesOn": func() bool {
			l, err := e.lister(context.Background())
			return l != nil && err == nil
		},
		"hasPendingRunes": func(a *api.Address) bool {
			return a != nil && a.UnconfirmedRunes != nil && len(*a.UnconfirmedRunes) > 0
		},
	}
}
