package e2e

// What each explorer page must show, checked against the oracle.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// checkLinks: every link of every page resolves, to an id that exists.
func checkLinks(t *testing.T, c *crawlResult) {
	for path, p := range c.pages {
		if p.status != 200 {
			t.Errorf("%s (linked from %s) answers %d", path, c.from[path], p.status)
		}
	}
	for path, frags := range c.fragments {
		p := c.pages[path]
		if p == nil || p.doc == nil {
			continue
		}
		for _, f := range frags {
			if p.byID(f) == nil {
				t.Errorf("%s has no #%s (linked from %s)", path, f, c.from[path])
			}
		}
	}
	if len(c.pages) < 1000 {
		t.Errorf("the crawl reached only %d pages", len(c.pages))
	}
}

func checkIndex(t *testing.T, c *crawlResult, o *oracle, mempoolTxs int) {
	p := c.page(t, "/")
	if got, want := p.textOf(t, "best-height"), fmtNum(int64(o.ledger.TipHeight)); got != want {
		t.Errorf("best height %q, want %q", got, want)
	}
	if got, want := p.textOf(t, "mempool-size"), fmt.Sprintf("%d transactions", mempoolTxs); got != want {
		t.Errorf("mempool %q, want %q", got, want)
	}
	if p.textOf(t, "backend-version") == "" {
		t.Error("no backend version")
	}
	var heights []string
	for _, h := range hrefs(p.doc) {
		if rest, ok := strings.CutPrefix(h, "/block/"); ok && len(rest) < 64 {
			heights = append(heights, rest)
		}
	}
	// The best block link, then the ten latest blocks.
	var want []string
	for h := o.ledger.TipHeight; h > o.ledger.TipHeight-10; h-- {
		want = append(want, fmt.Sprint(h))
	}
	if len(heights) != 11 || !slices.Equal(heights[1:], want) {
		t.Errorf("latest blocks %v, want %v", heights, want)
	}
}

// follow collects items from a paged list, following rel=next to the end.
func follow(t *testing.T, c *crawlResult, start string, items func(*htmlPage) []string, pageSize int) []string {
	t.Helper()
	var all []string
	for path, n := start, 0; path != ""; n++ {
		p := c.page(t, path)
		got := items(p)
		next := p.relLink("pager", "next")
		if next != "" && len(got) != pageSize {
			t.Errorf("%s: a page before the last lists %d items, want %d", path, len(got), pageSize)
		}
		all = append(all, got...)
		if n > 10_000 {
			t.Fatalf("%s: paging does not end", start)
		}
		path = next
	}
	return all
}

func checkBlocks(t *testing.T, c *crawlResult, o *oracle) {
	rows := follow(t, c, "/blocks", func(p *htmlPage) []string {
		var out []string
		for _, tr := range findAll(p.doc, func(n *html.Node) bool { return isElem(n, "tr") }) {
			if links := hrefs(tr); len(links) >= 2 {
				out = append(out, links[0]+" "+links[1])
			}
		}
		return out
	}, 50)
	var want []string
	for h := o.ledger.TipHeight; h >= 0; h-- {
		want = append(want, fmt.Sprintf("/block/%d /block/%s", h, o.hashes[h]))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("the blocks list differs from the chain: %s", firstDiff(rows, want))
	}
	for h, b := range o.blocks {
		p := c.page(t, fmt.Sprintf("/block/%d", h))
		if got := p.textOf(t, "block-hash"); got != o.hashes[h] {
			t.Errorf("block %d: hash %s, want %s", h, got, o.hashes[h])
		}
		if got, want := p.textOf(t, "block-txcount"), fmtNum(int64(len(b.Transactions))); got != want {
			t.Errorf("block %d: %s txs, want %s", h, got, want)
		}
		if prev := p.relLink("prevnext", "prev"); h > 0 && prev != "/block/"+o.hashes[h-1] || h == 0 && prev != "" {
			t.Errorf("block %d: previous block link %q", h, prev)
		}
		if next := p.relLink("prevnext", "next"); h < len(o.blocks)-1 && next != "/block/"+o.hashes[h+1] || h == len(o.blocks)-1 && next != "" {
			t.Errorf("block %d: next block link %q", h, next)
		}
		txids := follow(t, c, fmt.Sprintf("/block/%d", h), func(p *htmlPage) []string {
			return cardTxids(p.byID("block-txs"))
		}, 25)
		var wantTxids []string
		for _, tx := range b.Transactions {
			wantTxids = append(wantTxids, tx.TxHash().String())
		}
		if first := cards(p.byID("block-txs")); h > 0 && (len(first) == 0 || !strings.Contains(first[0].text, "Coinbase (newly generated coins)")) {
			t.Errorf("block %d: the first tx is not shown as the coinbase", h)
		}
		if !slices.Equal(txids, wantTxids) {
			t.Errorf("block %d: paging lists txs that differ from the block: %s", h, firstDiff(txids, wantTxids))
		}
	}
}

func checkTxs(t *testing.T, c *crawlResult, o *oracle) {
	for txid, ot := range o.txs {
		p := c.page(t, "/tx/"+txid)
		info := o.ledger.Txs[txid]
		conf := o.confirmations(ot.height)
		wantConf := fmtNum(int64(conf)) + " confirmations"
		if conf == 1 {
			wantConf = "1 confirmation"
		}
		checks := [][3]string{
			{"txid", p.textOf(t, "txid"), txid},
			{"confirmations", p.textOf(t, "tx-confirmations"), wantConf},
			{"block", p.textOf(t, "tx-block"), fmtNum(int64(ot.height))},
			{"fee", p.textOf(t, "tx-fee"), fmtCoin(info.Fee)},
			{"vsize", p.textOf(t, "tx-vsize"), fmtNum(ot.vsize) + " vB"},
		}
		for _, ch := range checks {
			if ch[1] != ch[2] {
				t.Errorf("tx %s: %s %q, want %q", txid, ch[0], ch[1], ch[2])
			}
		}
		if got := attr(p.byID("tx-block"), "href"); got != "/block/"+o.hashes[ot.height] {
			t.Errorf("tx %s: block link %s", txid, got)
		}
		for i, in := range ot.tx.TxIn {
			li := c.page(t, txWindow(txid, "input", i)).byID(fmt.Sprintf("input-%d", i))
			if li == nil {
				t.Errorf("tx %s: no input %d", txid, i)
				continue
			}
			if ot.coinbase {
				if !strings.Contains(text(li), "Coinbase") {
					t.Errorf("tx %s: coinbase input shows %q", txid, text(li))
				}
				continue
			}
			links, txt := hrefs(li), text(li)
			if prev := txWindow(in.PreviousOutPoint.Hash.String(), "output", int(in.PreviousOutPoint.Index)) + fmt.Sprintf("#output-%d", in.PreviousOutPoint.Index); !containsStr(links, prev) {
				t.Errorf("tx %s input %d: no link to the funding output %s in %v", txid, i, prev, links)
			}
			if a := ot.inAddrs[i]; a != "" && !containsStr(links, "/address/"+a) {
				t.Errorf("tx %s input %d: no link to %s in %v", txid, i, a, links)
			}
			if !strings.Contains(txt, fmtCoin(ot.inValues[i])) {
				t.Errorf("tx %s input %d: %q lacks %s", txid, i, txt, fmtCoin(ot.inValues[i]))
			}
		}
		if p.byID(fmt.Sprintf("input-%d", len(ot.tx.TxIn))) != nil {
			t.Errorf("tx %s: more inputs than %d", txid, len(ot.tx.TxIn))
		}
		for n, out := range ot.tx.TxOut {
			li := c.page(t, txWindow(txid, "output", n)).byID(fmt.Sprintf("output-%d", n))
			if li == nil {
				t.Errorf("tx %s: no output %d", txid, n)
				continue
			}
			links, txt := hrefs(li), text(li)
			if !strings.Contains(txt, fmtCoin(out.Value)) {
				t.Errorf("tx %s output %d: %q lacks %s", txid, n, txt, fmtCoin(out.Value))
			}
			if a := ot.outAddrs[n]; a != "" && !containsStr(links, "/address/"+a) || a == "" && slices.ContainsFunc(links, func(l string) bool { return strings.HasPrefix(l, "/address/") }) {
				t.Errorf("tx %s output %d: address links %v, want %q", txid, n, links, a)
			}
			if sp, ok := ot.spentBy[uint32(n)]; ok {
				if want := txWindow(sp.Hash.String(), "input", int(sp.Index)) + fmt.Sprintf("#input-%d", sp.Index); !containsStr(links, want) {
					t.Errorf("tx %s output %d: no link to its spending input %s in %v", txid, n, want, links)
				}
			} else if ot.outAddrs[n] != "" && !strings.Contains(txt, "unspent") {
				t.Errorf("tx %s output %d: %q does not say unspent", txid, n, txt)
			}
		}
	}
}

// txWindow is the tx page listing input or output n (side "input" or
// "output"): the server lists 50 of each at a time, the first 50 on the
// plain page.
func txWindow(txid, side string, n int) string {
	if n < 50 {
		return "/tx/" + txid
	}
	return fmt.Sprintf("/tx/%s?%ss=%d", txid, side, n-n%50)
}

// card is a tx card on an address page.
type card struct{ txid, delta, text string }

func cards(n *html.Node) []card {
	var out []card
	ids := cardTxids(n)
	for i, a := range findAll(n, func(c *html.Node) bool { return isElem(c, "article") && hasClass(c, "tx") }) {
		d := findAll(a, func(c *html.Node) bool { return hasClass(c, "delta") })
		cd := card{txid: ids[i], text: text(a)}
		if len(d) == 1 {
			cd.delta = text(d[0])
		}
		out = append(out, cd)
	}
	return out
}

func checkAddresses(t *testing.T, c *crawlResult, o *oracle) {
	multi := 0
	for addr, al := range o.ledger.Addresses {
		base := "/address/" + addr
		p := c.page(t, base)
		for _, ch := range [][3]string{
			{"balance", p.textOf(t, "balance"), fmtCoin(al.Balance)},
			{"received", p.textOf(t, "total-received"), fmtCoin(al.Received)},
			{"sent", p.textOf(t, "total-sent"), fmtCoin(al.Sent)},
			{"txs", p.textOf(t, "tx-count"), fmtNum(int64(al.TxCount()))},
		} {
			if ch[1] != ch[2] {
				t.Errorf("%s: %s %q, want %q", addr, ch[0], ch[1], ch[2])
			}
		}
		var listed []card
		follow(t, c, base, func(p *htmlPage) []string {
			cs := cards(p.byID("confirmed-txs"))
			listed = append(listed, cs...)
			return make([]string, len(cs))
		}, 25)
		var txids []string
		for _, cd := range listed {
			txids = append(txids, cd.txid)
			if want := fmtSignedCoin(o.net[addr][cd.txid]); cd.delta != want {
				t.Errorf("%s: tx %s shows %q for the address, want %q", addr, cd.txid, cd.delta, want)
			}
			if ot := o.txs[cd.txid]; ot != nil && ot.coinbase != strings.Contains(cd.text, "Coinbase (newly generated coins)") {
				t.Errorf("%s: tx %s (coinbase %v) shows %q", addr, cd.txid, ot.coinbase, cd.text)
			}
		}
		if !slices.Equal(txids, al.Txids) {
			t.Errorf("%s: paging lists txs that differ from the ledger: %s", addr, firstDiff(txids, al.Txids))
		}
		if len(al.Txids) > 25 {
			multi++
		}
		for _, side := range []struct {
			filter string
			in     bool
		}{{"inputs", true}, {"outputs", false}} {
			got := follow(t, c, base+"?filter="+side.filter, func(p *htmlPage) []string {
				return cardTxids(p.byID("confirmed-txs"))
			}, 25)
			if want := o.txidsWhere(addr, side.in); !slices.Equal(got, want) {
				t.Errorf("%s filter=%s: %s", addr, side.filter, firstDiff(got, want))
			}
		}
	}
	if multi < 3 {
		t.Errorf("only %d addresses have more than one page of txs; paging is barely tested", multi)
	}
}

func checkPending(t *testing.T, c *crawlResult, z string, pendingIDs []string) {
	p := c.page(t, "/address/"+z)
	for _, ch := range [][3]string{
		{"balance", p.textOf(t, "balance"), "0 rBTC"},
		{"unconfirmed balance", p.textOf(t, "unconfirmed-balance"), "+0.007 rBTC"},
		{"unconfirmed txs", p.textOf(t, "unconfirmed-txs"), "1"},
		{"txs", p.textOf(t, "tx-count"), "0"},
	} {
		if ch[1] != ch[2] {
			t.Errorf("pending address: %s %q, want %q", ch[0], ch[1], ch[2])
		}
	}
	if got := cards(p.byID("pending-txs")); len(got) != 1 || got[0].txid != pendingIDs[0] || got[0].delta != "+0.007 rBTC" {
		t.Errorf("pending section %+v, want %s +0.007 rBTC", got, pendingIDs[0])
	}
	if got := cardTxids(p.byID("confirmed-txs")); len(got) != 0 {
		t.Errorf("pending tx listed as confirmed: %v", got)
	}
	tp := c.page(t, "/tx/"+pendingIDs[0])
	if got := tp.textOf(t, "tx-confirmations"); got != "Unconfirmed" {
		t.Errorf("pending tx status %q", got)
	}
	if got := tp.textOf(t, "tx-fee"); !strings.HasSuffix(got, " rBTC") || got == "0 rBTC" {
		t.Errorf("pending tx fee %q", got)
	}
	listed := follow(t, c, "/mempool", func(p *htmlPage) []string {
		var out []string
		for _, h := range hrefs(p.doc) {
			if rest, ok := strings.CutPrefix(h, "/tx/"); ok {
				out = append(out, rest)
			}
		}
		return out
	}, 50)
	if got, want := slices.Sorted(slices.Values(listed)), slices.Sorted(slices.Values(pendingIDs)); !slices.Equal(got, want) {
		t.Errorf("mempool pages list %d txs, want the %d pending ones", len(got), len(want))
	}
	if got := c.page(t, "/mempool").textOf(t, "mempool-count"); got != fmt.Sprint(len(pendingIDs)) {
		t.Errorf("mempool count %q", got)
	}
}

// firstDiff describes where two lists differ.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("item %d is %s, want %s (%d items, want %d)", i, got[i], want[i], len(got), len(want))
		}
	}
	return fmt.Sprintf("%d items, want %d", len(got), len(want))
}
