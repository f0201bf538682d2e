package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

type xpubPage struct {
	Heading   string
	Addr      *api.Address
	TokenTabs []filterTab
	QR        *qrSVG
	History   *balanceChart
	Utxos     *utxoBands
	txSection
}

// tokenTabs select which derived addresses the xpub page lists.
var tokenTabs = []struct {
	value, label string
	tokens       api.Tokens
}{
	{"used", "Used", api.TokensUsed}, {"nonzero", "With a balance", api.TokensNonzero}, {"derived", "All derived", api.TokensDerived},
}

// xpub is the page of an extended public key or output descriptor: the
// account's sums, its derived addresses with paths and balances, its txs.
func (e *explorer) xpub(r *http.Request) (*result, error) {
	q := r.URL.Query()
	filter, tokens := q.Get("filter"), q.Get("tokens")
	if tokens == "" {
		tokens = "used"
	}
	if e.caps.Accounts == nil {
		return nil, e.caps.NotSupported(api.CapAccounts)
	}
	withRunes, err := e.withRunes(r.Context())
	if err != nil {
		return nil, err
	}
	a, err := e.caps.Accounts.Account(r.Context(), r.PathValue("xpub"), api.AddressQuery{
		Page: pageParam(r), PageSize: explorerTxsPerPage, Details: api.DetailsTxsLight, Filter: api.ParseFilter(filter),
		Tokens: api.ParseTokens(tokens, api.TokensUsed), Gap: api.ParseInt(q.Get("gap")), Secondary: fiatCode(r), Runes: withRunes, ListRunes: withRunes,
	})
	if err != nil {
		return nil, err
	}
	base := "/xpub/" + url.PathEscape(a.Address)
	keep := url.Values{}
	if q.Has("gap") {
		keep.Set("gap", q.Get("gap"))
	}
	page := &xpubPage{Heading: "Extended public key", Addr: a, QR: newQR(a.Address)}
	if strings.Contains(a.Address, "(") {
		page.Heading = "Output descriptor"
	}
	for _, t := range tokenTabs {
		tq := url.Values{"tokens": {t.value}}
		for k, v := range keep {
			tq[k] = v
		}
		page.TokenTabs = append(page.TokenTabs, filterTab{Label: t.label, Href: base + "?" + tq.Encode() + "#addresses",
			Current: t.value == tokens})
	}
	keep.Set("tokens", tokens)
	page.txSection = newTxSection(a, base, keep, filter)
	if page.History, err = e.chartOrNote(e.balanceHistory(r, a.Address, base, api.ParseInt(q.Get("gap")), a.Balance, a.Txs)); err != nil {
		return nil, err
	}
	if page.Utxos, err = e.utxoSummary(r, a.Address, api.ParseInt(q.Get("gap")), a.Txs); err != nil {
		return nil, err
	}
	return &result{tmpl: "xpub", title: page.Heading + " " + shortHash(a.Address), page: page,
		pager: newPager(r, a.Page, a.TotalPages, len(page.Confirmed) >= a.ItemsOnPage)}, nil
}
