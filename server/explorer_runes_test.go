package server

import (
	"context"
	"html"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

// runesFake is a service with the Runes index on: one tx with runes and a
// runestone, one rune. (The pages against a real index and the ledger are
// e2e's TestE2ERunes.)
type runesFake struct {
	explorerFake
	tx    *api.Tx
	stone *api.RunestoneInfo
	rune  *api.RunePage
}

func (f *runesFake) Capabilities() api.Capabilities { return api.Capabilities{Runes: f} }

func (f *runesFake) RunesIndexed(context.Context) (bool, error) { return true, nil }

func (f *runesFake) Runestone(context.Context, *api.Tx) (*api.RunestoneInfo, error) {
	return f.stone, nil
}

func (f *runesFake) TxWithRunes(_ context.Context, txid string) (*api.Tx, error) {
	if txid != f.tx.Txid {
		return nil, &api.Error{Msg: "Transaction not found", Err: api.ErrNotFound}
	}
	return f.tx, nil
}

func (f *runesFake) RunePage(_ context.Context, q string) (*api.RunePage, error) {
	if q != f.rune.ID && q != f.rune.Name && q != f.rune.SpacedName {
		return nil, &api.Error{Msg: "rune " + q + " not found", Err: api.ErrNotFound}
	}
	return f.rune, nil
}

func (f *runesFake) Rune(context.Context, string) (*api.RuneInfo, error) { panic("unused") }

func (f *runesFake) UtxosWithRunes(context.Context, string, bool, int) ([]api.Utxo, error) {
	panic("unused")
}

func (f *runesFake) RuneHistory(context.Context, string, api.AddressQuery) (*api.RuneHistory, error) {
	panic("unused")
}

func (f *runesFake) Search(_ context.Context, q string) (*api.SearchResult, error) {
	return nil, &api.Error{Msg: "No block, transaction, address or xpub matches '" + q + "'", Err: api.ErrNotFound}
}

func newRunesFake() *runesFake {
	u := uint64(840_100)
	pointer := uint32(1)
	goods := api.RuneRef{ID: "840000:3", SpacedName: "UNCOMMON•GOODS", Divisibility: 0, Symbol: "⧉", Known: true}
	mine := api.RuneRef{ID: "840200:7", SpacedName: "Z•Z•TOP", Divisibility: 2, Symbol: "Z", Known: true}
	return &runesFake{
		tx: &api.Tx{Txid: strings.Repeat("ab", 32), BlockHeight: 840_200, Confirmations: 3, Value: api.NewAmount(20_000),
			Vin: []api.Vin{{N: 0, Txid: strings.Repeat("cd", 32), Value: api.NewAmount(30_000), Addresses: []string{"bc1qin"}, IsAddress: true,
				Runes: []api.RuneBalance{{ID: goods.ID, SpacedName: goods.SpacedName, Amount: "5000", Symbol: goods.Symbol}}}},
			Vout: []api.Vout{{N: 0, Value: api.NewAmount(0), Addresses: []string{"OP_RETURN 13"}},
				{N: 1, Value: api.NewAmount(20_000), Addresses: []string{"bc1qout"}, IsAddress: true,
					Runes: []api.RuneBalance{{ID: mine.ID, SpacedName: mine.SpacedName, Amount: "12345", Divisibility: 2, Symbol: "Z"}}}},
			RunesBurned: []api.RuneBalance{{ID: goods.ID, SpacedName: goods.SpacedName, Amount: "5000", Symbol: goods.Symbol}}},
		stone: &api.RunestoneInfo{Vout: 0, Outputs: 2, Pointer: &pointer, Mint: &goods,
			Etching: &api.EtchingInfo{Name: "Z•Z•TOP", Symbol: "Z", Divisibility: 2, Premine: "12345", Supply: "22345",
				Terms: &api.RuneTerms{Amount: "100", Cap: "100", HeightStart: &u}, Turbo: true, Created: &mine},
			Edicts: []api.EdictInfo{{Rune: goods, Amount: "5000", Output: 0}, {Rune: mine, Amount: "0", All: true, Output: 2, Split: true},
				{Rune: api.RuneRef{ID: "9:9"}, Amount: "1", Output: 1}}},
		rune: &api.RunePage{RuneInfo: api.RuneInfo{ID: mine.ID, Name: "ZZTOP", SpacedName: mine.SpacedName, Number: 42,
			Etching: strings.Repeat("ab", 32), Block: 840_200, Divisibility: 2, Symbol: "Z", Premine: "12345", Mints: "1",
			Burned: "0", Supply: "12445", Terms: &api.RuneTerms{Amount: "100", Cap: "100"}}, Mintable: true, MintAmount: "100", MintsLeft: "99", Height: 840_202},
	}
}

func getRunePage(t *testing.T, p *Public, path string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Header().Get("Location"), html.UnescapeString(rec.Body.String())
}

// With the index on, the tx page shows the runestone (etching, mint,
// edicts, pointer), each input's and output's runes with the runes'
// divisibility and symbol, and the burns; the rune page its entry and
// terms; search finds a rune by id or by name in any case.
func TestExplorerRunesOn(t *testing.T) {
	f := newRunesFake()
	p := NewPublic(f, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	code, _, body := getRunePage(t, p, "/tx/"+f.tx.Txid)
	if code != 200 {
		t.Fatalf("tx page: %d\n%s", code, body)
	}
	for _, want := range []string{
		`id="runestone" data-vout="0"`, "Runestone", `<a href="/rune/840200:7" data-rune="840200:7">Z•Z•TOP</a>`,
		`id="rs-symbol">Z<`, `id="rs-divisibility">2<`, `id="rs-premine" data-amount="12345">123.45 Z<`,
		`id="rs-terms" data-amount="100" data-cap="100">1 Z a mint, up to 100 mints; heights from 840,100<`,
		`id="rs-supply" data-amount="22345">223.45 Z<`, `id="rs-turbo">yes<`,
		`id="rs-mint" data-rune="840000:3"><a href="/rune/840000:3">UNCOMMON•GOODS</a>`,
		`id="rs-pointer" data-output="1">`, `<tr data-rune="840000:3" data-amount="5000" data-output="0">`,
		`>5000 ⧉</td><td><a href="#output-0">output 0</a>`, `>all unallocated</td><td>split over the outputs<`,
		`<span class="mono">9:9</span> <span class="muted small">(no such rune)</span>`,
		`<dd data-rune="840000:3" data-amount="5000">5000 ⧉</dd>`, `<dd data-rune="840200:7" data-amount="12345">123.45 Z</dd>`,
		`id="runes-burned"`,
	} {
		if !strings.Contains(body, nbsp(want)) {
			t.Errorf("tx page lacks %s", want)
		}
	}
	// a cenotaph: its flaw, and no etching details
	f.stone = &api.RunestoneInfo{Vout: 0, Outputs: 2, Cenotaph: true, Flaw: "unrecognized even tag", Etching: &api.EtchingInfo{Name: "ABC", Premine: "0"}}
	_, _, body = getRunePage(t, p, "/tx/"+f.tx.Txid)
	if !strings.Contains(body, "Cenotaph") || !strings.Contains(body, "A malformed runestone: unrecognized even tag.") ||
		!strings.Contains(body, "no rune created") || strings.Contains(body, `id="rs-premine"`) {
		t.Errorf("cenotaph page:\n%s", body)
	}

	for _, path := range []string{"/rune/840200:7", "/rune/Z%E2%80%A2Z%E2%80%A2TOP"} {
		code, _, body = getRunePage(t, p, path)
		for _, want := range []string{`id="rune-name">Z•Z•TOP<`, `id="rune-id">840200:7<`, `id="rune-plain">ZZTOP<`, `id="rune-number">42<`,
			`id="rune-supply" data-amount="12445">124.45 Z<`, `id="rune-mints" data-count="1">1<`, `id="rune-burned" data-amount="0">0 Z<`,
			`href="/tx/` + f.rune.Etching + `"`, `<a href="/block/840200">840,200</a>`, `id="rune-mints-left" data-count="99">99<`,
			`id="rune-terms-amount" data-amount="100">1 Z<`, `<span class="badge ok">yes</span> in block 840,203`} {
			if code != 200 || !strings.Contains(body, nbsp(want)) {
				t.Errorf("%s: %d, lacks %s", path, code, want)
			}
		}
	}
	if code, _, body = getRunePage(t, p, "/rune/1:0"); code != 404 || !strings.Contains(body, "rune 1:0 not found") {
		t.Errorf("unknown rune: %d\n%s", code, body)
	}
	for q, want := range map[string]string{"840200:7": "/rune/840200:7", "zztop": "/rune/840200:7", "z.z.top": ""} {
		code, loc, _ := getRunePage(t, p, "/search?q="+q)
		if want != "" && (code != 302 || loc != want) || want == "" && code != 404 {
			t.Errorf("search %q: %d to %q, want %q", q, code, loc, want)
		}
	}
}

// nbsp puts the no-break space runeAmount writes before a symbol.
func nbsp(s string) string {
	for _, sym := range []string{" Z<", " ⧉<", " Z a "} {
		s = strings.ReplaceAll(s, sym, "\u00a0"+sym[1:])
	}
	return s
}

// Without the index nothing changes: no runes on address and tx pages,
// the rune page is a 404 page that says why, search is as before.
func TestExplorerRunesOff(t *testing.T) {
	s := newServed(t)
	for path, status := range map[string]int{"/rune/840000:3": 404, "/rune/UNCOMMON•GOODS": 404, "/search?q=UNCOMMON.GOODS": 404} {
		code, _, body := s.do(t, "GET", path, "")
		if code != status || !strings.Contains(string(body), `id="message"`) {
			t.Errorf("%s: %d, want %d", path, code, status)
		}
		if strings.HasPrefix(path, "/rune/") && !strings.Contains(string(body), "keeps no Runes index") {
			t.Errorf("%s: the 404 page does not say why:\n%s", path, body)
		}
	}
	var txid string
	for id := range s.f.Ledger.Txs {
		txid = id
		break
	}
	for _, path := range []string{"/address/" + s.f.DemoAddress, "/tx/" + txid} {
		code, _, body := s.do(t, "GET", path, "")
		if code != 200 || strings.Contains(string(body), "/rune/") || strings.Contains(string(body), "runestone") || strings.Contains(string(body), "rune-balances") {
			t.Errorf("%s: %d, mentions runes without the index", path, code)
		}
	}
}
