package e2e

// The explorer's rune list, holders, tx-list rune movements and pending
// rune balances (TestE2ERunes calls these on its chain): /runes lists the
// runes ord's /runes lists, in its order, with the entries /api/v2/rune
// answers and the holders the generator's ledger gives (also on the rune
// page, and again after the reorg); each listed tx of an address or
// account shows what the runes=true tx answer says it moved of theirs,
// and the moves add up to the ledger's balance; a pending transfer shows
// in the balance table as the API's unconfirmedRunes. All without JS:
// the tests read the server's HTML.

import (
	"maps"
	"math/big"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/api"
)

// holdersOf counts the ledger's addresses holding each rune.
func holdersOf(ledger runesLedger) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range ledger {
		for id, v := range m {
			if v > 0 {
				out[id]++
			}
		}
	}
	return out
}

// checkRuneList compares /runes with ord's /runes and /api/v2/rune, and
// the holders on the list and the rune pages with the ledger.
func (r *runesAnswers) checkRuneList(ordBase string, ledger runesLedger) []*htmlPage {
	t := r.t
	t.Helper()
	ord := ordGet(t, ordBase+"/runes", 200)
	var wantIDs []string
	entries, _ := ord["entries"].([]any)
	for _, e := range entries {
		if pair, ok := e.([]any); ok && len(pair) == 2 {
			id, _ := pair[0].(string)
			wantIDs = append(wantIDs, id)
		}
	}
	if len(wantIDs) == 0 || ord["more"] != false {
		t.Fatalf("ord's /runes: %v: the check proves little", ord)
	}
	holders := holdersOf(ledger)
	p := fetchPage(t, r.base, "/runes")
	if p.status != 200 {
		t.Fatalf("%s: status %d", p.path, p.status)
	}
	if !slices.Contains(hrefs(p.doc), "/runes") {
		t.Errorf("%s: the menu has no link to /runes", p.path)
	}
	rows := findAll(p.byID("rune-list"), func(n *html.Node) bool { return isElem(n, "tr") && attr(n, "data-rune") != "" })
	var ids []string
	for _, tr := range rows {
		id := attr(tr, "data-rune")
		ids = append(ids, id)
		var info api.RuneInfo
		getJSON(t, r.base+"/api/v2/rune/"+id, 200, &info)
		capv := ""
		if info.Terms != nil {
			capv = info.Terms.Cap
		}
		got := []string{attr(tr, "data-number"), attr(tr, "data-supply"), attr(tr, "data-mints"), attr(tr, "data-cap"),
			attr(tr, "data-burned"), attr(tr, "data-holders")}
		want := []string{strconv.FormatUint(info.Number, 10), info.Supply, info.Mints, capv, info.Burned,
			strconv.FormatUint(holders[id], 10)}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rune %s: %s", p.path, id, firstDiff(got, want))
		}
		if links := hrefs(tr); len(links) == 0 || links[0] != "/rune/"+id {
			t.Errorf("%s: rune %s links %v", p.path, id, links)
		}
		rp := fetchPage(t, r.base, "/rune/"+id)
		if got := attr(rp.byID("rune-holders"), "data-count"); got != strconv.FormatUint(holders[id], 10) {
			t.Errorf("%s: %s holders, the ledger %d", rp.path, got, holders[id])
		}
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("%s: runes %v, ord's /runes %v", p.path, ids, wantIDs)
	}
	// a page past the end is the last one
	if p2 := fetchPage(t, r.base, "/runes?page=9"); p2.status != 200 || len(findAll(p2.byID("rune-list"),
		func(n *html.Node) bool { return isElem(n, "tr") && attr(n, "data-rune") != "" })) != len(ids) {
		t.Errorf("%s: status %d, want the last page", p2.path, p2.status)
	}
	return []*htmlPage{p}
}

// pageMoves reads the rune movements of a page's tx list: by txid, the
// signed amount of each rune.
func pageMoves(t *testing.T, p *htmlPage) map[string]map[string]*big.Int {
	t.Helper()
	out := map[string]map[string]*big.Int{}
	for _, ul := range findAll(p.doc, func(n *html.Node) bool { return hasClass(n, "runemoves") }) {
		m := map[string]*big.Int{}
		for _, s := range findAll(ul, func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "data-move-rune") != "" }) {
			v, ok := new(big.Int).SetString(attr(s, "data-move"), 10)
			if !ok {
				t.Fatalf("%s: move %q", p.path, attr(s, "data-move"))
			}
			m[attr(s, "data-move-rune")] = v
		}
		out[attr(ul, "data-txid")] = m
	}
	return out
}

// apiMoves is what a tx moved of the runes of the addresses own says are
// the page's, from its runes=true answer (nil: none of them had runes).
func (r *runesAnswers) apiMoves(txid string, own func([]string) bool) map[string]*big.Int {
	var tx api.Tx
	getJSON(r.t, r.base+"/api/v2/tx/"+txid+"?runes=true", 200, &tx)
	var m map[string]*big.Int
	add := func(bs []api.RuneBalance, sign int64) {
		for _, b := range bs {
			if m == nil {
				m = map[string]*big.Int{}
			}
			if m[b.ID] == nil {
				m[b.ID] = new(big.Int)
			}
			v, _ := new(big.Int).SetString(b.Amount, 10)
			m[b.ID].Add(m[b.ID], v.Mul(v, big.NewInt(sign)))
		}
	}
	for _, v := range tx.Vin {
		if own(v.Addresses) {
			add(v.Runes, -1)
		}
	}
	for _, v := range tx.Vout {
		if own(v.Addresses) {
			add(v.Runes, 1)
		}
	}
	return m
}

func sameMoves(a, b map[string]*big.Int) bool {
	return maps.EqualFunc(a, b, func(x, y *big.Int) bool { return x.Cmp(y) == 0 })
}

// checkMoves compares the tx list of an address or account page (all its
// txs on one page) with the runes=true tx answers of txids, and the sum of
// the moves with the ledger's balances want.
func (r *runesAnswers) checkMoves(p *htmlPage, txids []string, own func([]string) bool, want map[string]uint64) {
	t := r.t
	t.Helper()
	got := pageMoves(t, p)
	sum := map[string]uint64{}
	for _, txid := range txids {
		w := r.apiMoves(txid, own)
		if g, ok := got[txid]; ok != (w != nil) || !sameMoves(g, w) {
			t.Errorf("%s: tx %s moves %v, the API %v", p.path, txid, g, w)
		}
		for id, v := range w {
			sum[id] = uint64(int64(sum[id]) + v.Int64())
		}
	}
	for id, v := range sum {
		if v == 0 {
			delete(sum, id)
		}
	}
	if want == nil {
		want = map[string]uint64{}
	}
	if !maps.Equal(sum, want) {
		t.Errorf("%s: the moves add up to %v, the ledger %v", p.path, sum, want)
	}
}

// checkPendingPages: with the pending transfer in the mempool, the
// balance tables of its sender and receiver show the API's
// unconfirmedRunes beside their unchanged confirmed runes, and their tx
// lists show what it moves.
func (r *runesAnswers) checkPendingPages(txid string, ledger runesLedger, addrs ...string) []*htmlPage {
	t := r.t
	t.Helper()
	var pages []*htmlPage
	for _, a := range addrs {
		var ans api.Address
		getJSON(t, r.base+"/api/v2/address/"+a+"?runes=true&details=basic", 200, &ans)
		if ans.UnconfirmedRunes == nil || len(*ans.UnconfirmedRunes) == 0 {
			t.Fatalf("%s: no unconfirmedRunes in the API", a)
		}
		p := fetchPage(t, r.base, "/address/"+a)
		pages = append(pages, p)
		tbl := p.byID("rune-balances")
		pend := map[string]string{}
		for _, n := range findAll(tbl, func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "data-pending-rune") != "" }) {
			pend[attr(n, "data-pending-rune")] = attr(n, "data-pending")
		}
		want := map[string]string{}
		for _, b := range *ans.UnconfirmedRunes {
			want[b.ID] = b.Amount
		}
		if !maps.Equal(pend, want) {
			t.Errorf("%s: pending runes %v, the API %v", p.path, pend, want)
		}
		if have, w := runeCells(t, tbl, p.path), ledger[a]; !maps.Equal(have, w) {
			t.Errorf("%s: confirmed runes %v with a pending tx, ledger %v", p.path, have, w)
		}
		own := func(as []string) bool { return len(as) == 1 && as[0] == a }
		if g, w := pageMoves(t, p)[txid], r.apiMoves(txid, own); w == nil || !sameMoves(g, w) {
			t.Errorf("%s: pending tx %s moves %v, the API %v", p.path, txid, g, w)
		}
	}
	return pages
}
