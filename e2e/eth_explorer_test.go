package e2e

// The HTML explorer on an Ethereum-type chain: every tx page of ethgen's
// scenario shows its status, parties, token transfers (with the token's
// decimals) and internal transfers as the ledger has them; address pages
// show nonce, counters and tokens held, contract pages the contract's
// metadata; pages pass html-validate, carry no inline style or script, fit
// desktop and phone widths in Chromium, pass axe-core in both schemes and
// look like their reference screenshots (eth_shots_test.go).

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/tools/ethgen"
)

// checkExplorer is run by TestEthAPIMatchesLedger on its stack.
func (e *ethE2E) checkExplorer(t *testing.T) {
	t.Helper()
	base := e.inst.base
	var pages []*htmlPage
	kinds := map[string]bool{}
	paths := map[string]string{} // kind → a page of that kind
	keep := func(kind string, p *htmlPage) {
		if !kinds[kind] {
			kinds[kind], paths[kind] = true, p.path
			pages = append(pages, p)
		}
	}
	for _, path := range []string{"/", "/blocks", "/block/1", "/mempool"} {
		p := fetchPage(t, base, path)
		if p.status != 200 {
			t.Errorf("explorer %s: status %d", path, p.status)
		}
		keep(path, p)
	}
	for h, tx := range e.ledger.Txs {
		p := fetchPage(t, base, "/tx/"+h.Hex())
		if p.status != 200 {
			t.Errorf("tx page %s: status %d", h, p.status)
			continue
		}
		e.checkTxPage(t, p, tx)
		kind := "tx"
		switch {
		case tx.Pending:
			kind = "tx-pending"
		case tx.Status == 0:
			kind = "tx-failed"
		case len(tx.TokenTransfers) > 0:
			kind = "tx-tokens"
		case len(tx.InternalTransfers) > 0:
			kind = "tx-internal"
		case tx.To == nil:
			kind = "tx-create"
		}
		keep(kind, p)
	}
	for a, want := range e.ledger.Addresses {
		if len(want.Txs) == 0 {
			continue
		}
		p := fetchPage(t, base, "/address/"+a.Hex())
		if p.status != 200 {
			t.Errorf("address page %s: status %d", a, p.status)
			continue
		}
		for _, ch := range [][3]string{
			{"nonce", p.textOf(t, "nonce"), fmt.Sprint(e.pendingNonce(a))},
			{"txs", p.textOf(t, "tx-count"), fmtNum(int64(len(want.Txs)))},
			{"non-token txs", p.textOf(t, "non-token-txs"), fmtNum(int64(want.NonTokenTxs))},
			{"internal txs", p.textOf(t, "internal-txs"), fmtNum(int64(want.InternalTxs))},
		} {
			if ch[1] != ch[2] {
				t.Errorf("address page %s (%s): %s %q, want %q", a, want.Name, ch[0], ch[1], ch[2])
			}
		}
		held := 0 // tokens with holdings: what a balances answer lists
		for _, hd := range want.Tokens {
			if hd.Standard == ethgen.ERC20 || ledgerHolding(hd) != "" {
				held++
			}
		}
		if got := len(tableRows(p.byID("token-list"))); got != held {
			t.Errorf("address page %s (%s): %d tokens listed, want %d", a, want.Name, got, held)
		}
		for c, hd := range want.Tokens {
			if hd.Standard != ethgen.ERC20 {
				continue
			}
			info := e.ledger.Contracts[c]
			if w := fmtToken(hd.Balance, info.Decimals, info.Symbol); !strings.Contains(text(p.byID("token-list")), w) {
				t.Errorf("address page %s (%s): no %s holding %q", a, want.Name, info.Symbol, w)
			}
		}
		if c := e.ledger.Contracts[a]; c != nil {
			if got := p.textOf(t, "contract-name"); got != or(c.Name, "—") {
				t.Errorf("contract page %s: name %q, want %q", a, got, c.Name)
			}
			e.checkSupply(t, p, a, c) // eth_nft_test.go
			keep("contract", p)
		} else if len(want.Tokens) > 0 {
			keep("address-tokens", p)
		}
	}
	for kind, p := range e.checkTokenPages(t) {
		keep(kind, p)
	}
	if len(kinds) < 11 {
		t.Errorf("only %d kinds of pages checked: %v", len(kinds), kinds)
	}
	validateHTML(t, pages)
	noInlineStyleOrScript(t, pages)

	// In Chromium at desktop and phone widths: the pages fit, and the
	// token links lead to the token's page.
	b := newBrowser(t, findChromium(t), base, artifactDir(t, "explorer-screenshots-eth"))
	t.Run("screenshots", func(t *testing.T) { matchShots(t, b, e.ethShots(t)) }) // eth_shots_test.go
	for _, vp := range viewports {
		b.t = t
		b.viewport(vp, false)
		for _, kind := range []string{"tx-tokens", "tx-internal", "tx-failed", "address-tokens", "contract", "nft-erc721"} {
			b.open(paths[kind])
			b.fitsWidth()
			b.screenshot(vp.name + "-eth-" + kind)
		}
		b.open(paths["tx-tokens"])
		b.click("#token-transfer-list td a", "/address/0x")
		b.expectH1("Address")
	}
	// axe-core on every Ethereum page kind, light and dark.
	b.t = t
	checkAxeKinds(b, paths)
	b.checkProblems()
}

// checkTxPage compares a tx page with the ledger.
func (e *ethE2E) checkTxPage(t *testing.T, p *htmlPage, tx *ethgen.Tx) {
	t.Helper()
	status := "Success"
	switch {
	case tx.Pending:
		status = "Pending"
	case tx.Status == 0:
		status = "Failed"
	}
	if got := p.textOf(t, "tx-status"); !strings.HasPrefix(got, status) {
		t.Errorf("tx %s: status %q, want %s", tx.Hash, got, status)
	}
	if got := p.textOf(t, "tx-from"); got != tx.From.Hex() {
		t.Errorf("tx %s: from %q, want %s", tx.Hash, got, tx.From.Hex())
	}
	// Token transfers: one unit per ERC20 amount, NFT id or ERC1155
	// (value, id) pair, as the ledger lists them.
	var got, want []string
	for _, cells := range tableCells(p.byID("token-transfer-list")) {
		got = append(got, tokenUnits(cells[len(cells)-1])...)
	}
	for _, tt := range tx.TokenTransfers {
		c := e.ledger.Contracts[tt.Contract]
		switch tt.Standard {
		case ethgen.ERC20:
			want = append(want, fmtToken(tt.Value, c.Decimals, c.Symbol))
		case ethgen.ERC721:
			want = append(want, "#"+tt.TokenID.String())
		default:
			want = append(want, tt.Value.String()+" × #"+tt.TokenID.String())
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tx %s: token transfers %q, want %q", tx.Hash, got, want)
	}
	var gotIn, wantIn []string
	gotIn = append(gotIn, tableRows(p.byID("internal-transfer-list"))...)
	for _, it := range tx.InternalTransfers {
		wantIn = append(wantIn, fmt.Sprintf("%s %s %s %s", it.Type, shortHash(it.From.Hex()), shortHash(it.To.Hex()), fmtToken(it.Value, 18, "rETH")))
	}
	slices.Sort(gotIn)
	slices.Sort(wantIn)
	if !slices.Equal(gotIn, wantIn) {
		t.Errorf("tx %s: internal transfers %q, want %q", tx.Hash, gotIn, wantIn)
	}
}

// tokenUnits splits a token transfer's amount cell into units: an ERC20
// amount, an NFT "#id", or ERC1155 "value × #id" pairs.
func tokenUnits(amount string) []string {
	switch {
	case strings.Contains(amount, "×"):
		var out []string
		for _, u := range strings.Split(amount, ", ") {
			if f := strings.Fields(u); len(f) > 3 {
				u = strings.Join(f[:3], " ") // a trailing symbol
			}
			out = append(out, u)
		}
		return out
	case strings.Contains(amount, "#"):
		_, id, _ := strings.Cut(amount, "#")
		return []string{"#" + id}
	}
	return []string{amount}
}

// fmtToken renders a token amount as the explorer does.
func fmtToken(v *big.Int, decimals int, symbol string) string {
	s := new(big.Int).Abs(v).String()
	if decimals > 0 {
		if len(s) <= decimals {
			s = strings.Repeat("0", decimals-len(s)+1) + s
		}
		s = strings.TrimSuffix(strings.TrimRight(s[:len(s)-decimals]+"."+s[len(s)-decimals:], "0"), ".")
	}
	if v.Sign() < 0 {
		s = "-" + s
	}
	if symbol != "" {
		s += " " + symbol
	}
	return s
}

// shortHash is the explorer's shortening of long hashes and addresses.
func shortHash(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[:8] + "…" + s[len(s)-8:]
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// tableCells returns the cells' texts of each body row of a table.
func tableCells(table *html.Node) [][]string {
	if table == nil {
		return nil
	}
	var rows [][]string
	for _, tr := range findAll(table, func(n *html.Node) bool { return isElem(n, "tr") }) {
		var cells []string
		for _, c := range findAll(tr, func(n *html.Node) bool { return isElem(n, "td") }) {
			cells = append(cells, strings.TrimSpace(text(c)))
		}
		if len(cells) > 1 {
			rows = append(rows, cells)
		}
	}
	return rows
}
