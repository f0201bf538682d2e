package e2e

// The explorer's account pages (xpub and descriptor) against the HD
// account chain of the xpub tests, checked against chaingen's account
// ledger, in Go and in headless Chromium.

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

func TestE2EExplorerAccounts(t *testing.T) {
	st := startXpubStack(t, nil)
	base := st.inst.base
	var pages []*htmlPage
	for _, a := range st.accts {
		l := st.ledger(t, a, 20)
		for form, desc := range forms(a) {
			t.Run(fmt.Sprintf("BIP%d-%s", a.Purpose, form), func(t *testing.T) {
				pages = append(pages, checkAccountPage(t, st, base, desc, l)...)
			})
		}
	}
	t.Run("search", func(t *testing.T) {
		for _, a := range st.accts {
			for form, desc := range forms(a) {
				p := fetchPage(t, base, "/search?q="+url.QueryEscape(desc))
				if p.status != 200 || p.textOf(t, "xpub") != desc {
					t.Errorf("searching the %s of BIP%d: %d at %s", form, a.Purpose, p.status, p.final)
				}
			}
		}
	})
	t.Run("bad-input", func(t *testing.T) {
		for name, bad := range badXpubInputs(t, st) {
			p := fetchPage(t, base, "/xpub/"+url.PathEscape(bad))
			if p.status != 400 || p.textOf(t, "message") == "" {
				t.Errorf("%s: %d %q", name, p.status, text(p.doc))
			}
			noInternals(t, p)
			pages = append(pages, p)
		}
	})
	t.Run("no-inline", func(t *testing.T) { noInlineStyleOrScript(t, pages) })
	t.Run("html-validate", func(t *testing.T) { validateHTML(t, pages) })
	t.Run("browser", func(t *testing.T) { checkAccountBrowser(t, base, st.accts[2]) })
	t.Run("screenshots", func(t *testing.T) {
		b := newBrowser(t, findChromium(t), base, t.TempDir())
		matchShots(t, b, []shot{{name: "desktop-light-xpub", path: "/xpub/" + st.accts[2].Xpub(), vp: viewports[0]}})
		b.checkProblems()
	})
}

// checkAccountPage compares an account page, its address tabs and every
// page of its txs with the ledger.
func checkAccountPage(t *testing.T, st *xpubStack, base, desc string, l *chaingen.AccountLedger) []*htmlPage {
	pendingIDs, delta := st.pendingOf(t, l)
	path := "/xpub/" + url.PathEscape(desc)
	p := fetchPage(t, base, path)
	if p.status != 200 {
		t.Fatalf("%s: %d", path, p.status)
	}
	pages := []*htmlPage{p}
	for _, ch := range [][3]string{
		{"key", p.textOf(t, "xpub"), desc},
		{"balance", p.textOf(t, "balance"), fmtCoin(l.Balance)},
		{"received", p.textOf(t, "total-received"), fmtCoin(l.Received)},
		{"sent", p.textOf(t, "total-sent"), fmtCoin(l.Sent)},
		{"txs", p.textOf(t, "tx-count"), fmtNum(int64(len(l.Txids)))},
		{"used addresses", p.textOf(t, "used-addresses"), fmtNum(int64(l.Used()))},
		{"unconfirmed balance", p.textOf(t, "unconfirmed-balance"), fmtSignedCoin(delta)},
		{"unconfirmed txs", p.textOf(t, "unconfirmed-txs"), fmtNum(int64(len(pendingIDs)))},
	} {
		if ch[1] != ch[2] {
			t.Errorf("%s %q, want %q", ch[0], ch[1], ch[2])
		}
	}
	// The balance chart: the API's history of the account, ending at its
	// confirmed balance.
	if c := readChartTable(t, p); !slices.Equal(c.rows, apiChartRows(t, base, desc, c, 0)) || c.opening != fmtCoin(0) ||
		len(c.rows) == 0 || !strings.HasSuffix(c.rows[len(c.rows)-1], "| "+fmtCoin(l.Balance)) {
		t.Errorf("balance chart: %s (opening %s, balance %s)", firstDiff(c.rows, apiChartRows(t, base, desc, c, 0)), c.opening, fmtCoin(l.Balance))
	}
	if got := cardTxids(p.byID("pending-txs")); !slices.Equal(got, pendingIDs) {
		t.Errorf("pending section %v, want %v", got, pendingIDs)
	}

	// The address tabs: used (the default), with a balance, all derived.
	for _, tab := range []struct {
		query string
		keep  func(chaingen.AccountAddress) bool
	}{
		{"", func(a chaingen.AccountAddress) bool { return a.Txs > 0 }},
		{"?tokens=nonzero", func(a chaingen.AccountAddress) bool { return a.Balance != 0 }},
		{"?tokens=derived", func(chaingen.AccountAddress) bool { return true }},
	} {
		tp := p
		if tab.query != "" {
			tp = fetchPage(t, base, path+tab.query)
			pages = append(pages, tp)
		}
		var want []string
		for _, chain := range l.Chains {
			for _, a := range chain {
				if tab.keep(a) {
					want = append(want, fmt.Sprintf("%s %s %s %s %s %s", a.Path, a.Address, fmtNum(int64(a.Txs)),
						fmtCoin(a.Balance), fmtCoin(a.Received), fmtCoin(a.Sent)))
				}
			}
		}
		got := tableRows(tp.byID("xpub-addresses"))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("addresses%s: %s", tab.query, firstDiff(got, want))
		}
	}

	// Every page of confirmed txs, newest first, each tx once, with what
	// it moved for the account.
	var listed []string
	for next, n := path, 0; next != ""; n++ {
		tp := p
		if n > 0 {
			tp = fetchPage(t, base, next)
			pages = append(pages, tp)
		}
		cs := cards(tp.byID("confirmed-txs"))
		next = tp.relLink("pager", "next")
		if next != "" && len(cs) != 25 {
			t.Errorf("%s: a page before the last lists %d txs", tp.path, len(cs))
		}
		for _, cd := range cs {
			listed = append(listed, cd.txid)
			at := l.Txs[cd.txid]
			if want := fmtSignedCoin(at.Received - at.Sent); cd.delta != want {
				t.Errorf("tx %s shows %q for the account, want %q", cd.txid, cd.delta, want)
			}
		}
		if n > 100 {
			t.Fatal("paging does not end")
		}
	}
	if !slices.Equal(listed, l.Txids) {
		t.Errorf("confirmed txs: %s", firstDiff(listed, l.Txids))
	}
	return pages
}

// tableRows returns the text of each body row, cells joined by spaces.
func tableRows(table *html.Node) []string {
	if table == nil {
		return nil
	}
	var rows []string
	for _, tr := range findAll(table, func(n *html.Node) bool { return isElem(n, "tr") }) {
		cells := findAll(tr, func(n *html.Node) bool { return isElem(n, "td") })
		if len(cells) < 2 {
			continue // the header, or "no addresses"
		}
		var parts []string
		for _, c := range cells {
			parts = append(parts, strings.TrimSpace(text(c)))
		}
		rows = append(rows, strings.Join(parts, " "))
	}
	return rows
}

// checkAccountBrowser opens a BIP84 account at desktop and phone widths,
// follows a derived address link and finds the account by search.
func checkAccountBrowser(t *testing.T, base string, a *chaingen.HDAccount) {
	if a.Purpose != chaingen.BIP84 {
		t.Fatalf("want the BIP84 account, got BIP%d", a.Purpose)
	}
	b := newBrowser(t, findChromium(t), base, artifactDir(t, "explorer-screenshots-accounts"))
	xpub := a.Xpub()
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			b.t = t
			b.viewport(vp, false)
			b.open("/xpub/" + xpub)
			b.expectH1("Extended public key")
			b.fitsWidth()
			b.screenshot(vp.name + "-xpub")
			b.click(`#xpub-addresses a.addr`, "/address/")
			b.expectH1("Address")
			b.open("/")
			b.search(xpub, "/xpub/"+xpub)
			b.expectH1("Extended public key")
		})
	}
	b.t = t
	b.checkProblems()
}
