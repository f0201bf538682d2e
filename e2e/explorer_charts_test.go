package e2e

// The explorer's pictures against the demo chain: the balance chart's data
// table equals the balancehistory API and chaingen's ledger for every
// range; the start page's projected blocks hold the mempool; the blocks
// list's fee range and a block page's fee rates equal what the raw blocks
// give; the tx flow's bands are proportional to the values; no page carries
// inline style or script (the CSP forbids them); html-validate passes on
// every new page.
// Everything is read without JavaScript (plain HTTP).

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

func TestE2EExplorerCharts(t *testing.T) {
	st := startDemoStack(t, nil)
	base, g := st.inst.base, st.g
	o := newOracle(g)
	// Pending txs at several fee rates, for the projected blocks.
	var pendingIDs []string
	for i, rate := range []int64{1, 2, 5, 12, 30, 80} {
		tx, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, uint64(300+i)), Value: 60_000}}, rate)
		if err != nil {
			t.Fatal(err)
		}
		pendingIDs = append(pendingIDs, sendTx(t, st, tx))
	}
	waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.MempoolSize == len(pendingIDs) })

	addrs := chartAddresses(o)
	var pages []*htmlPage
	t.Run("balance-chart", func(t *testing.T) {
		for i, a := range addrs {
			ranges := []string{"all"}
			if i == 0 {
				ranges = []string{"", "all", "year", "month", "week", "day"}
			}
			for _, rng := range ranges {
				path := "/address/" + a
				if rng != "" {
					path += "?range=" + rng
				}
				p := fetchPage(t, base, path)
				pages = append(pages, p)
				checkChartTable(t, base, p, a, o)
				for _, h := range hrefs(p.doc) {
					if strings.Contains(h, "range=") && !strings.HasPrefix(h, "/address/"+a+"?") {
						t.Errorf("%s: range link %q leaves the page", path, h)
					}
				}
			}
		}
	})
	t.Run("utxo-bands", func(t *testing.T) {
		for _, a := range addrs {
			checkUtxoBands(t, base, fetchPage(t, base, "/address/"+a), a)
		}
	})
	t.Run("qr", func(t *testing.T) {
		p := pages[0]
		qr := findAll(p.doc, func(n *html.Node) bool { return isElem(n, "svg") && hasClass(n, "qr") })
		if len(qr) != 1 || len(findAll(qr[0], func(n *html.Node) bool { return isElem(n, "path") && attr(n, "d") != "" })) != 1 {
			t.Fatalf("%s: no QR code", p.path)
		}
	})
	t.Run("index", func(t *testing.T) {
		// The projection follows the mempool within about a second.
		p := fetchPage(t, base, "/")
		for deadline := time.Now().Add(waitFor); projectedTxs(p) != len(pendingIDs) && time.Now().Before(deadline); p = fetchPage(t, base, "/") {
			time.Sleep(200 * time.Millisecond)
		}
		pages = append(pages, p)
		checkMempoolBlocks(t, p, len(pendingIDs))
	})
	t.Run("blocks", func(t *testing.T) {
		p := fetchPage(t, base, "/blocks")
		pages = append(pages, p)
		checkBlockFees(t, p, o)
	})
	t.Run("block-fees", func(t *testing.T) {
		h := int(o.ledger.TipHeight)
		p := fetchPage(t, base, fmt.Sprintf("/block/%d", h))
		pages = append(pages, p)
		cells := findAll(p.byID("block-feerates"), func(n *html.Node) bool { return isElem(n, "td") })
		lo, hi := o.feeRange(h)
		if len(cells) != 7 {
			t.Fatalf("block %d: %d fee-rate cells, want 7", h, len(cells))
		}
		if text(cells[0]) != fmt.Sprint(lo) || text(cells[6]) != fmt.Sprint(hi) {
			t.Errorf("block %d: fee rates lowest %q, highest %q; want %d and %d", h, text(cells[0]), text(cells[6]), lo, hi)
		}
	})
	t.Run("tx-flow", func(t *testing.T) {
		for txid, ot := range o.txs {
			if ot.coinbase || len(ot.tx.TxOut) < 2 {
				continue
			}
			p := fetchPage(t, base, "/tx/"+txid)
			pages = append(pages, p)
			checkFlow(t, p, ot)
			if got := p.textOf(t, "tx-feeplace"); !strings.Contains(got, "its block's txs paid") {
				t.Errorf("%s: fee rate's place %q", p.path, got)
			}
			break
		}
		// The 80 sat/vB tx leads the projection.
		pp := fetchPage(t, base, "/tx/"+pendingIDs[len(pendingIDs)-1])
		if got := pp.textOf(t, "tx-feeplace"); got != "(projected in the next block)" {
			t.Errorf("pending tx: fee rate's place %q", got)
		}
		pages = append(pages, pp)
	})
	t.Run("no-inline", func(t *testing.T) { noInlineStyleOrScript(t, pages) })
	if t.Failed() {
		t.Logf("logs:\n%s", grepLines(st.inst.logs.String(), "level=ERROR", "level=WARN"))
	}
	t.Run("html-validate", func(t *testing.T) { validateHTML(t, pages) })
}

// chartAddresses are the busiest address and a few others of the ledger.
func chartAddresses(o *oracle) []string {
	var all []string
	for a := range o.ledger.Addresses {
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool {
		ci, cj := o.ledger.Addresses[all[i]].TxCount(), o.ledger.Addresses[all[j]].TxCount()
		return ci > cj || ci == cj && all[i] < all[j]
	})
	return append(all[:1:1], all[len(all)/3], all[len(all)/2], all[len(all)-1])
}

// chartTable is what a page's balance chart table says: the query it
// equals (from, groupBy), the opening balance and one row per period
// ("time | txs | received | sent | balance after").
type chartTable struct {
	from, groupBy int64
	opening       string
	rows          []string
}

func readChartTable(t *testing.T, p *htmlPage) chartTable {
	t.Helper()
	if p.status != 200 {
		t.Fatalf("%s: status %d", p.path, p.status)
	}
	tbl := p.byID("history-table")
	if tbl == nil {
		t.Fatalf("%s: no chart data table (%s)", p.path, text(p.byID("history-note")))
	}
	var c chartTable
	var err1, err2 error
	c.from, err1 = strconv.ParseInt(attr(tbl, "data-from"), 10, 64)
	c.groupBy, err2 = strconv.ParseInt(attr(tbl, "data-groupby"), 10, 64)
	if err1 != nil || err2 != nil || c.groupBy <= 0 {
		t.Fatalf("%s: table without from/groupBy", p.path)
	}
	for _, tr := range findAll(tbl, func(n *html.Node) bool { return isElem(n, "tr") && attr(n, "data-time") != "" }) {
		cells := findAll(tr, func(n *html.Node) bool { return isElem(n, "td") })
		if hasClass(tr, "opening") {
			c.opening = text(cells[4])
			continue
		}
		c.rows = append(c.rows, strings.Join([]string{attr(tr, "data-time"), text(cells[1]), text(cells[2]), text(cells[3]), text(cells[4])}, " | "))
	}
	if len(c.rows) > 0 && len(findAll(p.doc, func(n *html.Node) bool { return isElem(n, "path") && hasClass(n, "line") })) != 1 {
		t.Errorf("%s: a table of %d periods but no balance line", p.path, len(c.rows))
	}
	return c
}

// apiChartRows are the rows the API's balancehistory gives for the same
// query, balances counted from open (satoshi).
func apiChartRows(t *testing.T, base, desc string, c chartTable, open int64) []string {
	t.Helper()
	var hist []api.BalanceHistory
	getJSON(t, fmt.Sprintf("%s/api/v2/balancehistory/%s?from=%d&groupBy=%d", base, url.PathEscape(desc), c.from, c.groupBy), 200, &hist)
	var out []string
	bal := open
	for _, h := range hist {
		r, s := (*big.Int)(h.Received).Int64(), (*big.Int)(h.Sent).Int64()
		bal += r - s
		out = append(out, strings.Join([]string{fmt.Sprint(h.Time), fmtNum(int64(h.Txs)), fmtCoin(r), fmtCoin(s), fmtCoin(bal)}, " | "))
	}
	return out
}

// checkChartTable reads the chart's data table and compares it with the
// API's balancehistory for the same from and groupBy, and with the ledger.
func checkChartTable(t *testing.T, base string, p *htmlPage, addr string, o *oracle) {
	t.Helper()
	c := readChartTable(t, p)
	from, groupBy, got := c.from, c.groupBy, c.rows
	// The ledger's: each tx's received and sent by block time.
	type bucket struct {
		txs            int64
		received, sent int64
	}
	ledger, open, final := map[int64]*bucket{}, int64(0), int64(0)
	for _, txid := range o.ledger.Addresses[addr].Txids {
		ot := o.txs[txid]
		var recv, sent int64
		for i, a := range ot.outAddrs {
			if a == addr {
				recv += ot.tx.TxOut[i].Value
			}
		}
		for i, a := range ot.inAddrs {
			if a == addr {
				sent += ot.inValues[i]
			}
		}
		final += recv - sent
		tm := o.blocks[ot.height].Header.Timestamp.Unix()
		if tm < from {
			open += recv - sent
			continue
		}
		k := tm - tm%groupBy
		if ledger[k] == nil {
			ledger[k] = &bucket{}
		}
		ledger[k].txs++
		ledger[k].received += recv
		ledger[k].sent += sent
	}
	if final != o.ledger.Addresses[addr].Balance {
		t.Fatalf("oracle bug: %s sums to %d, the ledger says %d", addr, final, o.ledger.Addresses[addr].Balance)
	}
	if c.opening != fmtCoin(open) {
		t.Errorf("%s: opening balance %q, the ledger %q", p.path, c.opening, fmtCoin(open))
	}
	var keys []int64
	for k := range ledger {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var want []string
	bal := open
	for _, k := range keys {
		b := ledger[k]
		bal += b.received - b.sent
		want = append(want, strings.Join([]string{fmt.Sprint(k), fmtNum(b.txs), fmtCoin(b.received), fmtCoin(b.sent), fmtCoin(bal)}, " | "))
	}
	fromAPI := apiChartRows(t, base, addr, c, open)
	if !slices.Equal(got, fromAPI) {
		t.Errorf("%s: the chart's table differs from balancehistory?from=%d&groupBy=%d: %s", p.path, from, groupBy, firstDiff(got, fromAPI))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: the chart's table differs from the ledger: %s", p.path, firstDiff(got, want))
	}
	if len(got) > 0 && !strings.HasSuffix(got[len(got)-1], "| "+fmtCoin(o.ledger.Addresses[addr].Balance)) {
		t.Errorf("%s: the chart ends at %q, the balance is %s", p.path, got[len(got)-1], fmtCoin(o.ledger.Addresses[addr].Balance))
	}
}

// checkMempoolBlocks: the projected blocks hold every pending tx, and the
// recommended fees and the histogram are shown.
func checkMempoolBlocks(t *testing.T, p *htmlPage, pending int) {
	t.Helper()
	list := p.byID("mempool-blocks")
	if list == nil {
		t.Fatalf("start page without projected blocks (%s)", text(p.byID("fees-note")))
	}
	if txs := projectedTxs(p); txs != pending {
		t.Errorf("the projected blocks hold %d txs, the mempool %d: %s", txs, pending, text(list))
	}
	if p.byID("recommended-fees") == nil || p.byID("fee-histogram") == nil {
		t.Error("start page without recommended fees or fee histogram")
	}
}

// projectedTxs sums the tx counts of the projected blocks (-1: unreadable).
func projectedTxs(p *htmlPage) int {
	txs := 0
	for _, n := range findAll(p.doc, func(n *html.Node) bool { return hasClass(n, "mtxs") }) {
		v, err := strconv.Atoi(strings.ReplaceAll(strings.Fields(text(n))[0], ",", ""))
		if err != nil {
			return -1
		}
		txs += v
	}
	return txs
}

// checkBlockFees compares each listed block's fee range with the fee rates
// of its txs (fee*4/weight, truncated, as getblockstats).
func checkBlockFees(t *testing.T, p *htmlPage, o *oracle) {
	t.Helper()
	rows := 0
	for _, tr := range findAll(p.doc, func(n *html.Node) bool { return isElem(n, "tr") }) {
		cells := findAll(tr, func(n *html.Node) bool { return isElem(n, "td") && hasClass(n, "feerange") })
		if len(cells) == 0 {
			continue
		}
		links := hrefs(tr)
		h, err := strconv.Atoi(strings.TrimPrefix(links[0], "/block/"))
		if err != nil {
			t.Fatalf("block link %q", links[0])
		}
		lo, hi := o.feeRange(h)
		got := text(cells[0])
		want := "no fees"
		if len(o.blocks[h].Transactions) > 1 {
			want = fmt.Sprintf("%d – %d", lo, hi)
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("block %d: fee range %q, want %q", h, got, want)
		}
		rows++
	}
	if rows == 0 {
		t.Fatal("the blocks list shows no fee ranges")
	}
}

// feeRange is the lowest and highest fee rate of a block's txs
// (fee*4/weight, truncated, as getblockstats).
func (o *oracle) feeRange(h int) (lo, hi uint64) {
	lo = math.MaxUint64
	for _, tx := range o.blocks[h].Transactions[1:] {
		ot := o.txs[tx.TxHash().String()]
		fee := int64(0)
		for _, v := range ot.inValues {
			fee += v
		}
		for _, out := range tx.TxOut {
			fee -= out.Value
		}
		r := uint64(fee * 4 / int64(tx.SerializeSizeStripped()*3+tx.SerializeSize()))
		lo, hi = min(lo, r), max(hi, r)
	}
	return lo, hi
}

// checkFlow: one band per input and output and one for the fee, heights
// proportional to the values.
func checkFlow(t *testing.T, p *htmlPage, ot *oracleTx) {
	t.Helper()
	bands := findAll(p.doc, func(n *html.Node) bool { return isElem(n, "rect") && hasClass(n, "band") })
	var in, out []float64
	for _, b := range bands {
		h, err := strconv.ParseFloat(attr(b, "height"), 64)
		if err != nil {
			t.Fatalf("%s: band height %q", p.path, attr(b, "height"))
		}
		switch {
		case hasClass(b, "in"):
			in = append(in, h)
		case hasClass(b, "out"), hasClass(b, "fee"):
			out = append(out, h)
		}
	}
	if len(in) != len(ot.tx.TxIn) || len(out) != len(ot.tx.TxOut)+1 {
		t.Fatalf("%s: %d input and %d output bands, want %d and %d (with the fee)", p.path, len(in), len(out), len(ot.tx.TxIn), len(ot.tx.TxOut)+1)
	}
	var total int64
	for _, v := range ot.inValues {
		total += v
	}
	for i, o := range ot.tx.TxOut {
		want := math.Max(float64(o.Value)/float64(total)*180, 1)
		if math.Abs(out[i]-want) > 0.2 {
			t.Errorf("%s: output %d band %.1f high, want %.1f (value %d of %d)", p.path, i, out[i], want, o.Value, total)
		}
	}
}

// noInlineStyleOrScript: the CSP has no 'unsafe-inline', so a style
// attribute, a <style> element, an inline <script> or an on* handler would
// be blocked in the browser; none may be on any page.
func noInlineStyleOrScript(t *testing.T, pages []*htmlPage) {
	t.Helper()
	for _, p := range pages {
		walk(p.doc, func(n *html.Node) {
			if n.Type != html.ElementNode {
				return
			}
			switch {
			case n.Data == "style":
				t.Errorf("%s: a <style> element", p.path)
			case n.Data == "script" && attr(n, "src") == "":
				t.Errorf("%s: an inline <script>", p.path)
			}
			for _, a := range n.Attr {
				if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: <%s %s=%q>", p.path, n.Data, a.Key, a.Val)
				}
			}
		})
	}
}

// grepLines keeps the lines of s containing any of the words.
func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// checkUtxoBands compares the page's UTXO value bands with the API's
// UTXOs of the address, summed into decades of satoshis by the test.
func checkUtxoBands(t *testing.T, base string, p *htmlPage, addr string) {
	t.Helper()
	var utxos []api.Utxo
	getJSON(t, base+"/api/v2/utxo/"+addr, 200, &utxos)
	want := map[string]string{}
	counts, sums := map[uint64]int{}, map[uint64]uint64{}
	for _, u := range utxos {
		v := (*big.Int)(u.Value).Uint64()
		from := uint64(0)
		for edge := uint64(1000); edge <= 10_000_000_000 && v >= edge; edge *= 10 {
			from = edge
		}
		counts[from]++
		sums[from] += v
	}
	for from, n := range counts {
		want[fmt.Sprint(from)] = fmt.Sprintf("%d %d", n, sums[from])
	}
	got := map[string]string{}
	tbl := p.byID("utxo-bands")
	if tbl == nil {
		if len(utxos) > 0 {
			t.Fatalf("%s: %d UTXOs but no band table (%s)", p.path, len(utxos), text(p.byID("utxo-note")))
		}
		return
	}
	for _, tr := range findAll(tbl, func(n *html.Node) bool { return isElem(n, "tr") && attr(n, "data-from") != "" }) {
		got[attr(tr, "data-from")] = attr(tr, "data-count") + " " + attr(tr, "data-value")
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: UTXO bands %v, the API's UTXOs give %v", p.path, got, want)
	}
}
