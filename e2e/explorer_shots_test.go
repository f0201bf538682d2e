package e2e

// Screenshot tests of the explorer: each page kind of the demo chain in
// headless Chromium, light and dark, desktop and phone, compared with the
// reference images in testdata/screenshots. At most 0.1% of the pixels
// may differ at pixelmatch's per-pixel threshold of 0.1 (pixelmatch_test.go).
// The pages are made deterministic: the chain's timestamps are fixed, the
// viewport is fixed, fonts are only Debian's fonts-dejavu-core (pinnedFonts)
// and what depends on the clock, the run or the build (ages, first-seen
// times of pending txs, the index's size on disk, versions) is masked
// before the capture.
//
// After a meant change of the pages' looks, rewrite the references with
//
//	make screenshots
//
// (go test -count=1 -run '^(TestE2EExplorerBrowser|TestE2EExplorerAccounts|TestEthAPIMatchesLedger)$/^screenshots$' ./e2e -args -update-screenshots)
// and review the changed images by eye before committing them. A failing
// comparison leaves the actual image and the diff picture (red: differing
// pixels, yellow: anti-aliasing) in a temp dir and names them.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "rewrite the explorer's reference screenshots in e2e/testdata/screenshots instead of comparing with them")

const (
	shotDir       = "testdata/screenshots"
	shotThreshold = 0.1   // pixelmatch's per-pixel threshold
	shotMaxDiff   = 0.001 // the share of pixels that may differ
)

// shot is one reference image: a page at a viewport in a scheme; the
// viewport, or with region the box around the elements that CSS selector
// list matches, below the fold too (charts).
type shot struct {
	name   string
	path   string
	vp     viewport
	dark   bool
	region string
}

// demoShots are the demo chain's page kinds: each on the desktop in light,
// the three richest also dark and at phone width; and the charts below the
// fold: the address's balance history and UTXO bands (light and dark), the
// block's fee rates and the start page's mempool blocks, fees and fee-rate
// histogram.
func demoShots(o *oracle) []shot {
	addr, tx := shotTargets(o)
	desktop := viewports[0]
	pages := []shotPage{
		{"home", "/"},
		{"tx", "/tx/" + tx},
		{"address", "/address/" + addr},
		{"block", fmt.Sprintf("/block/%d", o.txs[tx].height)},
		{"mempool", "/mempool"},
		{"not-found", "/tx/" + fmt.Sprintf("%064x", 0xdead)},
	}
	shots := pageShots("", pages, 3)
	const history, fees = "#history, .scroll:has(> #utxo-bands)", "#fee-rates, #fee-rates + figure"
	return append(shots,
		shot{name: "desktop-light-address-chart", path: pages[2].path, vp: desktop, region: history},
		shot{name: "desktop-dark-address-chart", path: pages[2].path, vp: desktop, dark: true, region: history},
		shot{name: "desktop-light-block-fees", path: pages[3].path, vp: desktop, region: fees},
		shot{name: "desktop-light-home-fees", path: "/", vp: desktop, region: "#fees, #mempool-blocks, #recommended-fees, #fee-histogram"})
}

// shotPage is a page kind to picture: its name in the images' names and
// its path.
type shotPage struct{ name, path string }

// pageShots pictures each page on the desktop in light and the first rich
// ones also dark and at phone width; names are scheme-prefix-name.
func pageShots(prefix string, pages []shotPage, rich int) []shot {
	desktop, phone := viewports[0], viewports[1]
	var shots []shot
	for i, p := range pages {
		shots = append(shots, shot{name: "desktop-light-" + prefix + p.name, path: p.path, vp: desktop})
		if i < rich {
			shots = append(shots, shot{name: "desktop-dark-" + prefix + p.name, path: p.path, vp: desktop, dark: true},
				shot{name: "phone-light-" + prefix + p.name, path: p.path, vp: phone})
		}
	}
	return shots
}

// shotTargets picks the busiest address and the tx with the most outputs,
// ties broken by name so that every run picks the same.
func shotTargets(o *oracle) (addr, tx string) {
	addrs := make([]string, 0, len(o.ledger.Addresses))
	for a := range o.ledger.Addresses {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		if addr == "" || o.ledger.Addresses[a].TxCount() > o.ledger.Addresses[addr].TxCount() {
			addr = a
		}
	}
	txids := make([]string, 0, len(o.txs))
	for id := range o.txs {
		txids = append(txids, id)
	}
	sort.Strings(txids)
	for _, id := range txids {
		if tx == "" || len(o.txs[id].tx.TxOut) > len(o.txs[tx].tx.TxOut) {
			tx = id
		}
	}
	return addr, tx
}

// matchShots captures each shot and compares it with its reference (or
// rewrites the reference with -update-screenshots). It runs on a fresh
// browser, before anything hovers, focuses or visits links.
func matchShots(t *testing.T, b *browser, shots []shot) {
	t.Helper()
	b.t = t
	since := time.Now().Add(-time.Hour) // times after this are the run's own
	var failDir string
	for _, s := range shots {
		b.viewport(s.vp, s.dark)
		b.open(s.path)
		got := b.capture(since, s.region)
		file := filepath.Join(shotDir, s.name+".png")
		if *updateScreenshots {
			if err := writePNG(file, got); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", file)
			// Loaded again, so that a page that is not deterministic is
			// found now rather than in the next run.
			b.open(s.path)
			again := b.capture(since, s.region)
			if n := pixelDiff(got, again, shotThreshold, nil); n > 0 {
				if failDir == "" {
					failDir = shotFailDir(t)
				}
				diff := image.NewNRGBA(got.Rect)
				pixelDiff(got, again, shotThreshold, diff)
				p1, p2 := filepath.Join(failDir, s.name+".again.png"), filepath.Join(failDir, s.name+".diff.png")
				if err := errors.Join(writePNG(p1, again), writePNG(p2, diff)); err != nil {
					t.Fatal(err)
				}
				t.Errorf("%s (%s) is not deterministic: %d pixels differ between two loads: first %s, second %s, diff %s", s.name, s.path, n, file, p1, p2)
			}
			continue
		}
		if err := compareShot(file, s.name, got, func() string {
			if failDir == "" {
				failDir = shotFailDir(t)
			}
			return failDir
		}); err != nil {
			t.Errorf("screenshot of %s: %v", s.path, err)
		}
	}
}

// compareShot compares got with the reference file; when more than
// shotMaxDiff of the pixels differ it writes the actual image and the diff
// picture to failDir() and names them in the error.
func compareShot(file, name string, got *image.NRGBA, failDir func() string) error {
	want, err := readPNG(file)
	if err != nil {
		return fmt.Errorf("%s: %w (write the references with `make screenshots`)", name, err)
	}
	total := got.Rect.Dx() * got.Rect.Dy()
	var n int
	var diff *image.NRGBA
	if want.Rect != got.Rect {
		n = total
	} else if n = pixelDiff(want, got, shotThreshold, nil); float64(n) > shotMaxDiff*float64(total) {
		diff = image.NewNRGBA(want.Rect)
		pixelDiff(want, got, shotThreshold, diff)
	}
	if float64(n) <= shotMaxDiff*float64(total) {
		return nil
	}
	dir := failDir()
	actual := filepath.Join(dir, name+".actual.png")
	if err := writePNG(actual, got); err != nil {
		return err
	}
	where := "actual " + actual
	if diff != nil {
		dp := filepath.Join(dir, name+".diff.png")
		if err := writePNG(dp, diff); err != nil {
			return err
		}
		where += ", diff " + dp
	} else {
		where += fmt.Sprintf(" (%v, the reference is %v)", got.Rect.Size(), want.Rect.Size())
	}
	return fmt.Errorf("%s: %d of %d pixels differ (at most %.1f%% may): %s; reference %s. If the change is meant, run `make screenshots` and review the images",
		name, n, total, 100*shotMaxDiff, where, file)
}

// maskJS replaces what differs between runs of the same chain with fixed
// text: ages ("3 years ago" grows), times of the run (first-seen times of
// pending txs; not the future block times of the Ethereum dev chain), the
// start page's index size on disk, versions (of the build and of the
// node, which change with every commit or update), the Ethereum dev chain's
// block hashes and loopback ports.
const maskJS = `(() => {
  const since = %d, until = %d;
  const set = (el, s) => { el.textContent = s; };
  document.querySelectorAll('.age').forEach(el => set(el, '(age)'));
  document.querySelectorAll('time[datetime]').forEach(el => {
    const t = Date.parse(el.getAttribute('datetime'));
    if (t >= since && t <= until) set(el, 'YYYY-MM-DD hh:mm:ss');
  });
  // The Ethereum dev chain's block hashes: its beacon draws each block's
  // prevRandao at random.
  document.querySelectorAll('#block-hash, a.mono[href^="/block/0x"]').forEach(el => {
    if (el.textContent.startsWith('0x')) set(el, '0x(block hash)');
  });
  // The ports of the test's servers (the NFT metadata double's URLs).
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    const s = n.data.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
    if (s !== n.data) n.data = s;
  }
  const rows = location.pathname === '/' ? {'Index size': 'N MB', 'Version': 'version'} : {};
  document.querySelectorAll('th').forEach(th => {
    const v = rows[th.textContent.trim()];
    if (v && th.nextElementSibling) set(th.nextElementSibling, v);
  });
  return document.fonts.ready.then(() => true);
})()`

// regionJS is the box in page coordinates around the elements a selector
// list matches, as [x, y, width, height], whole pixels; empty if none.
const regionJS = `(() => {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  document.querySelectorAll(%q).forEach(el => {
    const r = el.getBoundingClientRect();
    x0 = Math.min(x0, r.left); y0 = Math.min(y0, r.top); x1 = Math.max(x1, r.right); y1 = Math.max(y1, r.bottom);
  });
  if (x0 === Infinity) return [];
  x0 = Math.floor(x0 + scrollX); y0 = Math.floor(y0 + scrollY);
  return [x0, y0, Math.ceil(x1 + scrollX) - x0, Math.ceil(y1 + scrollY) - y0];
})()`

// capture masks the open page and takes a picture of the viewport, or
// with a region of the box around its elements.
func (b *browser) capture(since time.Time, region string) *image.NRGBA {
	b.t.Helper()
	mask := fmt.Sprintf(maskJS, since.UnixMilli(), time.Now().Add(time.Hour).UnixMilli())
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](mask, chromedp.EvalAwaitPromise)); err != nil {
		b.t.Fatalf("masking %s: %v", b.location(), err)
	}
	shoot := chromedp.CaptureScreenshot()
	if region != "" {
		box, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(regionJS, region)))
		if err != nil || len(box) != 4 || box[2] <= 0 || box[3] <= 0 {
			b.t.Fatalf("%s: no region %q to picture (%v %v)", b.location(), region, box, err)
		}
		clip := page.Viewport{X: box[0], Y: box[1], Width: box[2], Height: box[3], Scale: 1}
		beyond := true
		shoot = func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
			r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{Clip: &clip, CaptureBeyondViewport: &beyond})
			return r.Data, err
		}
	}
	data, err := chromedp.Run(b.ctx, shoot)
	if err != nil {
		b.t.Fatalf("screenshot of %s: %v", b.location(), err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		b.t.Fatalf("screenshot of %s: %v", b.location(), err)
	}
	return toNRGBA(img)
}

// shotFailDir is where failed comparisons leave their pictures: under
// $BLOCKBOOK_ARTIFACTS (CI) or a temp dir that outlives the test.
func shotFailDir(t *testing.T) string {
	t.Helper()
	if os.Getenv("BLOCKBOOK_ARTIFACTS") != "" {
		return artifactDir(t, "explorer-screenshot-diffs")
	}
	dir, err := os.MkdirTemp("", "explorer-screenshots-") //nolint:usetesting // the pictures must outlive the test
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readPNG(path string) (*image.NRGBA, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return toNRGBA(img), nil
}

// writePNG writes img compressed as far as Go's encoder goes (the
// references are committed).
func writePNG(path string, img image.Image) error {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// pinnedFonts writes a fontconfig file that offers Chromium only the
// fonts of Debian's fonts-dejavu-core, rendered with fixed settings, so
// that screenshots do not depend on the machine's fonts: the pages' font
// stacks end in DejaVu Sans and DejaVu Sans Mono. It returns the file.
func pinnedFonts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fonts := filepath.Join(dir, "fonts")
	if err := os.Mkdir(fonts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf"} {
		src := filepath.Join("/usr/share/fonts/truetype/dejavu", f)
		if _, err := os.Stat(src); err != nil {
			t.Fatalf("%v: the explorer's browser tests pin Debian's fonts-dejavu-core; run `make deps`", err)
		}
		if err := os.Symlink(src, filepath.Join(fonts, f)); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
<dir>%s</dir>
<cachedir>%s</cachedir>
<alias binding="same"><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
<alias binding="same"><family>system-ui</family><prefer><family>DejaVu Sans</family></prefer></alias>
<alias binding="same"><family>serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
<alias binding="same"><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
<match target="font">
<edit name="antialias" mode="assign"><bool>true</bool></edit>
<edit name="hinting" mode="assign"><bool>true</bool></edit>
<edit name="hintstyle" mode="assign"><const>hintslight</const></edit>
<edit name="autohint" mode="assign"><bool>false</bool></edit>
<edit name="rgba" mode="assign"><const>none</const></edit>
<edit name="lcdfilter" mode="assign"><const>lcdnone</const></edit>
<edit name="embeddedbitmap" mode="assign"><bool>false</bool></edit>
</match>
</fontconfig>
`, fonts, filepath.Join(dir, "cache"))
	path := filepath.Join(dir, "fonts.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
