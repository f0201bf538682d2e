// Command explorerbench measures the HTML explorer's heaviest pages (not
// run in CI): the address page of an address with many transactions (the
// whale; 10,000 by default), a block of 3,000 txs and a tx of 1,000 inputs.
//
// It generates the demo chain plus blocks of payments to one address, the
// big block and the big tx, submits them to a btcd regtest node, runs the
// blockbook binary against it, warms RocksDB's cache by loading the pages,
// then requests each page one at a time and prints the latency percentiles
// (wall clock over loopback, so the figures include HTTP and rendering) and
// its size, each as a ratio to the same data's REST answer measured in the
// same run. Then it loads the pages in headless Chromium with the cache off
// and prints their first contentful paint, as a ratio to that of the
// not-found page (the same layout and assets, no data).
//
//	go build -o bin/blockbook . && go run ./cmd/explorerbench -blockbook bin/blockbook
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

type benchOpts struct {
	bin      string
	txs      int // payments to the measured address
	perBlock int
	blockTxs int // txs of the big block
	inputs   int // inputs of the big tx
	requests int
	warmup   int
	chromium string
	paints   int
	keep     bool
	profile  string // CPU profile of the whale's page, "" none
}

func main() {
	var o benchOpts
	flag.StringVar(&o.bin, "blockbook", "bin/blockbook", "blockbook binary")
	flag.IntVar(&o.txs, "txs", 10_000, "transactions of the measured address")
	flag.IntVar(&o.perBlock, "perblock", 100, "payments to the address per block")
	flag.IntVar(&o.blockTxs, "blocktxs", 3_000, "txs of the big block (besides its coinbase)")
	flag.IntVar(&o.inputs, "inputs", 1_000, "inputs of the big tx")
	flag.IntVar(&o.requests, "requests", 500, "measured requests per page kind")
	flag.IntVar(&o.warmup, "warmup", 100, "requests before measuring, to warm RocksDB's cache")
	flag.StringVar(&o.chromium, "chromium", "chromium", "headless Chromium for the first paints (\"\" skips them)")
	flag.IntVar(&o.paints, "paints", 50, "page loads per page kind in Chromium")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (blockbook log, node data)")
	flag.StringVar(&o.profile, "cpuprofile", "", "write blockbook's CPU profile of 10 s of the whale's page to this file (before measuring)")
	flag.Parse()
	if o.txs < 1 || o.perBlock < 1 || o.requests < 1 || o.blockTxs < 1 || o.inputs < 1 || o.paints < 1 {
		fmt.Fprintln(os.Stderr, "explorerbench: need -txs, -perblock, -blocktxs, -inputs, -requests and -paints ≥ 1")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "explorerbench:", err)
		os.Exit(1)
	}
}

func run(o benchOpts) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "explorerbench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}

	g, target, err := buildChain(o)
	if err != nil {
		return err
	}
	bigBlock, bigTx, fanTx, err := addBigPages(g, o.blockTxs, o.inputs)
	if err != nil {
		return err
	}
	fmt.Printf("big block %d with %d txs, big tx %s with %d inputs, fan-out %s with %d outputs\n", bigBlock, o.blockTxs+1, bigTx, o.inputs,
		fanTx, min(o.blockTxs, fanOutMax))
	node, err := regtest.Start(ctx, regtest.Options{Dir: filepath.Join(work, "node")})
	if err != nil {
		return err
	}
	defer node.Stop()
	if err := g.Submit(ctx, node, 1); err != nil {
		return err
	}
	prof := ""
	if o.profile != "" {
		if prof, err = benchproc.FreeAddr(); err != nil {
			return err
		}
	}
	srv, err := startBlockbook(ctx, o.bin, work, node, g, prof)
	if err != nil {
		return err
	}
	defer srv.Stop()

	base := "http://" + srv.Public
	kinds := pageKinds(o, target, bigBlock, bigTx, fanTx)
	body, _, err := get(base + kinds[0].path)
	if err != nil {
		return err
	}
	if !strings.Contains(body, fmt.Sprintf(`id="tx-count">%s<`, groupDigits(o.txs))) {
		return fmt.Errorf("the address page does not show %d txs", o.txs)
	}
	assets, assetsSent, err := assetBytes(base, body)
	if err != nil {
		return err
	}
	fmt.Printf("assets (stylesheet, script, icon): %d bytes, %d sent\n", assets, assetsSent)
	for _, k := range kinds {
		for _, path := range []string{k.path, k.bound} {
			for i := 0; path != "" && i < o.warmup; i++ {
				if _, _, err := get(base + path); err != nil {
					return err
				}
			}
		}
	}
	if o.profile != "" {
		if err := profilePage(prof, base+kinds[0].path, o.profile, 10); err != nil {
			return err
		}
	}
	fmt.Println("load average before measuring:", loadAverage())
	defer func() { fmt.Println("load average after measuring:", loadAverage()) }()
	if err := measure(base, kinds, o.requests, assets, assetsSent); err != nil {
		return err
	}
	if o.chromium == "" {
		return nil
	}
	return reportPaints(o, base, []pageKind{kinds[0], kinds[5], kinds[6]})
}

// pageKinds are the pages measured, the whale's first: the first paints
// are of kinds 0, 5 and 6.
func pageKinds(o benchOpts, target string, bigBlock int32, bigTx, fanTx string) []pageKind {
	pages := (o.txs + 24) / 25
	rest := "/api/v2/address/" + target + "?details=txslight&pageSize=25"
	return []pageKind{
		{"address page 1 (the whale)", "/address/" + target, rest},
		{fmt.Sprintf("address page %d", pages/2), fmt.Sprintf("/address/%s?page=%d", target, pages/2), ""},
		{fmt.Sprintf("address page %d, the last", pages), fmt.Sprintf("/address/%s?page=%d", target, pages), ""},
		{"address page 1, filter=outputs", "/address/" + target + "?filter=outputs", ""},
		{"address page 1, chart of 30 days", "/address/" + target + "?range=month", ""},
		{fmt.Sprintf("block of %d txs", o.blockTxs+1), fmt.Sprintf("/block/%d", bigBlock), fmt.Sprintf("/api/v2/block/%d", bigBlock)},
		{fmt.Sprintf("tx of %d inputs", o.inputs), "/tx/" + bigTx, "/api/v2/tx/" + bigTx},
		{fmt.Sprintf("tx of %d inputs, last ones", o.inputs), fmt.Sprintf("/tx/%s?inputs=%d", bigTx, o.inputs-1), ""},
		{fmt.Sprintf("tx of %d inputs, raw hex", o.inputs), "/tx/" + bigTx + "?hex=1", ""},
		{fmt.Sprintf("tx of %d outputs", min(o.blockTxs, fanOutMax)), "/tx/" + fanTx, "/api/v2/tx/" + fanTx},
	}
}

// reportPaints prints the first paints of pages, as a ratio to the
// not-found page's (the same layout and assets, no data).
func reportPaints(o benchOpts, base string, kinds []pageKind) error {
	floor := pageKind{"not-found page (the floor)", "/tx/" + strings.Repeat("ab", 32), ""}
	painted := append([]pageKind{floor}, kinds...)
	paints, err := firstPaints(o.chromium, base, painted, o.paints)
	if err != nil {
		return err
	}
	fmt.Printf("\n%-40s %9s %9s %9s %9s\n", fmt.Sprintf("first contentful paint, %d loads", o.paints), "median", "p90", "p99", "× floor")
	floorMedian := quantile(paints[floor.path], 0.5)
	for _, k := range painted {
		lat := paints[k.path]
		fmt.Printf("%-40s %9s %9s %9s %9.2f\n", k.name, ms(quantile(lat, 0.5)), ms(quantile(lat, 0.9)), ms(quantile(lat, 0.99)),
			float64(quantile(lat, 0.5))/float64(floorMedian))
	}
	return nil
}

// buildChain is the demo chain plus o.txs payments to one address, the
// address whose pages are measured.
func buildChain(o benchOpts) (*chaingen.Generator, string, error) {
	start := time.Now()
	g := chaingen.New(&chaincfg.RegressionNetParams, "explorerbench")
	if err := g.Demo(chaingen.DefaultDemo()); err != nil {
		return nil, "", err
	}
	target, err := g.Address(chaingen.P2WPKH, 4242)
	if err != nil {
		return nil, "", err
	}
	for sent := 0; sent < o.txs; {
		var txs []*wire.MsgTx
		for ; len(txs) < o.perBlock && sent < o.txs; sent++ {
			tx, err := g.CreatePayment([]chaingen.Output{{Address: target, Value: 10_000 + int64(sent)}}, 1)
			if err != nil {
				return nil, "", fmt.Errorf("payment %d: %w", sent, err)
			}
			txs = append(txs, tx)
		}
		if _, err := g.AddBlock(txs...); err != nil {
			return nil, "", err
		}
	}
	l := g.Ledger()
	a := l.Addresses[target]
	if a == nil || a.TxCount() != o.txs {
		return nil, "", fmt.Errorf("the address has %v txs, want %d", a, o.txs)
	}
	fmt.Printf("chain: %d blocks, %d txs, address %s with %d txs (generated in %v)\n",
		g.Height(), len(l.Txs), target, a.TxCount(), time.Since(start).Round(time.Millisecond))
	return g, target, nil
}

// measure requests each page kind n times, one at a time, and prints the
// latency distribution and the size, with the same figures of its bound
// (the same data's REST answer) as a ratio; assets are the bytes of the
// page's stylesheet, script and icon (printed once: a first visit adds
// them to each page's size). Requests ask for gzip, as browsers do: "bytes"
// is the HTML, "sent" what went over the wire, "+ assets" a first visit's
// transfer of the page with its assets.
func measure(base string, kinds []pageKind, n int, assets, assetsSent int) error {
	fmt.Printf("\n%-40s %9s %9s %9s %9s %9s %10s %10s %10s %10s\n", fmt.Sprintf("%d requests each, one at a time", n),
		"median", "p90", "p99", "max", "× REST", "bytes", "× REST", "sent", "+ assets")
	var bounds []string
	for _, k := range kinds {
		lat, size, sent, err := timeGets(base+k.path, n)
		if err != nil {
			return err
		}
		ratio, sizeRatio := "", ""
		if k.bound != "" {
			blat, bsize, bsent, err := timeGets(base+k.bound, n)
			if err != nil {
				return err
			}
			ratio = fmt.Sprintf("%.2f", float64(quantile(lat, 0.5))/float64(quantile(blat, 0.5)))
			sizeRatio = fmt.Sprintf("%.2f", float64(size)/float64(bsize))
			bounds = append(bounds, fmt.Sprintf("%-40s %9s %9s %9s %9s %9s %10d %10s %10d\n   %s\n", "REST answer of "+k.name, ms(quantile(blat, 0.5)),
				ms(quantile(blat, 0.9)), ms(quantile(blat, 0.99)), ms(blat[len(blat)-1]), "", bsize, "", bsent, k.bound))
		}
		fmt.Printf("%-40s %9s %9s %9s %9s %9s %10d %10s %10d %10d\n", k.name, ms(quantile(lat, 0.5)), ms(quantile(lat, 0.9)),
			ms(quantile(lat, 0.99)), ms(lat[len(lat)-1]), ratio, size, sizeRatio, sent, sent+assetsSent)
	}
	for _, b := range bounds {
		fmt.Print(b)
	}
	fmt.Printf("(HTML sizes without the %d bytes of assets, %d sent, a first visit also loads)\n", assets, assetsSent)
	return nil
}

// timeGets requests url n times and returns the sorted latencies, the
// answer's size and the bytes sent for it.
func timeGets(url string, n int) ([]time.Duration, int, int, error) {
	lat := make([]time.Duration, 0, n)
	size, sent := 0, 0
	for range n {
		t0 := time.Now()
		body, wire, err := get(url)
		if err != nil {
			return nil, 0, 0, err
		}
		lat = append(lat, time.Since(t0))
		size, sent = len(body), wire
	}
	slices.Sort(lat)
	return lat, size, sent, nil
}

// quantile is the p-quantile of latencies.
func quantile(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// assetBytes is the size of the stylesheet, script and icon a page links,
// and the bytes sent for them.
func assetBytes(base, page string) (size, sent int, err error) {
	for _, m := range assetRe.FindAllStringSubmatch(page, -1) {
		body, wire, err := get(base + m[1])
		if err != nil {
			return 0, 0, err
		}
		size += len(body)
		sent += wire
	}
	if size == 0 {
		return 0, 0, fmt.Errorf("the page links no assets")
	}
	return size, sent, nil
}

var assetRe = regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`)

// pageKind is one page measured: its name in the report, its path and
// the path of its lower bound ("" none).
type pageKind struct{ name, path, bound string }

// get requests url asking for gzip, as a browser does, and returns the
// answer (unzipped) and the bytes sent for its body.
func get(url string) (string, int, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return "", 0, err
	}
	// Set by hand, the transport leaves the body as sent.
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	wire := len(b)
	if err == nil && resp.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(b)); err == nil {
			b, err = io.ReadAll(zr)
		}
	}
	return string(b), wire, err
}

// loadAverage is the machine's 1, 5 and 15 minute load (Linux), telling
// how shared the machine was.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func groupDigits(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
