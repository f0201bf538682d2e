package e2e

import (
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/api"
)

// checkExplorerFiat checks the explorer's fiat values on the stack of
// TestE2EFiatRates (rates from the CoinGecko double): the numbers shown
// equal the REST answers (tickers at a tx's or block's time, the current
// ticker, the address's secondaryValue, balancehistory's bucket rates);
// the pages with fiat are valid HTML without inline style or script; in
// Chromium they pass axe in both schemes and fit a phone, and the currency
// form works with scripts off (the server keeps the choice in its cookie).
func checkExplorerFiat(t *testing.T, base, addr string) {
	t.Run("explorer", func(t *testing.T) {
		var a api.Address
		getJSON(t, base+"/api/v2/address/"+addr+"?details=txslight&secondary=eur", 200, &a)
		var tx *api.Tx
		for _, x := range a.Transactions {
			if x.BlockHeight > 0 && x.Fees != nil && (*big.Int)(x.Fees).Sign() > 0 {
				tx = x
				break
			}
		}
		if tx == nil {
			t.Fatalf("no confirmed tx with a fee on %s", addr)
		}
		var then, now, block api.FiatTicker
		getJSON(t, fmt.Sprintf("%s/api/v2/tickers/?timestamp=%d&currency=eur", base, tx.BlockTime), 200, &then)
		getJSON(t, base+"/api/v2/tickers/?currency=eur", 200, &now)
		getJSON(t, fmt.Sprintf("%s/api/v2/tickers/?block=%d&currency=eur", base, tx.BlockHeight), 200, &block)
		if then.Rates["eur"] <= 0 || then.Rates["eur"] == now.Rates["eur"] {
			t.Fatalf("rates at the tx's time %v and now %v: nothing to tell apart", then.Rates, now.Rates)
		}

		txPage := fetchPage(t, base, "/tx/"+tx.Txid+"?secondary=eur&use_secondary=true")
		val := txPage.byID("tx-value-fiat")
		if val == nil {
			t.Fatal("the tx page has no value in EUR")
		}
		wantFiat(t, "tx value then", classText(val, "fiat-then"), tx.Value, then.Rates["eur"])
		wantFiat(t, "tx value now", classText(val, "fiat-now"), tx.Value, now.Rates["eur"])
		var full api.Tx
		getJSON(t, base+"/api/v2/tx/"+tx.Txid, 200, &full)
		for i, o := range full.Vout {
			wantFiat(t, "output "+strconv.Itoa(i), classText(txPage.byID("output-"+strconv.Itoa(i)), "fiat"), o.Value, then.Rates["eur"])
		}

		addrPage := fetchPage(t, base, "/address/"+addr+"?secondary=eur")
		if got := strings.TrimSuffix(addrPage.textOf(t, "balance-fiat"), " now"); math.Abs(parseFiat(t, got, "EUR")-a.SecondaryValue) > 0.006 {
			t.Errorf("balance in EUR %q, the API's secondaryValue %v", got, a.SecondaryValue)
		}
		checkChartFiatColumn(t, base, addr, addrPage)

		blockPage := fetchPage(t, base, "/block/"+strconv.Itoa(int(tx.BlockHeight))+"?secondary=eur&use_secondary=true")
		if got := parseFiat(t, blockPage.textOf(t, "block-fiat-price"), "EUR"); math.Abs(got-block.Rates["eur"]) > 0.006 {
			t.Errorf("block price %v EUR, tickers?block= %v", got, block.Rates)
		}
		pages := []*htmlPage{txPage, addrPage, blockPage, fetchPage(t, base, "/address/"+addr+"?secondary=eur&use_secondary=true&range=all")}
		validateHTML(t, pages)
		noInlineStyleOrScript(t, pages)
		checkFiatBrowser(t, base, addr, tx.Txid)
	})
}

// checkFiatBrowser: axe with fiat shown in both schemes, the phone width,
// then the currency form with scripts off.
func checkFiatBrowser(t *testing.T, base, addr, txid string) {
	t.Helper()
	b := newBrowser(t, findChromium(t), base, artifactDir(t, "explorer-fiat-screenshots"))
	src := axeSource(t)
	// The tx page has every fiat piece but the balance rows (plain rows
	// of the summary table): the header form, the fiat card, amounts in
	// fiat with their titles.
	for _, dark := range []bool{false, true} {
		b.viewport(viewports[0], dark)
		b.open("/tx/" + txid + "?secondary=eur&use_secondary=true")
		b.checkAxe(src, fmt.Sprintf("fiat tx page (dark %v)", dark))
	}
	b.viewport(viewports[1], false)
	b.open("/address/" + addr)
	b.fitsWidth()
	b.screenshot("phone-fiat-address")

	b.viewport(viewports[0], false)
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	b.open("/address/" + addr + "?use_secondary=false")
	if !b.eval(`document.querySelectorAll('span.fiat').length === 0`) {
		t.Error("use_secondary=false: amounts still in fiat")
	}
	b.do(chromedp.SetValue(chromedp.CSS("#fiat-currency"), "JPY"))
	b.click(`form.fiatswitch button[value="true"]`, "/address/"+addr)
	if !b.eval(`[...document.querySelectorAll('span.fiat')].length > 0 && [...document.querySelectorAll('span.fiat')].every(e => e.textContent.endsWith(' JPY'))`) {
		t.Error("the form's Fiat button with JPY chosen does not show amounts in JPY")
	}
	// The choice holds on the next page, without parameters (the cookie).
	b.open("/tx/" + txid)
	if !b.eval(`document.querySelector('#output-0 span.fiat').textContent.endsWith(' JPY') && document.querySelector('#fiat-currency').value === 'JPY'`) {
		t.Error("the next page does not keep the JPY choice")
	}
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	b.checkProblems()
}

// checkChartFiatColumn compares the chart table's fiat column with REST:
// the balance after each period of balancehistory at the table's from and
// groupBy, at the rate tickers gives for the period's end, which is the
// rate balancehistory gives the bucket starting there.
func checkChartFiatColumn(t *testing.T, base, addr string, p *htmlPage) {
	t.Helper()
	table := p.byID("history-table")
	if table == nil {
		t.Fatal("no chart table")
	}
	var hist []api.BalanceHistory
	getJSON(t, fmt.Sprintf("%s/api/v2/balancehistory/%s?from=%s&groupBy=%s&fiatcurrency=eur", base, url.PathEscape(addr),
		attr(table, "data-from"), attr(table, "data-groupby")), 200, &hist)
	groupBy, _ := strconv.ParseInt(attr(table, "data-groupby"), 10, 64)
	rows := findAll(table, func(n *html.Node) bool {
		return isElem(n, "tr") && attr(n, "data-time") != "" && !hasClass(n, "opening")
	})
	if len(rows) != len(hist) || len(hist) == 0 {
		t.Fatalf("chart: %d rows, balancehistory %d buckets", len(rows), len(hist))
	}
	bal := new(big.Int)
	for i, h := range hist {
		bal.Add(bal, (*big.Int)(h.Received))
		bal.Sub(bal, (*big.Int)(h.Sent))
		cells := findAll(rows[i], func(n *html.Node) bool { return isElem(n, "td") })
		if len(cells) == 0 {
			t.Fatalf("chart row %d has no cells", i)
		}
		end := h.Time + groupBy
		var at api.FiatTicker
		getJSON(t, fmt.Sprintf("%s/api/v2/tickers/?timestamp=%d&currency=eur", base, end), 200, &at)
		cell := cells[len(cells)-1]
		if attr(cell, "data-rate-time") != strconv.FormatInt(end, 10) {
			t.Errorf("chart row %d: valued at %s, want the period's end %d", i, attr(cell, "data-rate-time"), end)
		}
		wantFiat(t, "chart row "+strconv.Itoa(i), text(cell), (*api.Amount)(new(big.Int).Set(bal)), at.Rates["eur"])
		if i+1 < len(hist) && hist[i+1].Time == end && hist[i+1].Rates["eur"] != at.Rates["eur"] {
			t.Errorf("chart row %d: rate %v at its end, balancehistory's next bucket %v", i, at.Rates, hist[i+1].Rates)
		}
	}
	if p.byID("history-fiat-legend") == nil || len(findAll(p.doc, func(n *html.Node) bool { return isElem(n, "path") && hasClass(n, "fiatline") })) != 1 {
		t.Error("the chart has no fiat line")
	}
}

// classText is the text of the first element of the class under n.
func classText(n *html.Node, class string) string {
	if n == nil {
		return ""
	}
	if found := findAll(n, func(c *html.Node) bool { return hasClass(c, class) }); len(found) > 0 {
		return text(found[0])
	}
	return ""
}

// wantFiat checks a shown "1,234.56 EUR" against sat base units at rate,
// to the cent.
func wantFiat(t *testing.T, what, shown string, sat *api.Amount, rate float64) {
	t.Helper()
	coins, _ := new(big.Rat).SetFrac((*big.Int)(sat), big.NewInt(1e8)).Float64()
	if got := parseFiat(t, shown, "EUR"); rate <= 0 || math.Abs(got-coins*rate) > 0.006 {
		t.Errorf("%s: %q, want %.2f EUR (%v coins at %v)", what, shown, coins*rate, coins, rate)
	}
}

func parseFiat(t *testing.T, s, code string) float64 {
	t.Helper()
	num, ok := strings.CutSuffix(strings.TrimSpace(s), " "+code)
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if !ok || err != nil {
		t.Errorf("%q is no amount in %s", s, code)
	}
	return v
}

// checkExplorerTokenFiat: an Ethereum address page in EUR shows the
// balance and the tokens' value of the REST answer a (secondary=EUR), each
// token's value, and its transfers' values.
func checkExplorerTokenFiat(t *testing.T, base string, a *api.Address) {
	t.Helper()
	p := fetchPage(t, base, "/address/"+a.Address+"?secondary=eur")
	if got := parseFiat(t, strings.TrimSuffix(p.textOf(t, "balance-fiat"), " now"), "EUR"); math.Abs(got-a.SecondaryValue) > 0.006 {
		t.Errorf("%s: balance in EUR %v, the API's secondaryValue %v", a.Address, got, a.SecondaryValue)
	}
	if n := p.byID("tokens-fiat"); (n != nil) != (a.TokensSecondaryValue > 0) ||
		n != nil && math.Abs(parseFiat(t, text(n), "EUR")-a.TokensSecondaryValue) > 0.006 {
		t.Errorf("%s: tokens in EUR %v, the API's tokensSecondaryValue %v", a.Address, n, a.TokensSecondaryValue)
	}
	checkTokenListFiat(t, p, a) // eth_fiat_tokens_test.go
	if n := checkTransferFiat(t, base, a.Address); a.TokensSecondaryValue > 0 && n == 0 {
		t.Errorf("%s holds a priced token, and none of its transfers shows a value", a.Address)
	}
}
