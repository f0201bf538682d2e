package e2e

// Token amounts in fiat on the explorer's Ethereum pages, on the stack of
// TestEthTokenFiat (rates from the CoinGecko double): the tokens table's
// values equal the address answer's secondaryValue, and an ERC20
// transfer's value on the tx page and in the address page's tx cards
// equals its amount at REST tickers?timestamp=&token= of the tx's time; a
// token without rates shows none.

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/api"
)

// checkTokenListFiat compares the tokens table of an address page in EUR
// with the answer a (details=tokenBalances, secondary=EUR).
func checkTokenListFiat(t *testing.T, p *htmlPage, a *api.Address) {
	t.Helper()
	rows := findAll(p.byID("token-list"), func(n *html.Node) bool { return isElem(n, "tr") })
	checked := 0
	for _, tk := range a.Tokens {
		var row *html.Node
		for _, r := range rows {
			if h := hrefs(r); len(h) > 0 && strings.EqualFold(h[0], "/address/"+tk.Contract) {
				row = r
			}
		}
		if row == nil {
			continue // a token without holdings is not listed
		}
		cells := findAll(row, func(n *html.Node) bool { return isElem(n, "td") && hasClass(n, "fiat-token") })
		if len(cells) != 1 {
			t.Errorf("%s token %s: no value column", a.Address, tk.Contract)
			continue
		}
		cell := text(cells[0])
		switch {
		case tk.SecondaryValue > 0:
			if math.Abs(parseFiat(t, cell, "EUR")-tk.SecondaryValue) > 0.006 {
				t.Errorf("%s token %s: %q, the API's secondaryValue %v", a.Address, tk.Contract, cell, tk.SecondaryValue)
			}
			checked++
		case cell != "":
			t.Errorf("%s token %s without a rate shows %q", a.Address, tk.Contract, cell)
		}
	}
	t.Logf("%s: %d token values checked", a.Address, checked)
}

// checkTransferFiat compares the fiat values of the ERC20 transfers of the
// address's txs (those of the first 8 with transfers) with their amounts at
// the token's rate of the tx's time; it returns how many had a value.
func checkTransferFiat(t *testing.T, base, addr string) int {
	t.Helper()
	var a api.Address
	getJSON(t, base+"/api/v2/address/"+addr+"?details=txs&pageSize=25", 200, &a)
	cards := fetchPage(t, base, "/address/"+addr+"?secondary=eur")
	valued, pages := 0, 0
	for _, tx := range a.Transactions {
		if tx.BlockHeight <= 0 || len(tx.TokenTransfers) == 0 || pages == 8 {
			continue
		}
		pages++
		page := fetchPage(t, base, "/tx/"+tx.Txid+"?secondary=eur")
		rows := findAll(page.byID("token-transfer-list"), func(n *html.Node) bool {
			return isElem(n, "tr") && len(findAll(n, func(c *html.Node) bool { return isElem(c, "td") })) > 0
		})
		if len(rows) != len(tx.TokenTransfers) {
			t.Fatalf("tx %s: %d transfer rows, the API %d", tx.Txid, len(rows), len(tx.TokenTransfers))
		}
		for i, tt := range tx.TokenTransfers {
			shown := classText(rows[i], "fiat-token")
			rate := -1.0
			if tt.Standard == "ERC20" {
				var tk api.FiatTicker
				getJSON(t, fmt.Sprintf("%s/api/v2/tickers/?timestamp=%d&currency=eur&token=%s", base, tx.BlockTime, tt.Contract), 200, &tk)
				rate = tk.Rates["eur"]
			}
			if rate <= 0 {
				if shown != "" {
					t.Errorf("tx %s transfer %d (%s, no rate) shows %q", tx.Txid, i, tt.Contract, shown)
				}
				continue
			}
			amount, _ := new(big.Rat).SetFrac((*big.Int)(tt.Value), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tt.Decimals)), nil)).Float64()
			want := amount * rate
			if math.Abs(parseFiat(t, shown, "EUR")-want) > 0.006 {
				t.Errorf("tx %s transfer %d: %q, want %.2f EUR (%v at %v)", tx.Txid, i, shown, want, amount, rate)
			}
			valued++
		}
		// The address page's card of the tx shows the same values.
		for _, card := range findAll(cards.doc, func(n *html.Node) bool { return isElem(n, "article") && hasClass(n, "tx") }) {
			if !strings.Contains(strings.Join(hrefs(card), " "), "/tx/"+tx.Txid) {
				continue
			}
			var onCard, onPage []string
			for _, n := range findAll(card, func(n *html.Node) bool { return hasClass(n, "fiat-token") }) {
				onCard = append(onCard, text(n))
			}
			for _, n := range findAll(page.byID("token-transfer-list"), func(n *html.Node) bool { return hasClass(n, "fiat-token") }) {
				onPage = append(onPage, text(n))
			}
			if strings.Join(onCard, "|") != strings.Join(onPage, "|") {
				t.Errorf("tx %s: the card shows %q, the tx page %q", tx.Txid, onCard, onPage)
			}
		}
	}
	return valued
}
