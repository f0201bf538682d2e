package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

const subsPerConn = 5

// tracker matches script hash notifications with the moment the tx (or
// block) that changed the script hash's status was submitted to the node.
type tracker struct {
	mu         sync.Mutex
	pending    map[string]time.Time
	latencies  []time.Duration
	unexpected int
	changed    chan struct{}
}

func newTracker() *tracker {
	return &tracker{pending: map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

func (t *tracker) expect(sh string, at time.Time) {
	t.mu.Lock()
	t.pending[sh] = at
	t.mu.Unlock()
}

func (t *tracker) notify(method string, params json.RawMessage, at time.Time) {
	if method != "blockchain.scripthash.subscribe" {
		return
	}
	var p []json.RawMessage
	var sh string
	if json.Unmarshal(params, &p) != nil || len(p) < 1 || json.Unmarshal(p[0], &sh) != nil {
		t.mu.Lock()
		t.unexpected++
		t.mu.Unlock()
		return
	}
	t.mu.Lock()
	if sent, ok := t.pending[sh]; ok {
		t.latencies = append(t.latencies, at.Sub(sent))
		delete(t.pending, sh)
	} else {
		t.unexpected++
	}
	left := len(t.pending)
	t.mu.Unlock()
	if left == 0 {
		select {
		case t.changed <- struct{}{}:
		default:
		}
	}
}

// wait waits until every expected notification arrived, or timeout, and
// returns the phase's latencies and how many never arrived (forgotten:
// a later phase expects them afresh).
func (t *tracker) wait(timeout time.Duration) ([]time.Duration, int) {
	deadline := time.After(timeout)
	for {
		t.mu.Lock()
		left := len(t.pending)
		if left == 0 {
			out := t.latencies
			t.latencies = nil
			t.mu.Unlock()
			return out, 0
		}
		t.mu.Unlock()
		select {
		case <-t.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.mu.Lock()
			defer t.mu.Unlock()
			out, missing := t.latencies, len(t.pending)
			t.latencies, t.pending = nil, map[string]time.Time{}
			return out, missing
		}
	}
}

// openSubscribers opens conns connections, each subscribed to
// subsPerConn script hashes, dialing dialers at a time.
func openSubscribers(addr string, conns, dialers int, tr *tracker) ([]*eclient, error) {
	out := make([]*eclient, conns)
	errs := make(chan error, conns)
	work := make(chan int)
	var wg sync.WaitGroup
	for range dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				c, err := dial(addr, tr.notify)
				if err == nil {
					err = c.hello()
				}
				for s := 0; err == nil && s < subsPerConn; s++ {
					var status *string
					err = c.call("blockchain.scripthash.subscribe", []any{scriptHash(subScript(i, s))}, &status)
					if err == nil && status != nil {
						err = fmt.Errorf("script hash of connection %d slot %d has a status already", i, s)
					}
				}
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					continue
				}
				out[i] = c
			}
		}()
	}
	for i := range conns {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		closeAll(out)
		return nil, err
	}
	return out, nil
}

func closeAll(cs []*eclient) {
	for _, c := range cs {
		if c != nil {
			c.close()
		}
	}
}

// notifyResult holds the latencies of the mempool and block phases.
type notifyResult struct {
	mempool, block               []time.Duration
	mempoolMissing, blockMissing int
	unexpected                   int
}

// runRounds sends o.txs payments of o.outputs outputs each to subscribed
// script hashes (each paid once in the run), waits for their mempool
// notifications, mines them in a block and waits for the confirmation
// notifications; rounds times.
func runRounds(ctx context.Context, g *chaingen.Generator, node *regtest.Node, tr *tracker, o benchOpts) (*notifyResult, error) {
	res := &notifyResult{}
	stride := 7919 // spreads consecutive payments over connections
	if o.conns%stride == 0 {
		stride = 1
	}
	k := 0
	for r := range o.rounds {
		var txs []*wire.MsgTx
		var shs []string
		for range o.txs {
			var outs []chaingen.Output
			var these []string
			for range o.outputs {
				conn, slot := (k*stride)%o.conns, (k/o.conns)%subsPerConn
				k++
				s := subScript(conn, slot)
				outs = append(outs, chaingen.Output{Script: s, Value: 10_000})
				these = append(these, scriptHash(s))
			}
			tx, err := g.CreatePayment(outs, 2)
			if err != nil {
				return nil, err
			}
			now := time.Now()
			for _, sh := range these {
				tr.expect(sh, now)
			}
			if _, err := node.SendRawTransaction(ctx, tx); err != nil {
				return nil, fmt.Errorf("sendrawtransaction: %w", err)
			}
			txs, shs = append(txs, tx), append(shs, these...)
		}
		lat, missing := tr.wait(o.wait)
		if missing > 0 {
			fmt.Printf("  round %d: %d of %d mempool notifications missing after %v; %s\n", r, missing, len(shs), o.wait,
				mempoolSizes(ctx, node, o.base))
		}
		res.mempool, res.mempoolMissing = append(res.mempool, lat...), res.mempoolMissing+missing
		blk, err := g.AddBlock(txs...)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		for _, sh := range shs {
			tr.expect(sh, now)
		}
		if err := submitBlock(ctx, node, blk); err != nil {
			return nil, err
		}
		lat, missing = tr.wait(o.wait)
		if missing > 0 {
			fmt.Printf("  round %d: %d of %d block notifications missing after %v\n", r, missing, len(shs), o.wait)
		}
		res.block, res.blockMissing = append(res.block, lat...), res.blockMissing+missing
	}
	tr.mu.Lock()
	res.unexpected = tr.unexpected
	tr.mu.Unlock()
	return res, nil
}

// mempoolSizes compares the node's mempool with the server's.
func mempoolSizes(ctx context.Context, node *regtest.Node, base string) string {
	var pool []string
	nodeErr := node.CallResult(ctx, &pool, "getrawmempool")
	var st struct {
		Blockbook struct {
			MempoolSize   int  `json:"mempoolSize"`
			InSyncMempool bool `json:"inSyncMempool"`
		} `json:"blockbook"`
	}
	_, err := getJSON(&http.Client{Timeout: time.Minute}, base+"/api/v2", &st)
	return fmt.Sprintf("the node's mempool holds %d txs (%v), the server's %d (%v, in sync %v)",
		len(pool), nodeErr, st.Blockbook.MempoolSize, err, st.Blockbook.InSyncMempool)
}
