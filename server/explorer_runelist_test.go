package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

// runeListFake adds the list queries to runesFake: count runes numbered
// 0..count-1, the rune of number n at block 840000+n.
type runeListFake struct {
	*runesFake
	count int
	asked []int // the pages asked
}

func (f *runeListFake) Capabilities() api.Capabilities { return api.Capabilities{Runes: f} }

func (f *runeListFake) RuneList(_ context.Context, page, size int) (*api.RuneList, error) {
	f.asked = append(f.asked, page)
	pages := max((f.count+size-1)/size, 1)
	page = min(max(page, 1), pages)
	out := &api.RuneList{Paging: api.Paging{Page: page, TotalPages: pages, ItemsOnPage: size}, Count: uint64(f.count)}
	for n := f.count - 1 - (page-1)*size; n >= 0 && len(out.Runes) < size; n-- {
		out.Runes = append(out.Runes, api.RuneListEntry{RuneInfo: api.RuneInfo{ID: fmt.Sprintf("%d:1", 840_000+n), Name: "AAAA",
			SpacedName: "AA•AA", Number: uint64(n), Block: uint64(840_000 + n), Divisibility: 1, Symbol: "$", Supply: "1005",
			Mints: "3", Burned: "20", Premine: "1000", Timestamp: 1_700_000_000}, Cap: "10", Holders: uint64(n) + 7})
	}
	return out, nil
}

// The list pages newest first with the explorer's pager and links each
// rune; the menu links it; the rune page shows its holders.
func TestExplorerRuneList(t *testing.T) {
	f := &runeListFake{runesFake: newRunesFake(), count: 120}
	f.rune.Holders = 1 // read with the page's entry
	p := NewPublic(f, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	code, _, body := getRunePage(t, p, "/runes?page=2")
	if code != 200 {
		t.Fatalf("/runes: %d\n%s", code, body)
	}
	for _, want := range []string{`<a href="/runes">Runes</a>`, `id="rune-count">120 runes etched`,
		`<tr data-rune="840069:1" data-number="69" data-supply="1005" data-mints="3" data-cap="10" data-burned="20" data-holders="76">`,
		`<a href="/rune/840069:1">AA•AA</a> <span class="muted">$</span>`, `<td class="num">3 / 10</td>`,
		`<td class="num">100.5` + "\u00a0" + `$</td>`, `<td class="num">2` + "\u00a0" + `$</td>`, `href="/runes?page=3" rel="next"`,
		`href="/runes?page=1" rel="prev"`, `data-number="20"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/runes?page=2 lacks %s", want)
		}
	}
	if strings.Contains(body, `data-number="70"`) || strings.Contains(body, `data-number="19"`) {
		t.Error("page 2 holds runes of other pages")
	}
	if fmt.Sprint(f.asked) != "[2]" {
		t.Errorf("pages asked %v", f.asked)
	}
	_, _, body = getRunePage(t, p, "/rune/840200:7")
	if !strings.Contains(body, `id="rune-holders" data-count="1">1 address<`) {
		t.Errorf("rune page without its holder:\n%s", body)
	}
	f.count = 0
	if _, _, body = getRunePage(t, p, "/runes"); !strings.Contains(body, "No runes etched yet.") || strings.Contains(body, `class="pager"`) {
		t.Errorf("empty list:\n%s", body)
	}
}

// Without the index /runes is a 404 that says why and no page links it.
func TestExplorerRuneListOff(t *testing.T) {
	s := newServed(t)
	code, _, body := s.do(t, "GET", "/runes", "")
	if code != 404 || !strings.Contains(string(body), "keeps no Runes index") {
		t.Errorf("/runes: %d\n%s", code, body)
	}
	if _, _, body = s.do(t, "GET", "/", ""); strings.Contains(string(body), `href="/runes"`) {
		t.Error("the menu links /runes without the index")
	}
}

// A listed tx's moves: its own inputs' runes out, its own outputs' in,
// summed by rune, signed, in rune order; none without runes.
func TestRuneMoves(t *testing.T) {
	r := func(id, amount string) api.RuneBalance {
		return api.RuneBalance{ID: id, SpacedName: "R" + id, Amount: amount, Divisibility: 1, Symbol: "R"}
	}
	tx := &api.Tx{Txid: "t",
		Vin: []api.Vin{{IsOwn: true, Runes: []api.RuneBalance{r("10:2", "300"), r("9:1", "5")}}, {Runes: []api.RuneBalance{r("10:2", "1")}}},
		Vout: []api.Vout{{IsOwn: true, Runes: []api.RuneBalance{r("10:2", "200")}}, {IsOwn: true, Runes: []api.RuneBalance{r("11:0", "7")}},
			{Runes: []api.RuneBalance{r("10:2", "100")}}}}
	m := runeMoves(tx)
	var got []string
	for _, mv := range m.Moves {
		got = append(got, mv.ID+" "+mv.Delta+" "+mv.Text)
	}
	want := []string{"9:1 -5 -0.5\u00a0R", "10:2 -100 -10\u00a0R", "11:0 7 +0.7\u00a0R"}
	if m.Txid != "t" || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("moves %q, want %q", got, want)
	}
	if runeMoves(&api.Tx{Vin: []api.Vin{{IsOwn: true}}, Vout: []api.Vout{{IsOwn: true}}}) != nil {
		t.Error("moves for a tx without runes")
	}
	if m := runeMoves(fiatTx{Tx: &api.Tx{Vout: []api.Vout{{IsOwn: true, Runes: []api.RuneBalance{r("1:0", "0")}}}}}); m == nil || m.Moves[0].Text != "0\u00a0R" {
		t.Errorf("a zero move: %+v", m)
	}
}

// The balance table's rows: confirmed and pending merged by rune, a rune
// only pending with a zero confirmed balance.
func TestRuneRows(t *testing.T) {
	conf := []api.RuneBalance{{ID: "5:1", SpacedName: "A", Amount: "300", Symbol: "A"}}
	pend := []api.RuneBalance{{ID: "5:1", SpacedName: "A", Amount: "-100", Symbol: "A"}, {ID: "2:3", SpacedName: "B", Amount: "25", Divisibility: 1}}
	rows := runeRows(&api.Address{Runes: &conf, UnconfirmedRunes: &pend})
	var got []string
	for _, r := range rows {
		s := r.ID + " " + r.Amount + " " + r.Text
		if r.Pending != nil {
			s += " " + r.Pending.Delta + " " + r.Pending.Text
		}
		got = append(got, s)
	}
	want := []string{"2:3  0\u00a0¤ 25 +2.5\u00a0¤", "5:1 300 300\u00a0A -100 -100\u00a0A"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if runeRows(&api.Address{}) != nil {
		t.Error("rows without runes=true")
	}
}
