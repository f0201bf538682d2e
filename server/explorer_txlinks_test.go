package server

import (
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

var (
	hexToggleRe = regexp.MustCompile(`<a id="rawhex-toggle" href="([^"]+)"`)
	stoneLinkRe = regexp.MustCompile(`<a href="([^"]*#output-(\d+))">output (\d+)</a>`)
)

// On a tx page listing a later window of outputs, the raw-hex toggle
// (shown and hidden again) keeps the window, and the runestone card's
// links to outputs (pointer, edicts) land on a page listing the output:
// in the page when the window shown holds it, else in its window, keeping
// the page's other parameters (the raw hex shown).
func TestExplorerTxLinksKeepWindows(t *testing.T) {
	f := newRunesFake()
	for n := len(f.tx.Vout); n < 2*txIOShown+20; n++ {
		f.tx.Vout = append(f.tx.Vout, api.Vout{N: n, Value: api.NewAmount(1), Addresses: []string{"bc1qout"}, IsAddress: true})
	}
	f.tx.Hex = "0200"
	f.stone.Outputs = len(f.tx.Vout)
	far := uint32(2*txIOShown + 5)
	f.stone.Pointer = &far
	f.stone.Edicts[2].Output = txIOShown + 10
	p := NewPublic(f, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	base := "/tx/" + f.tx.Txid
	get := func(path string) string {
		t.Helper()
		code, _, body := getRunePage(t, p, path)
		if code != 200 {
			t.Fatalf("GET %s: %d", path, code)
		}
		return body
	}
	lists := func(body string, n int) bool { return strings.Contains(body, fmt.Sprintf(`<li id="output-%d">`, n)) }

	// the toggle, there and back
	path := base + "?outputs=" + fmt.Sprint(txIOShown+10)
	for i, wantHex := range []bool{true, false} {
		m := hexToggleRe.FindStringSubmatch(get(path))
		if m == nil {
			t.Fatalf("%s: no raw-hex toggle", path)
		}
		path, _, _ = strings.Cut(m[1], "#")
		body := get(path)
		if shown := strings.Contains(body, `<pre id="rawhex" class="hex">0200</pre>`); shown != wantHex {
			t.Errorf("toggle %d: %s shows the hex %v, want %v", i, m[1], shown, wantHex)
		}
		if !lists(body, txIOShown+10) || lists(body, 0) {
			t.Errorf("toggle %d: %s lost the outputs' window", i, m[1])
		}
	}

	// the runestone's links, from the first window and from the last,
	// with the raw hex hidden and shown
	checked := 0
	last := base + "?outputs=" + fmt.Sprint(far)
	for _, from := range []string{base, last, base + "?hex=1", last + "&hex=1"} {
		body := get(from)
		hexShown := strings.Contains(from, "hex=1")
		for _, m := range stoneLinkRe.FindAllStringSubmatch(body, -1) {
			n, err := strconv.Atoi(m[2])
			if err != nil {
				t.Fatal(err)
			}
			href, _, _ := strings.Cut(m[1], "#")
			target := body
			if href != "" {
				target = get(href)
			}
			if !lists(target, n) {
				t.Errorf("from %s: the link %s to output %d lands on a page without it", from, m[1], n)
			}
			if shown := strings.Contains(target, `<pre id="rawhex" class="hex">0200</pre>`); shown != hexShown {
				t.Errorf("from %s: the link %s to output %d shows the hex %v, want %v", from, m[1], n, shown, hexShown)
			}
			if lists(body, n) && href != "" {
				t.Errorf("from %s: the link %s to output %d, listed there, loads a page", from, m[1], n)
			}
			checked++
		}
	}
	if checked != 12 {
		t.Errorf("checked %d links to outputs, want 12 (pointer and two edicts, on four pages)", checked)
	}
}
