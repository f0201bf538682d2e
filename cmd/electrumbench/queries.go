package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// queryTimes are the samples of each query.
type queryTimes struct {
	history, restHistory, restPage []time.Duration
	unspent, restUtxo              []time.Duration
}

// restPageSize is the largest page /api/v2/address serves.
const restPageSize = 1000

// measureQueries times each query o.samples times, one call at a time,
// checking every answer's size against the chain.
func measureQueries(eaddr, base string, params *chaincfg.Params, o benchOpts) (*queryTimes, error) {
	c, err := dial(eaddr, nil)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.hello(); err != nil {
		return nil, err
	}
	q := &queryTimes{}
	histAddr := chaingen.ExplorerAddress(histScript, params)
	utxoAddr := chaingen.ExplorerAddress(utxoScript, params)
	hc := &http.Client{Timeout: 2 * time.Minute}
	for range o.samples {
		t0 := time.Now()
		var hist []json.RawMessage
		if err := c.call("blockchain.scripthash.get_history", []any{scriptHash(histScript)}, &hist); err != nil {
			return nil, err
		}
		q.history = append(q.history, time.Since(t0))
		if len(hist) != o.chain.histTxs {
			return nil, fmt.Errorf("get_history: %d txs, want %d", len(hist), o.chain.histTxs)
		}
		t0 = time.Now()
		var utxos []json.RawMessage
		if err := c.call("blockchain.scripthash.listunspent", []any{scriptHash(utxoScript)}, &utxos); err != nil {
			return nil, err
		}
		q.unspent = append(q.unspent, time.Since(t0))
		if len(utxos) != o.chain.utxos {
			return nil, fmt.Errorf("listunspent: %d utxos, want %d", len(utxos), o.chain.utxos)
		}
		if err := restHistory(hc, base, histAddr, o.chain.histTxs, q); err != nil {
			return nil, err
		}
		t0 = time.Now()
		var ru []json.RawMessage
		if _, err := getJSON(hc, base+"/api/v2/utxo/"+utxoAddr, &ru); err != nil {
			return nil, err
		}
		q.restUtxo = append(q.restUtxo, time.Since(t0))
		if len(ru) != o.chain.utxos {
			return nil, fmt.Errorf("/api/v2/utxo: %d utxos, want %d", len(ru), o.chain.utxos)
		}
	}
	return q, nil
}

// restHistory pages through the address's txids, timing each page and the
// whole walk.
func restHistory(hc *http.Client, base, addr string, want int, q *queryTimes) error {
	t0 := time.Now()
	got := 0
	for page := 1; ; page++ {
		var a struct {
			TotalPages int      `json:"totalPages"`
			Txids      []string `json:"txids"`
		}
		p0 := time.Now()
		url := fmt.Sprintf("%s/api/v2/address/%s?details=txids&pageSize=%d&page=%d", base, addr, restPageSize, page)
		if _, err := getJSON(hc, url, &a); err != nil {
			return err
		}
		q.restPage = append(q.restPage, time.Since(p0))
		got += len(a.Txids)
		if page >= a.TotalPages {
			break
		}
	}
	q.restHistory = append(q.restHistory, time.Since(t0))
	if got != want {
		return fmt.Errorf("/api/v2/address: %d txids over its pages, want %d", got, want)
	}
	return nil
}

func getJSON(hc *http.Client, url string, out any) (int, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, truncate(body))
	}
	return len(body), json.Unmarshal(body, out)
}

// pct returns the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func printQueries(o benchOpts, q *queryTimes) {
	fmt.Printf("\nqueries (%d samples each, one connection, sequential)\n", o.samples)
	fmt.Printf("%-58s %12s %12s\n", "query", "median", "p99")
	row := func(name string, ds []time.Duration) {
		fmt.Printf("%-58s %12s %12s\n", name, ms(pct(ds, 50)), ms(pct(ds, 99)))
	}
	row(fmt.Sprintf("electrum get_history (%d txs)", o.chain.histTxs), q.history)
	row(fmt.Sprintf("REST /api/v2/address txids, all %d pages of %d", (o.chain.histTxs+restPageSize-1)/restPageSize, restPageSize), q.restHistory)
	row(fmt.Sprintf("REST /api/v2/address txids, one page of %d", restPageSize), q.restPage)
	row(fmt.Sprintf("electrum listunspent (%d utxos)", o.chain.utxos), q.unspent)
	row(fmt.Sprintf("REST /api/v2/utxo (%d utxos)", o.chain.utxos), q.restUtxo)
}

func printNotify(o benchOpts, r *notifyResult) {
	fmt.Printf("\nnotification latency (%d rounds of %d txs × %d outputs; submit to node → notification received)\n",
		o.rounds, o.txs, o.outputs)
	fmt.Printf("%-20s %8s %8s %12s %12s %12s\n", "phase", "count", "missing", "median", "p99", "max")
	for _, p := range []struct {
		name    string
		ds      []time.Duration
		missing int
	}{{"mempool (tx)", r.mempool, r.mempoolMissing}, {"confirmed (block)", r.block, r.blockMissing}} {
		fmt.Printf("%-20s %8d %8d %12s %12s %12s\n", p.name, len(p.ds), p.missing, ms(pct(p.ds, 50)), ms(pct(p.ds, 99)), ms(pct(p.ds, 100)))
	}
	fmt.Printf("unexpected notifications: %d\n", r.unexpected)
}
