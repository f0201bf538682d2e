package server

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

var (
	ioIDRe   = regexp.MustCompile(`<li id="(input|output)-(\d+)"`)
	ioNextRe = regexp.MustCompile(`<a class="inline" href="([^"]+)" rel="next">next (inputs|outputs)</a>`)
	ioLinkRe = regexp.MustCompile(`<a class="mono" href="(/tx/[0-9a-f]{64}[^"#]*#(?:input|output)-\d+)"`)
)

// ioIDs are the input or output indexes a tx page lists.
func ioIDs(page, side string) []int {
	var out []int
	for _, m := range ioIDRe.FindAllStringSubmatch(page, -1) {
		if m[1] == side {
			n, _ := strconv.Atoi(m[2])
			out = append(out, n)
		}
	}
	return out
}

// A tx page lists txIOShown inputs and outputs at a time; the next links
// (plain links, no script) step through all of them once, each window in
// order; other pages link an input or output in its window.
func TestExplorerTxWindows(t *testing.T) {
	s := newServed(t)
	var fan, sweep *wire.MsgTx // the most outputs, the most inputs
	for _, b := range s.f.Gen.Blocks() {
		for _, tx := range b.Transactions {
			if fan == nil || len(tx.TxOut) > len(fan.TxOut) {
				fan = tx
			}
			if sweep == nil || len(tx.TxIn) > len(sweep.TxIn) {
				sweep = tx
			}
		}
	}
	if len(fan.TxOut) <= 2*txIOShown || len(sweep.TxIn) <= 2*txIOShown {
		t.Fatalf("the fixture's largest txs have %d outputs and %d inputs: no windows to test", len(fan.TxOut), len(sweep.TxIn))
	}
	get := func(path string) string {
		t.Helper()
		code, _, b := s.do(t, "GET", path, "")
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		return string(b)
	}
	for _, c := range []struct {
		tx         *wire.MsgTx
		side       string
		total      int
		other      string
		otherTotal int
	}{
		{fan, "output", len(fan.TxOut), "input", len(fan.TxIn)},
		{sweep, "input", len(sweep.TxIn), "output", len(sweep.TxOut)},
	} {
		path := "/tx/" + c.tx.TxHash().String()
		var seen []int
		for page := 0; path != ""; page++ {
			body := get(path)
			ids := ioIDs(body, c.side)
			want := min(txIOShown, c.total-page*txIOShown)
			if len(ids) != want || ids[0] != page*txIOShown || !strings.Contains(body, fmt.Sprintf(`<ol class="ios" start="%d">`, ids[0])) {
				t.Fatalf("%s window %d: %d %ss from %v, want %d", path, page, len(ids), c.side, ids[:min(1, len(ids))], want)
			}
			if n := len(ioIDs(body, c.other)); n != min(c.otherTotal, txIOShown) {
				t.Errorf("%s: %d %ss listed beside", path, n, c.other)
			}
			seen = append(seen, ids...)
			path = ""
			for _, m := range ioNextRe.FindAllStringSubmatch(body, -1) {
				if m[2] == c.side+"s" {
					path = html.UnescapeString(m[1])
					if !strings.HasSuffix(path, fmt.Sprintf("?%ss=%d#%s-%d", c.side, (page+1)*txIOShown, c.side, (page+1)*txIOShown)) {
						t.Errorf("window %d: next link %s", page, path)
					}
					path = path[:strings.IndexByte(path, '#')]
				}
			}
		}
		if len(seen) != c.total || !slices.IsSorted(seen) || seen[c.total-1] != c.total-1 {
			t.Errorf("%s: the windows listed %d %ss, want each of %d once", c.tx.TxHash(), len(seen), c.side, c.total)
		}
	}

	// Links into later windows: the sweep's inputs name the fan-out's
	// outputs past the first window, and the fan-out's spent outputs the
	// sweep's inputs; every such link lands on a page listing its target.
	checked := 0
	for _, tx := range []*wire.MsgTx{sweep, fan} {
		for from := 0; from < max(len(tx.TxIn), len(tx.TxOut)); from += txIOShown {
			body := get(fmt.Sprintf("/tx/%s?inputs=%d&outputs=%d", tx.TxHash(), min(from, len(tx.TxIn)-1), min(from, len(tx.TxOut)-1)))
			for _, m := range ioLinkRe.FindAllStringSubmatch(body, -1) {
				link := html.UnescapeString(m[1])
				base, frag, _ := strings.Cut(link, "#")
				side, n, _ := strings.Cut(frag, "-")
				idx, _ := strconv.Atoi(n)
				if want := ioHref(side, base[4:68], idx); link != want {
					t.Errorf("link %s, want %s", link, want)
				}
				if idx < txIOShown || checked > 40 {
					continue
				}
				checked++
				if !slices.Contains(ioIDs(get(base), side), idx) {
					t.Errorf("%s does not list %s", link, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no link into a later window")
	}
	// Blockbook's /spending/ redirects into the window too.
	for n := range fan.TxOut {
		if n < txIOShown {
			continue
		}
		resp, _ := rawGet(t, s.srv.URL, "GET", fmt.Sprintf("/spending/%s/%d", fan.TxHash(), n))
		if resp.StatusCode != http.StatusFound {
			continue // unspent
		}
		to := resp.Header.Get("Location")
		base, frag, _ := strings.Cut(to, "#")
		side, idx, _ := strings.Cut(frag, "-")
		i, _ := strconv.Atoi(idx)
		if !slices.Contains(ioIDs(get(base), side), i) {
			t.Errorf("/spending/ of output %d: %s does not list %s", n, to, frag)
		}
		break
	}

	// Bad windows are the user's mistakes, with a message.
	for q, msg := range map[string]string{
		"outputs=abc": "Invalid outputs parameter",
		"outputs=-1":  "Invalid outputs parameter",
		"outputs=" + strconv.Itoa(len(fan.TxOut)): "there is no " + strconv.Itoa(len(fan.TxOut)),
		"inputs=" + strconv.Itoa(len(fan.TxIn)):   "there is no " + strconv.Itoa(len(fan.TxIn)),
	} {
		code, _, b := s.do(t, "GET", "/tx/"+fan.TxHash().String()+"?"+q, "")
		if code != http.StatusBadRequest || !strings.Contains(string(b), msg) {
			t.Errorf("?%s: %d, want 400 saying %q", q, code, msg)
		}
	}
}

// bigTxFake answers one tx with hexLen characters of raw hex.
type bigTxFake struct {
	explorerFake
	hexLen int
}

func (f *bigTxFake) Tx(_ context.Context, txid string) (*api.Tx, error) {
	return &api.Tx{Txid: txid, Hex: strings.Repeat("ab", f.hexLen/2), Size: f.hexLen / 2, BlockHeight: -1,
		Value: api.NewAmount(1), Vin: []api.Vin{{N: 0}}, Vout: []api.Vout{{N: 0, Value: api.NewAmount(1)}}}, nil
}

// The raw hex a page prints without script is bounded: a longer one is a
// link to the API's rawtx.
func TestExplorerTxHexBound(t *testing.T) {
	txid := strings.Repeat("cd", 32)
	for _, c := range []struct {
		hexLen    int
		printed   bool
		linkToAPI bool
	}{{txHexShown, true, false}, {txHexShown + 2, false, true}} {
		p := NewPublic(&bigTxFake{hexLen: c.hexLen}, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/tx/"+txid+"?hex=1", nil))
		body := rec.Body.String()
		if rec.Code != http.StatusOK || strings.Contains(body, strings.Repeat("ab", c.hexLen/2)) != c.printed ||
			strings.Contains(body, `href="/api/v2/rawtx/`+txid+`"`) != c.linkToAPI || len(body) > c.hexLen/2+txHexShown+20_000 {
			t.Errorf("hex of %d characters: %d, %d bytes, printed %v, want %v, API link %v", c.hexLen, rec.Code, len(body),
				!c.printed, c.printed, c.linkToAPI)
		}
	}
}
