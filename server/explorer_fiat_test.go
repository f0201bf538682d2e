package server

import (
	"context"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/fiat"
	"github.com/openexplorer/blockbook/fiat/fiattest"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// Fiat values on the explorer's pages: the fixture's chain in a store of
// its own, with rates that the fiat package downloaded from the CoinGecko
// double, compared with the api's own answers (tickers at a tx's time, the
// current ticker, balancehistory's bucket rates).

// fiatTestNow is the downloader's clock, days after the fixture's blocks
// (2023-11-14 on).
var fiatTestNow = time.Date(2023, 11, 20, 5, 0, 0, 0, time.UTC)

type fiatServed struct {
	f   *apitest.Fixture
	svc *api.UtxoService
	srv *httptest.Server
}

// newFiatServed serves daily closes of 2023-11-10 to 20 (usd on day n of
// November 36000+100n, eur 0.92 of it) and current usd, eur and jpy rates.
func newFiatServed(t *testing.T) *fiatServed {
	t.Helper()
	f := apitest.New(t, apitest.Options{})
	prov := fiattest.New("bitcoin", fiatTestNow)
	t.Cleanup(prov.Close)
	prov.SetSupported("btc", "usd", "eur", "jpy")
	for d := 10; d <= 20; d++ {
		day := time.Date(2023, 11, d, 0, 0, 0, 0, time.UTC)
		prov.AddDay("usd", day, float64(36000+100*d))
		prov.AddDay("eur", day, float64(36000+100*d)*0.92)
	}
	prov.SetCurrent(map[string]float64{"usd": 37512.5, "eur": 34350.25, "jpy": 5612345})
	dl := fiat.New(f.DB, fiat.Config{URL: prov.URL(), Coin: "bitcoin", VsCurrencies: []string{"usd", "eur", "jpy"},
		Period: time.Hour, RequestGap: time.Millisecond, Now: func() time.Time { return fiatTestNow },
		Log: apitest.Quiet(), Metrics: prometheus.NewRegistry()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = dl.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	lastDay := time.Date(2023, 11, 20, 0, 0, 0, 0, time.UTC).Unix()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cur, err := db.ReadFiatCurrent(f.DB)
		last, err2 := f.DB.LastFiatTicker("eur")
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if cur != nil && last != nil && last.Time == lastDay {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rates were not downloaded: current %v, last day %v; requests %q", cur, last, prov.Requests())
		}
	}
	svc := api.NewUtxoService(f.DB, f.Backend, nil, api.Config{BlockFilters: f.BlockFilters, Log: apitest.Quiet(),
		Build: api.BuildInfo{Version: "test", Host: "apitest"}, TxCache: f.DB, FiatRates: true})
	p := NewPublic(svc, PublicConfig{}, apitest.Quiet(), prometheus.NewRegistry())
	s := &fiatServed{f: f, svc: svc, srv: httptest.NewServer(p.Handler())}
	t.Cleanup(func() {
		_ = p.Shutdown(context.Background())
		s.srv.Close()
	})
	return s
}

// fiatPage is a fetched page: its status, secondary_coin cookie and tree.
type fiatPage struct {
	status int
	cookie string // the secondary_coin value set, "" none
	vary   string
	doc    *html.Node
}

func getFiatPage(t *testing.T, base, path, cookie string) *fiatPage {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	p := &fiatPage{status: resp.StatusCode, doc: doc, vary: resp.Header.Get("Vary")}
	for _, c := range resp.Cookies() {
		if c.Name == secondaryCookie {
			p.cookie = c.Value
		}
	}
	return p
}

// find returns the elements match accepts, in document order.
func (p *fiatPage) find(match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return strings.Contains(" "+attr(n, "class")+" ", " "+class+" ")
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// byID is the text of the element with id ("" and false if none).
func (p *fiatPage) byID(id string) (string, bool) {
	ns := p.find(func(n *html.Node) bool { return attr(n, "id") == id })
	if len(ns) == 0 {
		return "", false
	}
	return textOf(ns[0]), true
}

func (p *fiatPage) classText(class string) []string {
	var out []string
	for _, n := range p.find(func(n *html.Node) bool { return hasClass(n, class) }) {
		out = append(out, textOf(n))
	}
	return out
}

// fmtMoney is the expected rendering of sat base units at rate.
func fmtMoney(sat *big.Int, rate float64, code string) string {
	coins, _ := new(big.Rat).SetFrac(sat, big.NewInt(1e8)).Float64()
	f := &fiatView{Code: strings.ToUpper(code), code: code}
	return f.format(coins*rate, false)
}

// rateAt asks the api for the rate of code at t (what REST tickers answers).
func (s *fiatServed) rateAt(t *testing.T, ts int64, code string) float64 {
	t.Helper()
	res, err := s.svc.FiatRatesForTimestamps(context.Background(), []int64{ts}, []string{code}, "")
	if err != nil {
		t.Fatal(err)
	}
	return res.Tickers[0].Rates[code]
}

func TestExplorerFiat(t *testing.T) {
	s := newFiatServed(t)
	ctx := context.Background()
	base, addr := s.srv.URL, s.f.DemoAddress
	a, err := s.svc.Address(ctx, addr, api.AddressQuery{Page: 1, PageSize: explorerTxsPerPage, Details: api.DetailsTxsLight, Filter: api.NoFilter, Secondary: "usd"})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("default", func(t *testing.T) {
		// No choice: USD, amounts in coins, the choice kept in the cookie.
		p := getFiatPage(t, base, "/address/"+addr, "")
		if p.status != 200 || p.cookie != "USD=false" || !strings.Contains(p.vary, "Cookie") {
			t.Fatalf("status %d, cookie %q, vary %q", p.status, p.cookie, p.vary)
		}
		want := fmtMoney(amountInt(a.Balance), 37512.5, "usd")
		if got, _ := p.byID("balance-fiat"); got != want+" now" || want != (&fiatView{Code: "USD"}).format(a.SecondaryValue, false) {
			t.Errorf("balance in USD %q, want %q now (the api's secondaryValue %v)", got, want, a.SecondaryValue)
		}
		if n := len(p.classText("fiat")); n != 0 {
			t.Errorf("%d amounts in fiat without use_secondary", n)
		}
		var opts []string
		for _, o := range p.find(func(n *html.Node) bool { return n.Data == "option" }) {
			sel := ""
			if hasAttr(o, "selected") {
				sel = "*"
			}
			opts = append(opts, textOf(o)+sel)
		}
		if strings.Join(opts, ",") != "EUR,JPY,USD*" {
			t.Errorf("currency options %q", opts)
		}
	})

	t.Run("start page", func(t *testing.T) {
		p := getFiatPage(t, base, "/?secondary=eur", "")
		if got, _ := p.byID("fiat-price"); got != "34,350.25 EUR now" {
			t.Errorf("price %q", got)
		}
		if got, _ := p.byID("fiat-history-time"); !strings.HasPrefix(got, "2023-11-20 00:00:00") {
			t.Errorf("historical rates' time %q", got)
		}
	})

	t.Run("parameters then cookie", func(t *testing.T) {
		p := getFiatPage(t, base, "/address/"+addr+"?secondary=eur&use_secondary=true", "")
		if p.cookie != "EUR=true" {
			t.Fatalf("cookie %q", p.cookie)
		}
		checkListTxs(t, s, p, a, "eur")
		// The cookie alone keeps the choice; a parameter wins over it.
		p = getFiatPage(t, base, "/address/"+addr, secondaryCookie+"=EUR=true")
		if p.cookie != "" || len(p.classText("fiat")) == 0 {
			t.Errorf("cookie EUR=true: cookie set again %q, %d fiat amounts", p.cookie, len(p.classText("fiat")))
		}
		p = getFiatPage(t, base, "/address/"+addr+"?use_secondary=false", secondaryCookie+"=EUR=true")
		if p.cookie != "EUR=false" || len(p.classText("fiat")) != 0 {
			t.Errorf("use_secondary=false over the cookie: cookie %q, %d fiat amounts", p.cookie, len(p.classText("fiat")))
		}
		p = getFiatPage(t, base, "/address/"+addr+"?secondary=JPY", secondaryCookie+"=EUR=true")
		if p.cookie != "JPY=true" {
			t.Errorf("secondary=JPY with cookie EUR=true: cookie %q", p.cookie)
		}
	})

	t.Run("bad choices", func(t *testing.T) {
		for _, c := range []struct{ query, cookie, want string }{
			{"?secondary=xyz", "", "USD=false"},
			{"?secondary=%3Cb%3E&use_secondary=maybe", secondaryCookie + "=EUR=true", "USD=true"},
			{"", secondaryCookie + "=garbage", "USD=false"},
			{"", secondaryCookie + "==", "USD=false"},
			{"", secondaryCookie + "=EUR=maybe", "EUR=false"},
			{"?secondary=" + strings.Repeat("x", 5000), "", "USD=false"},
		} {
			p := getFiatPage(t, base, "/address/"+addr+c.query, c.cookie)
			if p.status != 200 || p.cookie != c.want {
				t.Errorf("%q with cookie %q: status %d, cookie %q, want %q", c.query, c.cookie, p.status, p.cookie, c.want)
			}
		}
	})

	t.Run("tx", func(t *testing.T) { checkTxFiat(t, s, a) })

	t.Run("block", func(t *testing.T) {
		tx := a.Transactions[len(a.Transactions)-1]
		p := getFiatPage(t, base, "/block/"+strconv.Itoa(int(tx.BlockHeight))+"?use_secondary=1", "")
		want := (&fiatView{Code: "USD", code: "usd"}).format(s.rateAt(t, tx.BlockTime, "usd"), false)
		rest, err := s.svc.FiatRatesForBlock(ctx, strconv.Itoa(int(tx.BlockHeight)), []string{"usd"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := p.byID("block-fiat-price"); got != want || rest.Rates["usd"] != s.rateAt(t, tx.BlockTime, "usd") {
			t.Errorf("block price %q, want %q (REST tickers?block= %v)", got, want, rest.Rates)
		}
		if len(p.classText("fiat")) == 0 {
			t.Error("no fiat amounts in the block's txs with use_secondary")
		}
	})

	t.Run("xpub", func(t *testing.T) {
		xpub := s.f.Accounts[2].Xpub()
		acc, err := s.svc.Capabilities().Accounts.Account(ctx, xpub, api.AddressQuery{Page: 1, PageSize: 1, Details: api.DetailsBasic, Secondary: "eur"})
		if err != nil {
			t.Fatal(err)
		}
		p := getFiatPage(t, base, "/xpub/"+url.PathEscape(xpub)+"?secondary=eur", "")
		if got, _ := p.byID("balance-fiat"); got != fmtMoney(amountInt(acc.Balance), 34350.25, "eur")+" now" {
			t.Errorf("xpub balance in EUR %q (balance %s)", got, acc.Balance)
		}
	})

	t.Run("chart", func(t *testing.T) { checkChartFiat(t, s, addr) })
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// checkListTxs compares the fee of each listed tx, shown in fiat, with the
// fee at the api's rate of the tx's time.
func checkListTxs(t *testing.T, s *fiatServed, p *fiatPage, a *api.Address, code string) {
	t.Helper()
	cards := p.find(func(n *html.Node) bool { return n.Data == "article" && hasClass(n, "tx") })
	checked := 0
	for _, card := range cards {
		link := (&fiatPage{doc: card}).find(func(n *html.Node) bool { return n.Data == "a" && strings.HasPrefix(attr(n, "href"), "/tx/") })
		if len(link) == 0 {
			t.Fatal("a tx card without its link")
		}
		txid := strings.TrimPrefix(attr(link[0], "href"), "/tx/")
		var tx *api.Tx
		for _, x := range a.Transactions {
			if x.Txid == txid {
				tx = x
			}
		}
		if tx == nil || tx.Fees == nil || amountInt(tx.Fees).Sign() == 0 || tx.BlockHeight < 0 {
			continue
		}
		want := fmtMoney(amountInt(tx.Fees), s.rateAt(t, tx.BlockTime, code), code)
		fees := (&fiatPage{doc: card}).find(func(n *html.Node) bool {
			return hasClass(n, "fiat") && n.Parent != nil && strings.HasPrefix(textOf(n.Parent), "Fee ")
		})
		if len(fees) != 1 || textOf(fees[0]) != want || !strings.HasSuffix(attr(fees[0], "title"), " rBTC") {
			var shown []string
			for _, f := range fees {
				shown = append(shown, textOf(f)+" ("+attr(f, "title")+")")
			}
			t.Errorf("tx %s: fee %q, want %q", txid, shown, want)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no tx of the list checked")
	}
}

// checkTxFiat compares a tx page's fiat values with the api's rates.
func checkTxFiat(t *testing.T, s *fiatServed, a *api.Address) {
	t.Helper()
	var tx *api.Tx
	for _, x := range a.Transactions {
		if x.BlockHeight > 0 && x.Fees != nil && amountInt(x.Fees).Sign() > 0 {
			tx = x
			break
		}
	}
	if tx == nil {
		t.Fatal("no confirmed tx with a fee")
	}
	full, err := s.svc.Tx(context.Background(), tx.Txid)
	if err != nil {
		t.Fatal(err)
	}
	then, now := s.rateAt(t, full.BlockTime, "usd"), 37512.5
	p := getFiatPage(t, s.srv.URL, "/tx/"+tx.Txid+"?use_secondary=true", "")
	day := time.Unix(full.BlockTime, 0).UTC().Format("2006-01-02")
	want := fmtMoney(amountInt(full.Value), then, "usd") + " on " + day + " · " + fmtMoney(amountInt(full.Value), now, "usd") + " now"
	if got, _ := p.byID("tx-value-fiat"); got != want || then == now {
		t.Errorf("tx value in USD %q, want %q", got, want)
	}
	want = fmtMoney(amountInt(full.Fees), then, "usd") + " on " + day + " · " + fmtMoney(amountInt(full.Fees), now, "usd") + " now"
	if got, _ := p.byID("tx-fee-fiat"); got != want {
		t.Errorf("tx fee in USD %q, want %q", got, want)
	}
	for i, o := range full.Vout {
		got := (&fiatPage{doc: p.doc}).find(func(n *html.Node) bool { return attr(n, "id") == "output-"+strconv.Itoa(i) })
		amt := (&fiatPage{doc: got[0]}).classText("fiat")
		if len(amt) != 1 || amt[0] != fmtMoney(amountInt(o.Value), then, "usd") {
			t.Errorf("output %d: %q, want %q", i, amt, fmtMoney(amountInt(o.Value), then, "usd"))
		}
	}
}

// checkChartFiat compares the chart table's fiat column with the api: the
// balance after each period (as balancehistory of the table's from and
// groupBy sums it) at the rate at the period's end, which is the rate
// balancehistory gives a bucket starting there; and the chart's fiat line
// has a point for each value, the largest at the top of its scale.
// The whole history is hourly, and a day's hours share the day's close;
// the month is daily, where the end rate differs from the start rate.
func checkChartFiat(t *testing.T, s *fiatServed, addr string) {
	t.Helper()
	differ := 0
	for _, rng := range []string{"all", "month"} {
		differ += checkChartFiatRange(t, s, addr, rng)
	}
	if differ == 0 {
		t.Error("no row tells the end rate from the start rate")
	}
}

// checkChartFiatRange checks the chart of one range; it returns the rows
// the start rate would value otherwise.
func checkChartFiatRange(t *testing.T, s *fiatServed, addr, rng string) int {
	t.Helper()
	p := getFiatPage(t, s.srv.URL, "/address/"+addr+"?range="+rng, "")
	tables := p.find(func(n *html.Node) bool { return attr(n, "id") == "history-table" })
	if len(tables) != 1 {
		t.Fatalf("%s: no chart table", rng)
	}
	from, _ := strconv.ParseInt(attr(tables[0], "data-from"), 10, 64)
	groupBy, _ := strconv.ParseUint(attr(tables[0], "data-groupby"), 10, 32)
	hist, err := s.svc.BalanceHistory(context.Background(), addr, api.BalanceHistoryQuery{From: from, GroupBy: uint32(groupBy), Currencies: []string{"usd"}, REST: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := (&fiatPage{doc: tables[0]}).find(func(n *html.Node) bool {
		return n.Data == "tr" && attr(n, "data-time") != "" && !hasClass(n, "opening")
	})
	if len(rows) != len(hist) || len(hist) == 0 {
		t.Fatalf("%d rows, balancehistory has %d buckets", len(rows), len(hist))
	}
	bal := new(big.Int)
	ends, startRates := 0, 0 // periods whose end rate the next bucket's rates give; rows the start rate would value otherwise
	top := 0.0
	for i, h := range hist {
		bal.Add(bal, amountInt(h.Received))
		bal.Sub(bal, amountInt(h.Sent))
		cells := (&fiatPage{doc: rows[i]}).find(func(n *html.Node) bool { return n.Data == "td" })
		cell := cells[len(cells)-1]
		end := h.Time + int64(groupBy)
		rate := s.rateAt(t, end, "usd")
		want := fmtMoney(bal, rate, "usd")
		if got := textOf(cell); got != want || rate <= 0 || attr(cell, "data-rate-time") != strconv.FormatInt(end, 10) {
			t.Errorf("row %d (%d): %q at %s, want %q at %d (rate %v)", i, h.Time, got, attr(cell, "data-rate-time"), want, end, rate)
		}
		if i+1 < len(hist) && hist[i+1].Time == end {
			ends++
			if hist[i+1].Rates["usd"] != rate {
				t.Errorf("row %d: rate %v at its end, balancehistory's next bucket %v", i, rate, hist[i+1].Rates)
			}
		}
		if fmtMoney(bal, h.Rates["usd"], "usd") != want {
			startRates++
		}
		coins, _ := new(big.Rat).SetFrac(bal, big.NewInt(1e8)).Float64()
		top = max(top, coins*rate)
	}
	t.Logf("%s: %d rows per %d s, %d valued at the next bucket's rate, %d differ from the start rate", rng, len(rows), groupBy, ends, startRates)
	lines := p.find(func(n *html.Node) bool { return n.Data == "path" && hasClass(n, "fiatline") })
	if len(lines) != 1 {
		t.Fatalf("%d fiat lines", len(lines))
	}
	if d := attr(lines[0], "d"); strings.Count(d, "M")+strings.Count(d, "L") != len(hist)+1 {
		t.Errorf("the fiat line %q has not %d points (the opening and each row)", d, len(hist)+1)
	}
	if got, _ := p.byID("history-fiat-max"); got != (&fiatView{Code: "USD", code: "usd"}).format(top, false) {
		t.Errorf("the fiat line's top %q, the table's largest %v", got, top)
	}
	return startRates
}

// Without rates the pages show no fiat, no form and set no cookie, whatever
// the request asks.
func TestExplorerNoFiat(t *testing.T) {
	s := newServed(t)
	for _, path := range []string{"/address/" + s.f.DemoAddress + "?secondary=eur&use_secondary=true", "/block/1", "/"} {
		p := getFiatPage(t, s.srv.URL, path, secondaryCookie+"=EUR=true")
		if p.status != 200 || p.cookie != "" || len(p.classText("fiat")) != 0 || len(p.classText("fiatswitch")) != 0 {
			t.Errorf("%s: status %d, cookie %q, fiat shown", path, p.status, p.cookie)
		}
		if _, ok := p.byID("fiat-price"); ok {
			t.Errorf("%s: a price without rates", path)
		}
		if _, ok := p.byID("balance-fiat"); ok {
			t.Errorf("%s: a fiat balance without rates", path)
		}
	}
}

func TestFiatFormat(t *testing.T) {
	usd, btc := &fiatView{Code: "USD", code: "usd"}, &fiatView{Code: "BTC", code: "btc"}
	for _, c := range []struct {
		f      *fiatView
		v      float64
		signed bool
		want   string
	}{
		{usd, 1234567.891, false, "1,234,567.89 USD"},
		{usd, -1234.5, true, "-1,234.50 USD"},
		{usd, 12.346, true, "+12.35 USD"},
		{usd, -0.001, true, "0.00 USD"},
		{usd, 0, false, "0.00 USD"},
		{btc, 0.5, false, "0.500000 BTC"},
	} {
		if got := c.f.format(c.v, c.signed); got != c.want {
			t.Errorf("format(%v, %v) = %q, want %q", c.v, c.signed, got, c.want)
		}
	}
}
