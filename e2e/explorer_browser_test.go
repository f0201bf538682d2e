package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The explorer in a real browser: Debian's headless Chromium, driven with
// chromedp, loads every kind of page at desktop and phone widths (and in
// the dark scheme), follows search and links, submits the send form with
// garbage, shows a raw tx and copies a hash; axe-core finds no serious
// accessibility problem on any page kind in either scheme. Pages must not scroll
// sideways, throw script errors, break the content security policy or load
// anything from another host. Screenshots are left in
// $BLOCKBOOK_ARTIFACTS/explorer-screenshots (or a logged temp dir); those
// of the screenshots subtest are compared with references
// (explorer_shots_test.go).

type viewport struct {
	name          string
	width, height int64
	mobile        bool
}

var viewports = []viewport{{"desktop", 1366, 900, false}, {"phone", 390, 844, true}}

func TestE2EExplorerBrowser(t *testing.T) {
	chromium := findChromium(t)
	st := startDemoStack(t, nil)
	base, g := st.inst.base, st.g
	z := mempoolAddr(t, g, chaingen.P2TR, 1)
	tx, err := g.CreatePayment([]chaingen.Output{{Address: z, Value: 700_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	pendingID := sendTx(t, st, tx)
	waitAddress(t, base, z, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })

	o := newOracle(g)
	var busiest, bigTx, plainTx string
	for addr, al := range o.ledger.Addresses {
		if busiest == "" || al.TxCount() > o.ledger.Addresses[busiest].TxCount() {
			busiest = addr
		}
	}
	for txid, ot := range o.txs {
		if bigTx == "" || len(ot.tx.TxOut) > len(o.txs[bigTx].tx.TxOut) {
			bigTx = txid
		}
		if plainTx == "" && !ot.coinbase && len(ot.tx.TxIn) == 1 && len(ot.tx.TxOut) == 2 {
			plainTx = txid
		}
	}
	var rawHex string
	getJSON(t, base+"/api/v2/rawtx/"+plainTx, 200, &rawHex)

	b := newBrowser(t, chromium, base, artifactDir(t, "explorer-screenshots"))
	t.Run("screenshots", func(t *testing.T) { matchShots(t, b, demoShots(o)) })
	pages := []struct{ name, path, h1 string }{
		{"index", "/", "Regtest explorer"},
		{"blocks", "/blocks", "Blocks"},
		{"block", fmt.Sprintf("/block/%d", o.txs[bigTx].height), fmt.Sprintf("Block %d", o.txs[bigTx].height)},
		{"tx", "/tx/" + plainTx, "Transaction"},
		{"tx-big", "/tx/" + bigTx, "Transaction"},
		{"tx-pending", "/tx/" + pendingID, "Transaction"},
		{"address", "/address/" + busiest, "Address"},
		{"address-pending", "/address/" + z, "Address"},
		{"mempool", "/mempool", "Mempool"},
		{"sendtx", "/sendtx", "Send a transaction"},
		{"not-found", "/tx/" + strings.Repeat("ab", 32), "Not found"},
	}
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			b.t = t
			b.viewport(vp, false)
			for _, p := range pages {
				b.open(p.path)
				b.expectH1(p.h1)
				b.fitsWidth()
				b.screenshot(vp.name + "-" + p.name)
			}
			// Search by height, address and txid, then a miss.
			b.open("/")
			b.search("7", "/block/7")
			b.expectH1("Block 7")
			b.search(strings.ToUpper(z), "/address/"+z)
			b.search(pendingID, "/tx/"+pendingID)
			b.search("no-such-thing", "/search")
			b.expectH1("Not found")
			b.screenshot(vp.name + "-search-miss")
			// Follow links: block → its first tx → that tx's first output address.
			b.open("/block/7")
			b.click(`#block-txs article.tx .txid a`, "/tx/")
			b.click(`#output-0 a.addr`, "/address/")
			b.expectH1("Address")
			if b.text("#balance") == "" {
				t.Error("address page without a balance")
			}
			// The send form with garbage shows the node's refusal.
			b.open("/sendtx")
			b.do(chromedp.SetValue(chromedp.CSS("#hex"), "garbage, not a transaction"))
			b.click(`form.sendtx button[type=submit]`, "/sendtx")
			if msg := b.text("#sendtx-error"); msg == "" {
				t.Error("sending garbage shows no error")
			}
			b.screenshot(vp.name + "-sendtx-error")
			// Raw hex on demand, and copying a txid.
			b.open("/tx/" + plainTx)
			b.do(chromedp.Click(chromedp.CSS("#rawhex-toggle")), chromedp.WaitVisible(chromedp.CSS("#rawhex")))
			if got := b.text("#rawhex"); got != rawHex {
				t.Errorf("raw hex shows %.40q, want %.40q", got, rawHex)
			}
			b.screenshot(vp.name + "-tx-rawhex")
			b.do(chromedp.Click(chromedp.CSS("#rawhex-toggle")))
			if visible := b.eval(`!document.getElementById('rawhex').hidden`); visible {
				t.Error("the raw hex does not hide again")
			}
			b.do(chromedp.Click(chromedp.CSS(".hashline button.copy")))
			b.waitFor(`document.querySelector('.hashline button.copy').classList.contains('done')`, "the copy button to confirm")
		})
	}
	t.Run("dark", func(t *testing.T) {
		b.t = t
		b.viewport(viewports[0], true)
		for _, p := range []string{"/", "/tx/" + plainTx, "/address/" + busiest} {
			b.open(p)
			if !b.eval(`(() => { const m = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number); return m[0] + m[1] + m[2] < 150; })()`) {
				t.Errorf("%s: the dark scheme does not darken the page", p)
			}
		}
		b.screenshot("desktop-dark-address")
		b.open("/tx/" + plainTx)
		b.screenshot("desktop-dark-tx")
	})
	t.Run("no-js", func(t *testing.T) {
		// With scripts off the pictures are all there and the chart's
		// range links work (they are plain links).
		b.t = t
		b.viewport(viewports[0], false)
		if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
		b.open("/address/" + busiest)
		b.click(`#history + nav a.tab`, "/address/")
		if !b.eval(`document.querySelector('nav.tabs .tab.cur').textContent === '24 hours' && document.querySelectorAll('svg.plot').length === 2 && !!document.querySelector('svg.qr')`) {
			t.Error("with scripts off the chart's first range link does not show that range's chart")
		}
		if b.eval(`!document.querySelector('button.copy').hidden`) {
			t.Error("scripts are not off: the copy buttons show")
		}
		b.open("/")
		if !b.eval(`document.querySelectorAll('#mempool-blocks li').length > 0`) {
			t.Error("with scripts off the start page has no projected blocks")
		}
		b.open("/tx/" + bigTx)
		if !b.eval(`document.querySelectorAll('svg.flowplot rect.band').length > 2`) {
			t.Error("with scripts off the tx page has no flow picture")
		}
		if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("axe", func(t *testing.T) {
		b.t = t
		src := axeSource(t)
		// Each page kind once per scheme (the variants share their parts);
		// the address page with a chart of periods and bars.
		kinds := map[string]bool{"index": true, "blocks": true, "block": true, "tx-big": true, "tx-pending": true, "mempool": true, "sendtx": true, "not-found": true}
		for _, dark := range []bool{false, true} {
			b.viewport(viewports[0], dark)
			for _, p := range append(pages, struct{ name, path, h1 string }{"address-day", "/address/" + busiest + "?range=day", "Address"}) {
				if !kinds[p.name] && p.name != "address-day" || dark && (p.name == "blocks" || p.name == "mempool" || p.name == "tx-pending") {
					continue
				}
				b.open(p.path)
				b.checkAxe(src, fmt.Sprintf("%s (dark %v)", p.path, dark))
			}
		}
	})
	b.t = t
	b.checkProblems()
}

// findChromium returns Debian's chromium; without it the test fails.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("chromium is not installed: the explorer's browser tests need Debian's chromium; run `make deps`")
	return ""
}

// browser is one headless Chromium tab on the explorer.
type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
	host  string

	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T, chromium, base, shots string) *browser {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()),
		// Pinned fonts and colours, for screenshots equal across machines.
		chromedp.Env("FONTCONFIG_FILE="+pinnedFonts(t)), chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("disable-lcd-text", true))
	ctx, cancelTab := chromedp.NewContext(alloc)
	// A failure guard for a hung browser, not a speed assertion.
	ctx, cancelGuard := context.WithTimeout(ctx, 10*time.Minute)
	t.Cleanup(func() { cancelGuard(); cancelTab(); cancelAlloc() })
	u, _ := url.Parse(base)
	b := &browser{t: t, ctx: ctx, base: base, shots: shots, host: u.Host}
	t.Logf("screenshots in %s", shots)
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.problem("script error: %s", ev.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			e := ev.Entry
			if e.Level != cdplog.EntryLevelError {
				return
			}
			// A document answered 4xx on purpose (not found, the send
			// form's refusal) logs a network error; subresources must not.
			if e.Source == cdplog.EntrySourceNetwork && !strings.Contains(e.URL, "/static/") && !strings.HasSuffix(e.URL, "/favicon.ico") {
				return
			}
			b.problem("console error (%s): %s %s", e.Source, e.Text, e.URL)
		case *network.EventRequestWillBeSent:
			if u, err := url.Parse(ev.Request.URL); err == nil && u.Scheme != "data" && u.Host != b.host {
				b.problem("request to another host: %s", ev.Request.URL)
			}
		}
	})
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return b
}

func (b *browser) problem(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

func (b *browser) checkProblems() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Error(p)
	}
}

func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

func (b *browser) eval(js string) bool {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		b.t.Fatalf("browser: %s: %v", js, err)
	}
	return v
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return strings.TrimSpace(v)
}

func (b *browser) location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		b.t.Fatal(err)
	}
	return u.Path
}

// viewport sets the window size (and touch for phones) and the scheme.
func (b *browser) viewport(vp viewport, dark bool) {
	b.t.Helper()
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if vp.mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	b.do(chromedp.EmulateViewport(vp.width, vp.height, opts...))
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) open(path string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base + path))
	if got, want := b.location(), strings.SplitN(path, "?", 2)[0]; got != want {
		b.t.Fatalf("opened %s, the browser is at %s", path, got)
	}
}

// click clicks an element that navigates and checks where it went.
func (b *browser) click(sel, wantPrefix string) {
	b.t.Helper()
	if _, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("browser: clicking %s: %v", sel, err)
	}
	if got := b.location(); !strings.HasPrefix(got, wantPrefix) {
		b.t.Fatalf("clicking %s went to %s, want %s…", sel, got, wantPrefix)
	}
}

// search types q into the header's search box and submits it.
func (b *browser) search(q, want string) {
	b.t.Helper()
	b.do(chromedp.SetValue(chromedp.CSS("#q"), q))
	if _, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(`form.search button[type=submit]`))); err != nil {
		b.t.Fatalf("browser: searching %q: %v", q, err)
	}
	if got := b.location(); got != want {
		b.t.Errorf("searching %q went to %s, want %s", q, got, want)
	}
}

func (b *browser) expectH1(want string) {
	b.t.Helper()
	if got := b.text("h1"); got != want {
		b.t.Errorf("%s: heading %q, want %q", b.location(), got, want)
	}
}

// fitsWidth: nothing makes the page scroll sideways, and the script ran
// (copy buttons are shown).
func (b *browser) fitsWidth() {
	b.t.Helper()
	if !b.eval(`document.documentElement.scrollWidth <= document.documentElement.clientWidth`) {
		b.t.Errorf("%s scrolls sideways", b.location())
	}
	if !b.eval(`document.querySelectorAll('button.copy').length === document.querySelectorAll('button.copy:not([hidden])').length`) {
		b.t.Errorf("%s: copy buttons stay hidden (script not run?)", b.location())
	}
}

// waitFor polls a condition (a failure guard, not a speed assertion).
func (b *browser) waitFor(js, what string) {
	b.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !b.eval(js); {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: waited in vain for %s", b.location(), what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
