// Command explorerbench measures the HTML explorer's address page for an
// address with many transactions (not run in CI).
//
// It generates the demo chain plus blocks of payments to one address (10,000
// by default), submits it to a btcd regtest node, runs the blockbook binary
// against it, warms RocksDB's cache by loading the page, then requests
// pages of the address one at a time and prints the latency percentiles
// (wall clock over loopback, so the figures include HTTP and rendering).
//
//	go build -o bin/blockbook . && go run ./cmd/explorerbench -blockbook bin/blockbook
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

type benchOpts struct {
	bin      string
	txs      int // payments to the measured address
	perBlock int
	requests int
	warmup   int
	keep     bool
}

func main() {
	var o benchOpts
	flag.StringVar(&o.bin, "blockbook", "bin/blockbook", "blockbook binary")
	flag.IntVar(&o.txs, "txs", 10_000, "transactions of the measured address")
	flag.IntVar(&o.perBlock, "perblock", 100, "payments to the address per block")
	flag.IntVar(&o.requests, "requests", 500, "measured requests per page kind")
	flag.IntVar(&o.warmup, "warmup", 100, "requests before measuring, to warm RocksDB's cache")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (blockbook log, node data)")
	flag.Parse()
	if o.txs < 1 || o.perBlock < 1 || o.requests < 1 {
		fmt.Fprintln(os.Stderr, "explorerbench: need -txs, -perblock and -requests ≥ 1")
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
	node, err := regtest.Start(ctx, regtest.Options{Dir: filepath.Join(work, "node")})
	if err != nil {
		return err
	}
	defer node.Stop()
	if err := g.Submit(ctx, node, 1); err != nil {
		return err
	}
	srv, err := startBlockbook(ctx, o.bin, work, node, g)
	if err != nil {
		return err
	}
	defer srv.Stop()

	base := "http://" + srv.Public
	pages := (o.txs + 24) / 25
	kinds := []pageKind{
		{"address page 1 (HTML)", "/address/" + target},
		{fmt.Sprintf("address page %d (HTML)", pages/2), fmt.Sprintf("/address/%s?page=%d", target, pages/2)},
		{fmt.Sprintf("address page %d, the last (HTML)", pages), fmt.Sprintf("/address/%s?page=%d", target, pages)},
		{"address page 1, filter=outputs (HTML)", "/address/" + target + "?filter=outputs"},
		{"address page 1, chart of 30 days (HTML)", "/address/" + target + "?range=month"},
		{"REST address txslight, 25 per page", "/api/v2/address/" + target + "?details=txslight&pageSize=25"},
	}
	body, err := get(base + kinds[0].path)
	if err != nil {
		return err
	}
	if !strings.Contains(body, fmt.Sprintf(`id="tx-count">%s<`, groupDigits(o.txs))) {
		return fmt.Errorf("the address page does not show %d txs", o.txs)
	}
	fmt.Printf("page size: %d bytes of HTML with 25 txs\n", len(body))
	for _, k := range kinds {
		for range o.warmup {
			if _, err := get(base + k.path); err != nil {
				return err
			}
		}
	}
	return measure(base, kinds, o.requests)
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
// latency distribution.
func measure(base string, kinds []pageKind, n int) error {
	fmt.Printf("\n%-40s %9s %9s %9s %9s %9s\n", fmt.Sprintf("%d requests each, one at a time", n), "median", "p90", "p99", "max", "mean")
	for _, k := range kinds {
		lat := make([]time.Duration, 0, n)
		var sum time.Duration
		for range n {
			t0 := time.Now()
			if _, err := get(base + k.path); err != nil {
				return err
			}
			d := time.Since(t0)
			lat = append(lat, d)
			sum += d
		}
		slices.Sort(lat)
		q := func(p float64) string { return ms(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
		fmt.Printf("%-40s %9s %9s %9s %9s %9s\n", k.name, q(0.5), q(0.9), q(0.99), ms(lat[len(lat)-1]), ms(sum/time.Duration(len(lat))))
	}
	return nil
}

// pageKind is one page measured: its name in the report and its path.
type pageKind struct{ name, path string }

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	return string(b), err
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
