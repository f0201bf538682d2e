package e2e

import (
	"bytes"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The HTML explorer against a real index of the demo chain on btcd: every
// page reachable from the start page is fetched (every link must resolve,
// every #fragment must exist), no page carries inline style or script (the
// CSP would block them), the visible facts of every block, tx and
// address page are compared with the chain's ledger, paging is followed to
// the last item of every list, and every rendered page is checked with
// html-validate.
func TestE2EExplorer(t *testing.T) {
	st := startDemoStack(t, nil)
	base, g := st.inst.base, st.g

	// A new block shows on the next request: nothing is cached.
	tip0 := g.Height()
	if got := fetchPage(t, base, "/").textOf(t, "best-height"); got != fmtNum(int64(tip0)) {
		t.Fatalf("start page shows best height %q, want %d", got, tip0)
	}
	// One block of 30 payments, so that its tx list has two pages.
	kinds := []chaingen.ScriptKind{chaingen.P2WPKH, chaingen.P2TR, chaingen.P2PKH, chaingen.P2SHP2WPKH}
	var blockTxs []*wire.MsgTx
	for i := range 30 {
		tx, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, kinds[i%len(kinds)], uint64(100+i)), Value: 50_000 + int64(i)}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		blockTxs = append(blockTxs, tx)
	}
	if _, err := g.AddBlock(blockTxs...); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, tip0+1)
	tip, tipHash := g.Tip()
	waitTip(t, base, tip, tipHash.String(), st.inst.logs)
	if got := fetchPage(t, base, "/").textOf(t, "best-height"); got != fmtNum(int64(tip)) {
		t.Fatalf("after a new block the start page shows best height %q, want %d", got, tip)
	}

	// 55 pending payments (the mempool list has two pages), the first to
	// an address the chain never touched.
	z := mempoolAddr(t, g, chaingen.P2TR, 1)
	var pendingIDs []string
	for i := range 55 {
		to := z
		if i > 0 {
			to = mempoolAddr(t, g, kinds[i%len(kinds)], uint64(200+i))
		}
		tx, err := g.CreatePayment([]chaingen.Output{{Address: to, Value: 700_000}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		pendingIDs = append(pendingIDs, sendTx(t, st, tx))
	}
	waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.MempoolSize == len(pendingIDs) })
	waitAddress(t, base, z, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })

	o := newOracle(g)
	c := crawlExplorer(t, base, "/", "/search", "/sendtx")
	t.Logf("crawled %d pages (%d HTML)", len(c.pages), len(c.html()))
	extra := []*htmlPage{} // pages outside the crawl, validated too

	t.Run("links", func(t *testing.T) { checkLinks(t, c) })
	t.Run("index", func(t *testing.T) { checkIndex(t, c, o, len(pendingIDs)) })
	t.Run("blocks", func(t *testing.T) { checkBlocks(t, c, o) })
	t.Run("txs", func(t *testing.T) { checkTxs(t, c, o) })
	t.Run("addresses", func(t *testing.T) { checkAddresses(t, c, o) })
	t.Run("pending", func(t *testing.T) { checkPending(t, c, z, pendingIDs) })
	t.Run("search", func(t *testing.T) { extra = append(extra, checkSearch(t, base, o, z, pendingIDs[0])...) })
	t.Run("errors", func(t *testing.T) { extra = append(extra, checkErrorPages(t, base, o)...) })
	t.Run("sendtx", func(t *testing.T) {
		tx, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 999), Value: 400_000}}, 4)
		if err != nil {
			t.Fatal(err)
		}
		extra = append(extra, checkSendTx(t, base, tx)...)
	})
	t.Run("no-inline", func(t *testing.T) { noInlineStyleOrScript(t, append(c.html(), extra...)) })
	t.Run("html-validate", func(t *testing.T) { validateHTML(t, append(c.html(), extra...)) })

	// Last: with the node gone, pages that need it say so politely.
	t.Run("node down", func(t *testing.T) {
		if err := st.node.Stop(); err != nil {
			t.Fatal(err)
		}
		p := fetchPage(t, base, "/block/"+o.hashes[5])
		if p.status != 503 || !strings.Contains(p.textOf(t, "message"), "not responding") {
			t.Fatalf("block page with the node down: %d %q", p.status, text(p.doc))
		}
		noInternals(t, p)
		// The start page shows the liveness probe's verdict, which needs two
		// failed probes a second apart (docs/operations.md).
		deadline := time.Now().Add(10 * time.Second)
		for p = fetchPage(t, base, "/"); p.status == 200 && !strings.Contains(text(p.doc), "Not responding") && time.Now().Before(deadline); p = fetchPage(t, base, "/") {
			time.Sleep(200 * time.Millisecond)
		}
		if p.status != 200 || !strings.Contains(text(p.doc), "Not responding") {
			t.Fatalf("start page 10 s after the node went down: %d %q", p.status, text(p.doc))
		}
		validateHTML(t, []*htmlPage{p, fetchPage(t, base, "/block/"+o.hashes[5])})
	})
}

// checkSendTx posts garbage, nothing and a real tx through the form.
func checkSendTx(t *testing.T, base string, tx *wire.MsgTx) []*htmlPage {
	var pages []*htmlPage
	post := func(hexTx string) *htmlPage {
		t.Helper()
		p, err := postPage(base, hexTx)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
		return p
	}
	for _, bad := range []string{"zzzz not hex", "00", "0100000001"} {
		p := post(bad)
		if p.status != 400 || p.textOf(t, "sendtx-error") == "" || p.byID("sendtx-result") != nil {
			t.Errorf("sending %q: %d %q", bad, p.status, text(p.doc))
			continue
		}
		if got := p.textOf(t, "hex"); got != bad {
			t.Errorf("sending %q: the form lost the input (%q)", bad, got)
		}
		noInternals(t, p)
	}
	if p := post(""); p.status != 400 || !strings.Contains(p.textOf(t, "sendtx-error"), "Paste a raw transaction") {
		t.Errorf("sending nothing: %d %q", p.status, text(p.doc))
	}
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	txid := tx.TxHash().String()
	p := post(hex.EncodeToString(buf.Bytes()))
	if p.status != 200 || p.byID("sendtx-error") != nil || !containsStr(hrefs(p.byID("sendtx-result")), "/tx/"+txid) {
		t.Fatalf("sending a valid tx: %d %q", p.status, text(p.doc))
	}
	if tp := fetchPage(t, base, "/tx/"+txid); tp.status != 200 || tp.textOf(t, "txid") != txid {
		t.Fatalf("the sent tx's page: %d", tp.status)
	}
	return pages
}

// postPage posts the send form and parses the answer.
func postPage(base, hexTx string) (*htmlPage, error) {
	resp, err := explorerClient.PostForm(base+"/sendtx", url.Values{"hex": {hexTx}})
	if err != nil {
		return nil, err
	}
	return parseResponse("POST /sendtx", resp)
}

// noInternals fails when a page leaks Go internals (stack traces, error
// chains of our own code).
func noInternals(t *testing.T, p *htmlPage) {
	t.Helper()
	for _, s := range []string{"goroutine ", "panic", ".go:", "runtime.", "rpc ", "dial tcp"} {
		if bytes.Contains(p.body, []byte(s)) {
			t.Errorf("%s leaks %q: %s", p.path, s, truncateBytes(p.body, 300))
		}
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
