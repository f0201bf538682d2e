package e2e

// The explorer's runes (TestE2ERunes calls checkExplorer on its chain):
// address and account pages hold the ledger's rune balances; tx pages show
// each input's and output's runes and the burns as the runes=true answer
// gives them, and the runestone as the test's txs encode it; the rune page
// equals /api/v2/rune; search finds a rune by id or name. The pages pass
// html-validate, carry no inline style or script, fit a phone's width and
// pass axe-core in both schemes.

import (
	"fmt"
	"maps"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"
	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// runeCells reads the data-rune/data-amount pairs under n, summed by id.
func runeCells(t *testing.T, n *html.Node, what string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, c := range findAll(n, func(c *html.Node) bool {
		return c.Type == html.ElementNode && attr(c, "data-amount") != "" && attr(c, "data-rune") != ""
	}) {
		v, err := strconv.ParseUint(attr(c, "data-amount"), 10, 64)
		if err != nil {
			t.Fatalf("%s: amount %q", what, attr(c, "data-amount"))
		}
		out[attr(c, "data-rune")] += v
	}
	return out
}

func apiRunes(bs []api.RuneBalance) map[string]uint64 {
	out := map[string]uint64{}
	for _, b := range bs {
		v, _ := strconv.ParseUint(b.Amount, 10, 64)
		out[b.ID] += v
	}
	return out
}

// runeDecimal is the test's own rendering of atomic units with a
// divisibility (trailing zeros dropped), to read the pages' amounts.
func runeDecimal(amount string, div uint8, symbol string) string {
	v, _ := new(big.Int).SetString(amount, 10)
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(div)), nil)
	q, m := new(big.Int).QuoRem(v, unit, new(big.Int))
	s := q.String()
	if m.Sign() != 0 {
		f := m.String()
		s += "." + strings.TrimRight(strings.Repeat("0", int(div)-len(f))+f, "0")
	}
	if symbol == "" {
		symbol = "¤"
	}
	return s + "\u00a0" + symbol
}

// checkExplorer checks the explorer's rune pieces; txs are the runestone
// txs of the chain (and one plain tx).
func (r *runesAnswers) checkExplorer(ledger runesLedger, rid string, txs ...*wire.MsgTx) []*htmlPage {
	t := r.t
	t.Helper()
	var pages []*htmlPage
	var info api.RuneInfo
	getJSON(t, r.base+"/api/v2/rune/"+rid, 200, &info)
	for _, a := range r.addrs {
		p := fetchPage(t, r.base, "/address/"+a)
		pages = append(pages, p)
		tbl := p.byID("rune-balances")
		if tbl == nil {
			t.Fatalf("%s: no rune balances", p.path)
		}
		want := ledger[a]
		if want == nil {
			want = map[string]uint64{}
		}
		if have := runeCells(t, tbl, p.path); !maps.Equal(have, want) {
			t.Errorf("%s: rune balances %v, ledger %v", p.path, have, want)
		}
		if v, ok := want[rid]; ok {
			if got, w := text(tbl), runeDecimal(strconv.FormatUint(v, 10), info.Divisibility, info.Symbol); !strings.Contains(got, w) {
				t.Errorf("%s: balance shown as %q, want %q", p.path, got, w)
			}
		}
		var txs api.Address
		getJSON(t, r.base+"/api/v2/address/"+a, 200, &txs)
		r.checkMoves(p, txs.Txids, func(as []string) bool { return len(as) == 1 && as[0] == a }, want) // runes_explorer_list_test.go
	}
	px := fetchPage(t, r.base, "/xpub/"+r.xpub)
	pages = append(pages, px)
	want := map[string]uint64{}
	for _, a := range r.hdAddrs {
		for id, v := range ledger[a] {
			want[id] += v
		}
	}
	if have := runeCells(t, px.byID("rune-balances"), px.path); !maps.Equal(have, want) {
		t.Errorf("%s: rune balances %v, ledger %v", px.path, have, want)
	}
	var acct api.Address
	getJSON(t, r.base+"/api/v2/xpub/"+r.xpub+"?details=txids", 200, &acct)
	r.checkMoves(px, acct.Txids, func(as []string) bool { return len(as) == 1 && slices.Contains(r.hdAddrs, as[0]) }, want)
	for _, tx := range txs {
		pages = append(pages, r.checkTxPage(tx, rid))
	}
	pages = append(pages, r.checkRunePage(info)...)
	return pages
}

// checkTxPage compares a tx page with the runes=true answer and the
// runestone its outputs encode.
func (r *runesAnswers) checkTxPage(tx *wire.MsgTx, rid string) *htmlPage {
	t := r.t
	t.Helper()
	txid := tx.TxHash().String()
	p := fetchPage(t, r.base, "/tx/"+txid)
	var a api.Tx
	getJSON(t, r.base+"/api/v2/tx/"+txid+"?runes=true", 200, &a)
	for i, v := range a.Vin {
		if have, want := runeCells(t, p.byID(fmt.Sprintf("input-%d", i)), p.path), apiRunes(v.Runes); !maps.Equal(have, want) {
			t.Errorf("%s: input %d runes %v, the API %v", p.path, i, have, want)
		}
	}
	for i, v := range a.Vout {
		if have, want := runeCells(t, p.byID(fmt.Sprintf("output-%d", i)), p.path), apiRunes(v.Runes); !maps.Equal(have, want) {
			t.Errorf("%s: output %d runes %v, the API %v", p.path, i, have, want)
		}
	}
	if have, want := runeCells(t, p.byID("runes-burned"), p.path), apiRunes(a.RunesBurned); !maps.Equal(have, want) {
		t.Errorf("%s: burned %v, the API %v", p.path, have, want)
	}
	scripts := make([][]byte, len(tx.TxOut))
	for i, o := range tx.TxOut {
		scripts[i] = o.PkScript
	}
	art := runestone.Decipher(scripts)
	card := p.byID("runestone")
	switch {
	case art == nil:
		if card != nil {
			t.Errorf("%s: a runestone card for a tx without one", p.path)
		}
	case card == nil:
		t.Errorf("%s: no runestone card", p.path)
	case art.Cenotaph != nil:
		if got := p.textOf(t, "cenotaph-flaw"); !strings.Contains(got, art.Cenotaph.Flaw.String()) {
			t.Errorf("%s: cenotaph says %q, want the flaw %q", p.path, got, art.Cenotaph.Flaw)
		}
	default:
		r.checkStone(p, art.Runestone, txid, rid)
	}
	return p
}

func (r *runesAnswers) checkStone(p *htmlPage, rs *runestone.Runestone, txid, rid string) {
	t := r.t
	t.Helper()
	dataOf := func(id, key string) string {
		n := p.byID(id)
		if n == nil {
			t.Fatalf("%s: no #%s", p.path, id)
		}
		return attr(n, key)
	}
	if e := rs.Etching; e != nil {
		var info api.RuneInfo
		getJSON(t, r.base+"/api/v2/rune/"+rid, 200, &info)
		links := findAll(p.byID("rs-etching"), func(n *html.Node) bool { return isElem(n, "a") })
		if info.Etching != txid || len(links) != 1 || attr(links[0], "data-rune") != rid || text(links[0]) != info.SpacedName {
			t.Errorf("%s: etching shows %q, the API's rune %s etched in %s", p.path, p.textOf(t, "rs-etching"), rid, info.Etching)
		}
		if got := dataOf("rs-premine", "data-amount"); e.Premine == nil || got != e.Premine.String() {
			t.Errorf("%s: premine %s, the runestone %v", p.path, got, e.Premine)
		}
		if got := p.textOf(t, "rs-divisibility"); e.Divisibility == nil || got != strconv.Itoa(int(*e.Divisibility)) {
			t.Errorf("%s: divisibility %s", p.path, got)
		}
		if got := p.textOf(t, "rs-symbol"); e.Symbol == nil || got != string(*e.Symbol) {
			t.Errorf("%s: symbol %s", p.path, got)
		}
		if tm := e.Terms; tm != nil && (dataOf("rs-terms", "data-amount") != tm.Amount.String() || dataOf("rs-terms", "data-cap") != tm.Cap.String()) {
			t.Errorf("%s: terms %q, the runestone %v×%v", p.path, p.textOf(t, "rs-terms"), tm.Amount, tm.Cap)
		}
		if got, want := p.textOf(t, "rs-turbo"), map[bool]string{true: "yes", false: "no"}[e.Turbo]; got != want {
			t.Errorf("%s: turbo %s", p.path, got)
		}
	}
	if rs.Mint != nil {
		if got := dataOf("rs-mint", "data-rune"); got != rs.Mint.String() {
			t.Errorf("%s: mint of %s, the runestone %s", p.path, got, rs.Mint)
		}
	}
	var rows []string
	if tbl := p.byID("rs-edicts"); tbl != nil {
		for _, tr := range findAll(tbl, func(n *html.Node) bool { return isElem(n, "tr") && attr(n, "data-rune") != "" }) {
			rows = append(rows, attr(tr, "data-rune")+" "+attr(tr, "data-amount")+" "+attr(tr, "data-output"))
		}
	}
	var want []string
	for _, e := range rs.Edicts {
		want = append(want, fmt.Sprintf("%s %s %d", e.ID, e.Amount, e.Output))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("%s: edicts %v, the runestone %v", p.path, rows, want)
	}
	if rs.Pointer != nil && dataOf("rs-pointer", "data-output") != strconv.Itoa(int(*rs.Pointer)) {
		t.Errorf("%s: pointer %s, the runestone %d", p.path, dataOf("rs-pointer", "data-output"), *rs.Pointer)
	}
}

// checkRunePage compares /rune/<id> and /rune/<name> with the API's entry,
// and search by id and name (any case, with spacers) with the rune page.
func (r *runesAnswers) checkRunePage(info api.RuneInfo) []*htmlPage {
	t := r.t
	t.Helper()
	var pages []*htmlPage
	spaced := info.Name[:1] + "•" + info.Name[1:]
	for _, q := range []string{info.ID, info.Name, spaced} {
		p := fetchPage(t, r.base, "/rune/"+url.PathEscape(q))
		pages = append(pages, p)
		if p.status != 200 {
			t.Fatalf("%s: status %d", p.path, p.status)
		}
		got := []string{p.textOf(t, "rune-id"), p.textOf(t, "rune-name"), p.textOf(t, "rune-plain"), p.textOf(t, "rune-divisibility"),
			attr(p.byID("rune-supply"), "data-amount"), attr(p.byID("rune-premine"), "data-amount"), attr(p.byID("rune-mints"), "data-count"),
			attr(p.byID("rune-burned"), "data-amount"), p.textOf(t, "rune-supply"), p.textOf(t, "rune-number")}
		want := []string{info.ID, info.SpacedName, info.Name, strconv.Itoa(int(info.Divisibility)), info.Supply, info.Premine, info.Mints,
			info.Burned, runeDecimal(info.Supply, info.Divisibility, info.Symbol), strconv.FormatUint(info.Number, 10)}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %s", p.path, firstDiff(got, want))
		}
		if h := hrefs(p.byID("rune-etching")); len(h) == 0 || h[0] != "/tx/"+info.Etching {
			t.Errorf("%s: etching links %v, the API %s", p.path, h, info.Etching)
		}
		if tm := info.Terms; tm != nil {
			capv, _ := strconv.ParseUint(tm.Cap, 10, 64)
			mints, _ := strconv.ParseUint(info.Mints, 10, 64)
			if got := attr(p.byID("rune-terms-amount"), "data-amount") + " " + attr(p.byID("rune-terms-cap"), "data-count") + " " +
				attr(p.byID("rune-mints-left"), "data-count"); got != fmt.Sprintf("%s %s %d", tm.Amount, tm.Cap, capv-mints) {
				t.Errorf("%s: terms %q, the API %+v with %s mints", p.path, got, tm, info.Mints)
			}
			if open := strings.HasPrefix(p.textOf(t, "rune-mintable"), "yes"); open != (mints < capv) {
				t.Errorf("%s: mintable %q with %d of %d mints", p.path, p.textOf(t, "rune-mintable"), mints, capv)
			}
		}
	}
	for _, q := range []string{info.ID, strings.ToLower(info.Name), spaced} {
		if p := fetchPage(t, r.base, "/search?q="+url.QueryEscape(q)); p.final != "/rune/"+url.PathEscape(info.ID) {
			t.Errorf("search %q went to %s, want /rune/%s", q, p.final, info.ID)
		}
	}
	for _, c := range []struct {
		path   string
		status int
	}{{"/rune/999999:9", 404}, {"/rune/ZZZZZZZZZZZZZZZZZZZZZZZZZ", 404}, {"/rune/A%E2%80%A2%E2%80%A2B", 400}, {"/rune/9:x", 400}} {
		p := fetchPage(t, r.base, c.path)
		if p.status != c.status || p.byID("message") == nil {
			t.Errorf("%s: status %d, want %d with a message", c.path, p.status, c.status)
		}
		pages = append(pages, p)
	}
	return pages
}

// checkRunesBrowser: axe-core finds no serious problem on the rune page
// kinds in either scheme, and they fit a phone's width.
func checkRunesBrowser(t *testing.T, base string, paths []string) {
	b := newBrowser(t, findChromium(t), base, artifactDir(t, "runes-screenshots"))
	src := axeSource(t)
	for _, dark := range []bool{false, true} {
		b.viewport(viewports[0], dark)
		for _, p := range paths {
			b.open(p)
			b.checkAxe(src, fmt.Sprintf("%s (dark %v)", p, dark))
		}
	}
	b.viewport(viewports[1], false)
	for _, p := range paths {
		b.open(p)
		b.fitsWidth()
	}
	b.screenshot("phone-rune")
	b.checkProblems()
}
