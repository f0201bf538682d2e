package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/openexplorer/blockbook/api"
)

// Runes in the explorer (Bitcoin with -runesindex): rune balances on
// address and account pages, the runestone and each input's and output's
// runes on tx pages, a rune page, and search by rune id or name. Without
// the index every page is as before and /rune/ answers a 404 page.

// runesExplorer is what the explorer asks of the Runes index beyond
// api.RuneQueries (api.UtxoService has both).
type runesExplorer interface {
	api.RuneQueries
	RunesIndexed(ctx context.Context) (bool, error)
	Runestone(ctx context.Context, tx *api.Tx) (*api.RunestoneInfo, error)
	RunePage(ctx context.Context, idOrName string) (*api.RunePage, error)
}

// runesState caches whether the index is on: it is fixed when the
// datadir is created.
type runesState struct {
	known, on atomic.Bool
}

// runes returns the index's queries when the index is on, else nil.
func (e *explorer) runes(ctx context.Context) (runesExplorer, error) {
	x, ok := e.caps.Runes.(runesExplorer)
	if !ok {
		return nil, nil
	}
	if !e.runesState.known.Load() {
		on, err := x.RunesIndexed(ctx)
		if err != nil {
			return nil, err
		}
		e.runesState.on.Store(on)
		e.runesState.known.Store(true)
	}
	if !e.runesState.on.Load() {
		return nil, nil
	}
	return x, nil
}

// withRunes says whether address and account answers should carry runes.
func (e *explorer) withRunes(ctx context.Context) (bool, error) {
	x, err := e.runes(ctx)
	return x != nil, err
}

// txWithRunes is the tx page's answer: with each input's and output's
// runes and the decoded runestone when the index is on.
func (e *explorer) txWithRunes(ctx context.Context, txid string) (*api.Tx, *api.RunestoneInfo, error) {
	x, err := e.runes(ctx)
	if err != nil {
		return nil, nil, err
	}
	if x == nil {
		tx, err := e.svc.Tx(ctx, txid)
		return tx, nil, err
	}
	tx, err := x.TxWithRunes(ctx, txid)
	if err != nil {
		return nil, nil, err
	}
	stone, err := x.Runestone(ctx, tx)
	return tx, stone, err
}

// errNoRunes is the rune page's answer without the index.
var errNoRunes = &api.Error{Msg: "This explorer keeps no Runes index, so it has no rune pages (the server runs without -runesindex).", Err: api.ErrNotFound}

// runePage is /rune/<id|name>: a rune's entry.
func (e *explorer) runePage(r *http.Request) (*result, error) {
	x, err := e.runes(r.Context())
	if err != nil {
		return nil, err
	}
	if x == nil {
		return nil, errNoRunes
	}
	p, err := x.RunePage(r.Context(), r.PathValue("rune"))
	if err != nil {
		return nil, err
	}
	title := p.SpacedName
	if len(title) > 40 { // a title of many spacers: the plain name (at most 28 letters)
		title = p.Name
	}
	return &result{tmpl: "rune", title: "Rune " + title, page: p}, nil
}

// searchRune finds a rune by id (block:tx) or name (spacers • or . or
// none, any letter case) when the index is on; "" when there is none.
func (e *explorer) searchRune(ctx context.Context, q string) (string, error) {
	x, err := e.runes(ctx)
	if x == nil || err != nil {
		return "", err
	}
	if !strings.Contains(q, ":") {
		q = strings.ToUpper(q)
	}
	p, err := x.RunePage(ctx, q)
	if err != nil {
		if _, ok := api.AsUserError(err); ok {
			return "", nil
		}
		return "", err
	}
	return "/rune/" + url.PathEscape(p.ID), nil
}

// runeAmount writes atomic units with the rune's divisibility and symbol
// (¤ when it has none), as ord shows a balance.
func runeAmount(amount string, divisibility uint8, symbol string) string {
	if symbol == "" {
		symbol = "¤"
	}
	return api.RuneDecimal(amount, divisibility) + "\u00a0" + symbol
}
