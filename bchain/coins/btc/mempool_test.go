package btc

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

func TestCoreMempoolTxids(t *testing.T) {
	fs := newFixtureServer(t)
	coreWorld(t, fs)
	fs.on("getrawmempool", nil, coreFixture(t, "getrawmempool"), coreFixture(t, "getrawmempool-empty"), resultReply(`["nothex"]`))
	_, node := newFixtureBackend(t, fs, backendOpts{})
	ids, err := node.MempoolTxids(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []bchain.Hash{
		mustHash(t, "8c14f0db3df150123e6f3dbbf30f8b955a8249b62ac1d1ff16284aefa3d06d87"),
		mustHash(t, "fff2525b8931402dd09222c50775608f75787bd2b87e56995a7bdd30f79702c4"),
	}
	if !slices.Equal(ids, want) {
		t.Errorf("MempoolTxids = %v, want %v", ids, want)
	}
	if ids, err = node.MempoolTxids(testCtx(t)); err != nil || len(ids) != 0 {
		t.Errorf("empty mempool: %v, %v", ids, err)
	}
	_, err = node.MempoolTxids(testCtx(t))
	wantErrIs(t, err, bchain.ErrNodeUnavailable)
	wantCalls(t, fs, "getrawmempool []", "getrawmempool []", "getrawmempool []")
}

// coreBatchServer answers JSON-RPC batches the way Core does: HTTP 200 and
// an array of envelopes (here in reverse order, which ids must sort out);
// getrawtransaction knows only the fixture tx.
type coreBatchServer struct {
	srv      *httptest.Server
	requests atomic.Int32
	// reply, when set, replaces the whole answer.
	reply func(reqs []rpcRequest) []byte
}

func newCoreBatchServer(t *testing.T) *coreBatchServer {
	s := &coreBatchServer{}
	known := map[string]string{fxTxid: fxRawTxHex(t)}
	missing := coreFixture(t, "getrawtransaction-no-txindex").Error
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		var reqs []rpcRequest
		if u, p, ok := r.BasicAuth(); !ok || u != fxUser || p != fxPass || json.Unmarshal(body, &reqs) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if s.reply != nil {
			_, _ = w.Write(s.reply(reqs))
			return
		}
		var out bytes.Buffer
		out.WriteByte('[')
		for i := len(reqs) - 1; i >= 0; i-- {
			q := reqs[i]
			id, _ := json.Marshal(q.ID)
			raw, ok := known[q.Params[0].(string)]
			if q.Method != "getrawtransaction" || len(q.Params) != 2 || q.Params[1] != float64(0) {
				ok = false
			}
			if ok {
				out.Write(envelope(json.RawMessage(`"`+raw+`"`), nil, id))
			} else {
				out.Write(envelope(nil, missing, id))
			}
			if i > 0 {
				out.WriteByte(',')
			}
		}
		out.WriteByte(']')
		_, _ = w.Write(out.Bytes())
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func TestRawTxsBatch(t *testing.T) {
	s := newCoreBatchServer(t)
	node := &Node{rpc: newRPCClient(s.srv.URL, fxUser, fxPass, 5*time.Second, discardLog(), nil), parser: NewParser(&chaincfg.MainNetParams), log: discardLog()}
	node.rpc.backoff = time.Millisecond
	known, unknown := mustHash(t, fxTxid), mustHash(t, fxUnknownTx)
	ids := make([]bchain.Hash, 250)
	for i := range ids {
		ids[i] = unknown
		if i%7 == 3 {
			ids[i] = known
		}
	}
	raws, err := node.RawTxs(testCtx(t), ids)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.requests.Load(); n != 3 {
		t.Errorf("%d HTTP requests for 250 txs; want 3 batches", n)
	}
	want := fxRawTx(t)
	for i, raw := range raws {
		if (i%7 == 3) != (raw != nil) || (raw != nil && !bytes.Equal(raw, want)) {
			t.Fatalf("entry %d: %x", i, raw)
		}
	}

	for name, reply := range map[string]func([]rpcRequest) []byte{
		"not a batch": func([]rpcRequest) []byte {
			return []byte(`{"result":null,"error":{"code":-32700,"message":"Parse error"},"id":null}`)
		},
		"missing answer": func(r []rpcRequest) []byte { return envelopeList(r[1:], `"00"`) },
		"foreign id":     func(r []rpcRequest) []byte { return envelopeList(append(r[1:], rpcRequest{ID: 1 << 40}), `"00"`) },
		"duplicate id":   func(r []rpcRequest) []byte { return envelopeList(append(r[1:], r[1]), `"00"`) },
		"not hex":        func(r []rpcRequest) []byte { return envelopeList(r, `"zz"`) },
	} {
		s.reply = reply
		_, err := node.RawTxs(testCtx(t), []bchain.Hash{known, known})
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
	}
}

// envelopeList answers every request with result.
func envelopeList(reqs []rpcRequest, result string) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, q := range reqs {
		id, _ := json.Marshal(q.ID)
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSpace(envelope(json.RawMessage(result), nil, id)))
	}
	b.WriteByte(']')
	return b.Bytes()
}

// TestBtcdMempool runs the mempool capabilities against a real btcd: tx
// notifications over its websocket, getrawmempool, and batched raw txs.
func TestBtcdMempool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rn, err := regtest.Start(ctx, regtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Stop()
	step := time.Second
	g := chaingen.New(&chaincfg.RegressionNetParams, "btc-mempool", chaingen.WithTimestamps(time.Now().Add(-200*step), step))
	for range 110 {
		if _, err := g.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Submit(ctx, rn, 1); err != nil {
		t.Fatal(err)
	}
	cfg, err := bchain.ParseConfig([]byte(`{"coin_name":"Regtest","rpc_url":"` + rn.RPCURL + `","rpc_user":"` + rn.RPCUser + `","rpc_pass":"` + rn.RPCPass + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
	if err != nil {
		t.Fatal(err)
	}
	node := b.Chain.(*Node)
	if ids, err := node.MempoolTxids(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("fresh node mempool: %v, %v", ids, err)
	}

	c := newTxCollector()
	stop := runTxNotifier(t, b.TxNotifier, c)
	// btcd announces only to clients already subscribed; wait for the
	// subscription by sending txs until the first one is announced.
	dest, _ := g.Address(chaingen.P2WPKH, 9)
	var sent []bchain.Hash
	raw := map[bchain.Hash][]byte{}
	for i := 0; c.count() == 0; i++ {
		if i == 200 {
			t.Fatal("no txaccepted notification")
		}
		tx, err := g.CreatePayment([]chaingen.Output{{Address: dest, Value: 10_000 + int64(i)}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		id, err := rn.SendRawTransaction(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		h := mustHash(t, id)
		var buf bytes.Buffer
		_ = tx.Serialize(&buf)
		sent, raw[h] = append(sent, h), buf.Bytes()
		select {
		case <-c.ch:
			c.ch <- struct{}{}
		case <-time.After(50 * time.Millisecond):
		}
	}
	first := slices.Index(sent, c.got()[0])
	if first < 0 {
		t.Fatalf("announced %s, which was not sent", c.got()[0])
	}
	for i := range 3 {
		tx, err := g.CreatePayment([]chaingen.Output{{Address: dest, Value: 20_000 + int64(i)}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		id, err := rn.SendRawTransaction(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_ = tx.Serialize(&buf)
		h := mustHash(t, id)
		sent, raw[h] = append(sent, h), buf.Bytes()
	}
	c.waitFor(t, int64(len(sent)-first))
	if got := c.got(); !slices.Equal(got, sent[first:]) {
		t.Errorf("announced %v, want %v in order", got, sent[first:])
	}
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}

	ids, err := node.MempoolTxids(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ids, func(a, b bchain.Hash) int { return bytes.Compare(a[:], b[:]) })
	want := slices.Clone(sent)
	slices.SortFunc(want, func(a, b bchain.Hash) int { return bytes.Compare(a[:], b[:]) })
	if !slices.Equal(ids, want) {
		t.Fatalf("getrawmempool %v, want %v", ids, want)
	}
	unknown := mustHash(t, fxUnknownTx)
	raws, err := node.RawTxs(ctx, append(slices.Clone(sent), unknown))
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range sent {
		if !bytes.Equal(raws[i], raw[h]) {
			t.Errorf("RawTxs %s = %s", h, hex.EncodeToString(raws[i]))
		}
	}
	if raws[len(sent)] != nil {
		t.Errorf("an unknown txid returned %x", raws[len(sent)])
	}
}
