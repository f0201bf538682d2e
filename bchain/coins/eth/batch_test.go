package eth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// batchProxy forwards JSON-RPC to the node; mangle, when set, may rewrite
// the answers of a batch request (decoded) before they are relayed, and
// failBatches makes every batch request fail with HTTP 502.
type batchProxy struct {
	srv         *httptest.Server
	mangle      func(reqs []rpcReq, resps []map[string]any)
	failBatches atomic.Bool
	batches     atomic.Int32
	singles     atomic.Int32
}

func newBatchProxy(t *testing.T, target string) *batchProxy {
	p := &batchProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		isBatch := len(bytes.TrimSpace(body)) > 0 && bytes.TrimSpace(body)[0] == '['
		if isBatch {
			p.batches.Add(1)
			if p.failBatches.Load() {
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return
			}
		} else {
			p.singles.Add(1)
		}
		resp, err := http.Post(target, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if isBatch && p.mangle != nil {
			var reqs []rpcReq
			var resps []map[string]any
			if json.Unmarshal(body, &reqs) == nil && json.Unmarshal(out, &resps) == nil {
				p.mangle(reqs, resps)
				out, _ = json.Marshal(resps)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if _, err := w.Write(out); err != nil {
			t.Logf("proxy: relaying the node's answer: %v", err)
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// devRangeChain seals a few blocks: one with every tx type, an empty one,
// and one more with txs.
func devRangeChain(t *testing.T, dev *gethdev.Node) uint32 {
	t.Helper()
	commitWith(t, dev, len(devTxs(t, dev)))
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}
	commitWith(t, dev, len(devTxs(t, dev)))
	h, _ := dev.Head()
	return uint32(h)
}

// blocksOneByOne is what Block returns for heights 0..tip.
func blocksOneByOne(t *testing.T, b *bchain.Backend, tip uint32) []*bchain.Block {
	t.Helper()
	ctx := context.Background()
	var out []*bchain.Block
	for h := uint32(0); h <= tip; h++ {
		hash, err := b.Chain.BlockHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		blk, err := b.Chain.Block(ctx, hash, h)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, blk)
	}
	return out
}

func sameBlocks(t *testing.T, what string, got, want []*bchain.Block) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d blocks, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: block %d differs from Block's:\n got %+v\nwant %+v", what, i, got[i].Eth, want[i].Eth)
		}
	}
}

// TestDevNodeBlockRange checks that the batched fetch returns exactly what
// Block returns, also when the node refuses elements of a batch (as geth
// does over its batch size limit) or whole batches, and that its traces
// and receipts are what Block decodes.
func TestDevNodeBlockRange(t *testing.T) {
	dev := startDev(t)
	ctx := context.Background()
	tip := devRangeChain(t, dev)
	p := newBatchProxy(t, dev.HTTPURL)
	b, n := devBackend(t, dev, p.srv.URL, map[string]any{"processInternalTransactions": true})
	want := blocksOneByOne(t, b, tip)
	for _, blk := range want {
		if blk.Eth.TraceError != "" || (len(blk.Eth.Txs) > 0 && !blk.Eth.Traced) {
			t.Fatalf("block %d: not traced: %q", blk.Height, blk.Eth.TraceError)
		}
	}

	p.batches.Store(0)
	got, err := n.BlockRange(ctx, 0, tip)
	if err != nil {
		t.Fatal(err)
	}
	sameBlocks(t, "batched", got, want)
	if c := p.batches.Load(); c != 2 {
		t.Errorf("%d batch requests, want 2 (blocks; receipts and traces)", c)
	}

	// Every other element of a batch refused as too large: those are
	// fetched again alone, and the result is the same.
	p.mangle = func(reqs []rpcReq, resps []map[string]any) {
		for i := range resps {
			if i%2 == 1 {
				delete(resps[i], "result")
				resps[i]["error"] = map[string]any{"code": -32003, "message": "response too large"}
			}
		}
	}
	p.singles.Store(0)
	got, err = n.BlockRange(ctx, 0, tip)
	if err != nil {
		t.Fatal(err)
	}
	sameBlocks(t, "elements refused", got, want)
	if p.singles.Load() == 0 {
		t.Error("no element was fetched again alone")
	}

	// A trace that does not line up with the block's txs is traced again.
	p.mangle = func(reqs []rpcReq, resps []map[string]any) {
		for i, q := range reqs {
			if q.Method == "debug_traceBlockByHash" {
				resps[i]["result"] = []any{}
			}
		}
	}
	got, err = n.BlockRange(ctx, 0, tip)
	if err != nil {
		t.Fatal(err)
	}
	sameBlocks(t, "bad traces", got, want)

	// Whole batches failing: the node is unavailable; nothing half done.
	p.mangle = nil
	p.failBatches.Store(true)
	if got, err := n.BlockRange(ctx, 0, tip); !errors.Is(err, bchain.ErrNodeUnavailable) || got != nil {
		t.Errorf("failing batches: %d blocks, err %v; want ErrNodeUnavailable", len(got), err)
	}
	p.failBatches.Store(false)

	if _, err := n.BlockRange(ctx, tip, tip+1); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Errorf("above the tip: %v, want ErrBlockNotFound", err)
	}
	if _, err := n.BlockRange(ctx, 0, MaxRangeBlocks); err == nil {
		t.Errorf("a range of %d blocks was accepted", MaxRangeBlocks+1)
	}
	if _, err := n.BlockRange(ctx, 2, 1); err == nil {
		t.Error("an inverted range was accepted")
	}
}

// TestDevNodeBlockRangeNoBlockReceipts: a node without
// eth_getBlockReceipts gets per-tx receipts, in batches too.
func TestDevNodeBlockRangeNoBlockReceipts(t *testing.T) {
	dev := startDev(t)
	tip := devRangeChain(t, dev)
	b, n := devBackend(t, dev, dev.HTTPURL, nil)
	want := blocksOneByOne(t, b, tip)
	p := newBatchProxy(t, refusingProxy(t, dev.HTTPURL, "eth_getBlockReceipts").URL)
	p.mangle = func(reqs []rpcReq, resps []map[string]any) {
		for i, q := range reqs {
			if q.Method == "eth_getBlockReceipts" {
				delete(resps[i], "result")
				resps[i]["error"] = map[string]any{"code": -32601, "message": "the method eth_getBlockReceipts does not exist/is not available"}
			}
		}
	}
	_, n2 := devBackend(t, dev, p.srv.URL, nil)
	got, err := n2.BlockRange(context.Background(), 0, tip)
	if err != nil {
		t.Fatal(err)
	}
	if !n2.noBlockReceipts.Load() {
		t.Fatal("the fallback path was not taken")
	}
	sameBlocks(t, "per-tx receipts", got, want)
	if n.noBlockReceipts.Load() {
		t.Error("the direct node switched to per-tx receipts")
	}
}
