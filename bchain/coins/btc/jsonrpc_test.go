package btc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
)

// Transport robustness of the JSON-RPC client: whatever the node (or a proxy
// in front of it) does, calls end with a typed error after a bounded number
// of attempts, and never panic.

func TestRPCRequestShape(t *testing.T) {
	fs := newFixtureServer(t)
	coreWorld(t, fs)
	b, _ := newFixtureBackend(t, fs, backendOpts{})
	ctx := testCtx(t)
	if _, _, err := b.Chain.BestBlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Chain.BlockHash(ctx, 170); err != nil {
		t.Fatal(err)
	}
	calls := fs.Calls()
	if len(calls) != 3 {
		t.Fatalf("calls: %v", calls)
	}
	var lastID uint64
	for _, c := range calls {
		if c.HTTPMethod != "POST" || c.ContentType != "application/json" || c.JSONRPC != "1.0" || !c.AuthOK {
			t.Errorf("request %s: %s %q jsonrpc=%q auth=%v", c, c.HTTPMethod, c.ContentType, c.JSONRPC, c.AuthOK)
		}
		var id uint64
		if err := json.Unmarshal(c.ID, &id); err != nil || id <= lastID {
			t.Errorf("request ids must increase: %s after %d", c.ID, lastID)
		}
		lastID = id
	}
	// Methods without arguments send an empty array, which both nodes accept.
	if calls[0].Params != "[]" {
		t.Errorf("getbestblockhash params = %s", calls[0].Params)
	}
}

func TestRPCTransportFailures(t *testing.T) {
	t.Parallel()
	for _, f := range []fault{faultHTML500, faultHTML502, faultWorkQueue, faultTruncated, faultGarbage,
		faultEmptyBody, faultEmptyObject, faultCloseConn, faultForbidden} {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			fs := newFixtureServer(t)
			coreWorld(t, fs)
			fs.on("getbestblockhash", nil, faultReply(f))
			b, _ := newFixtureBackend(t, fs, backendOpts{})
			_, _, err := b.Chain.BestBlock(testCtx(t))
			if err == nil {
				t.Fatal("BestBlock succeeded")
			}
			wantErrIs(t, err, bchain.ErrNodeUnavailable)
			var rpcErr *bchain.RPCError
			if errors.As(err, &rpcErr) {
				t.Errorf("a transport failure must not look like a node answer: %v", err)
			}
			if !strings.Contains(err.Error(), "getbestblockhash") {
				t.Errorf("error should name the method: %v", err)
			}
			// Refused credentials are final; everything else is retried.
			want := 4
			if f == faultForbidden {
				want = 1
			}
			if n := fs.CountCalls("getbestblockhash"); n != want {
				t.Errorf("getbestblockhash tried %d times, want %d", n, want)
			}
			if n := len(fs.Calls()); n != want {
				t.Errorf("other calls made: %v", fs.CallKeys())
			}
		})
	}

	t.Run("html body is quoted", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		fs.on("getbestblockhash", nil, faultReply(faultHTML500))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, _, err := b.Chain.BestBlock(testCtx(t))
		if err == nil || !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "<html>") {
			t.Errorf("error should show the status and the start of the body: %v", err)
		}
	})

	t.Run("wrong result type", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		fs.on("getbestblockhash", nil, resultReply(`170`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, _, err := b.Chain.BestBlock(testCtx(t))
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
		if n := fs.CountCalls("getbestblockhash"); n != 4 {
			t.Errorf("tried %d times, want 4", n)
		}
	})

	// Transient failures are absorbed by the retries.
	t.Run("recovers", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		fs.on("getbestblockhash", nil, faultReply(faultCloseConn), faultReply(faultTruncated),
			faultReply(faultHTML502), coreFixture(t, "getbestblockhash"))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		h, hash, err := b.Chain.BestBlock(testCtx(t))
		if err != nil || h != 170 || hash.String() != fxHash170 {
			t.Fatalf("BestBlock = %d %s %v", h, hash, err)
		}
		if n := fs.CountCalls("getbestblockhash"); n != 4 {
			t.Errorf("tried %d times, want 4", n)
		}
	})

	// With the production backoff (200 ms, doubling) the retries are spread
	// out rather than hammering a struggling node.
	t.Run("production backoff", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		fs.on("getbestblockhash", nil, faultReply(faultHTML502))
		b, _ := newFixtureBackend(t, fs, backendOpts{keepBackoff: true})
		_, _, err := b.Chain.BestBlock(testCtx(t))
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
		calls := fs.Calls()
		if len(calls) != 4 {
			t.Fatalf("tried %d times, want 4", len(calls))
		}
		for i, minGap := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
			if gap := calls[i+1].At.Sub(calls[i].At); gap < minGap {
				t.Errorf("retry %d came %v after the previous try, want at least %v", i+1, gap, minGap)
			}
		}
	})
}

func TestRPCUnauthorized(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts backendOpts
		f    fault
	}{
		{"wrong password", backendOpts{pass: "wrong"}, faultNone},
		{"wrong user", backendOpts{user: "nobody"}, faultNone},
		{"401 from the node", backendOpts{}, faultUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := newFixtureServer(t)
			coreWorld(t, fs)
			if tc.f != faultNone {
				fs.on("getbestblockhash", nil, faultReply(tc.f))
			}
			b, _ := newFixtureBackend(t, fs, tc.opts)
			_, _, err := b.Chain.BestBlock(testCtx(t))
			if err == nil {
				t.Fatal("BestBlock succeeded")
			}
			wantErrIs(t, err, bchain.ErrNodeUnavailable)
			if !strings.Contains(err.Error(), "rpc_user/rpc_pass") || !strings.Contains(err.Error(), "401") {
				t.Errorf("a 401 should tell the operator to check rpc_user/rpc_pass: %v", err)
			}
			if strings.Contains(err.Error(), fxPass) {
				t.Errorf("the error leaks the password: %v", err)
			}
			if n := len(fs.Calls()); n < 1 || n > 4 {
				t.Errorf("%d attempts; want at most 1 try + 3 retries", n)
			}
		})
	}
}

func TestRPCTimeout(t *testing.T) {
	t.Parallel()
	t.Run("rpc_timeout bounds the call, retries included", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		fs.on("getbestblockhash", nil, fxReply{Delay: -1}) // never answers
		b, node := newFixtureBackend(t, fs, backendOpts{timeout: 1})
		if node.rpc.timeout != time.Second {
			t.Fatalf("rpc_timeout 1 gave a timeout of %v", node.rpc.timeout)
		}
		node.rpc.retries = 1
		start := time.Now()
		_, _, err := b.Chain.BestBlock(testCtx(t))
		elapsed := time.Since(start)
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
		if err != nil && !strings.Contains(err.Error(), "deadline exceeded") {
			t.Errorf("error should say the request timed out: %v", err)
		}
		// The first attempt used the whole rpc_timeout: no retry after it
		// (a frozen node made a call wait 4 × rpc_timeout, issue 47).
		if n := len(fs.Calls()); n != 1 {
			t.Fatalf("attempts = %d, want 1", n)
		}
		if elapsed < time.Second || elapsed >= 2*time.Second {
			t.Errorf("the call gave up after %v, want one rpc_timeout (1 s)", elapsed)
		}
		if elapsed >= bchain.DefaultRPCTimeout {
			t.Errorf("took %v: rpc_timeout was not applied", elapsed)
		}
	})
	t.Run("slow answer within rpc_timeout", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		slow := coreFixture(t, "getbestblockhash")
		slow.Delay = 300 * time.Millisecond
		fs.on("getbestblockhash", nil, slow)
		b, _ := newFixtureBackend(t, fs, backendOpts{timeout: 5})
		if _, _, err := b.Chain.BestBlock(testCtx(t)); err != nil {
			t.Errorf("a slow answer within rpc_timeout failed: %v", err)
		}
		if n := fs.CountCalls("getbestblockhash"); n != 1 {
			t.Errorf("tried %d times", n)
		}
	})
}

func TestRPCCancellation(t *testing.T) {
	t.Parallel()
	// cancelOnCall cancels ctx once the server has seen a call.
	cancelOnCall := func(t *testing.T, ctx context.Context, cancel context.CancelFunc, ch chan fxCall) {
		go func() {
			select {
			case <-ch:
				cancel()
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Error("no call reached the server")
				cancel()
			}
		}()
	}
	// run calls BestBlock in the background and fails the test if it does
	// not return: with a 1 h backoff or a never-answering node, returning at
	// all proves that cancellation stopped the wait.
	run := func(t *testing.T, b *bchain.Backend, ctx context.Context) error {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, _, err := b.Chain.BestBlock(ctx)
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("BestBlock did not return after its context was cancelled")
			return nil
		}
	}

	t.Run("during backoff", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		fs.arrived = make(chan fxCall, 16)
		fs.on("getbestblockhash", nil, faultReply(faultHTML502))
		b, node := newFixtureBackend(t, fs, backendOpts{})
		node.rpc.backoff = time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cancelOnCall(t, ctx, cancel, fs.arrived)
		err := run(t, b, ctx)
		// The error is the failed attempt's, whether or not it mentions the
		// cancellation (that depends on when the cancel lands).
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
		if n := len(fs.Calls()); n != 1 {
			t.Errorf("%d attempts after cancellation; want the single one before it", n)
		}
	})

	t.Run("during a request", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		fs.arrived = make(chan fxCall, 16)
		fs.on("getbestblockhash", nil, fxReply{Delay: -1})
		b, _ := newFixtureBackend(t, fs, backendOpts{timeout: 600})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cancelOnCall(t, ctx, cancel, fs.arrived)
		err := run(t, b, ctx)
		if err == nil {
			t.Fatal("BestBlock succeeded")
		}
		if n := len(fs.Calls()); n != 1 {
			t.Errorf("%d attempts; a cancelled call must not be retried", n)
		}
	})

	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := run(t, b, ctx); err == nil {
			t.Fatal("BestBlock succeeded with a cancelled context")
		}
		if n := len(fs.Calls()); n != 0 {
			t.Errorf("%d requests sent with a cancelled context", n)
		}
	})
}

// TestRPCMetrics checks that calls are observed in the registry given to
// the backend, by method and error kind.
func TestRPCMetrics(t *testing.T) {
	fs := newFixtureServer(t)
	coreWorld(t, fs)
	fs.on("getblockchaininfo", nil, faultReply(faultGarbage))
	reg := prometheus.NewRegistry()
	node := &Node{rpc: newRPCClient(fs.URL(), fxUser, fxPass, 5*time.Second, discardLog(), reg),
		parser: NewParser(networks["Bitcoin"].Params), log: discardLog()}
	node.rpc.backoff = time.Millisecond
	ctx := testCtx(t)
	if _, _, err := node.BestBlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := node.BlockHash(ctx, 171); err == nil {
		t.Fatal("BlockHash(171) succeeded")
	}
	if _, err := node.ChainInfo(ctx); err == nil {
		t.Fatal("ChainInfo succeeded")
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	observed := map[string]uint64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetName() {
			case "blockbook_rpc_errors_total":
				counts[labels["method"]+"/"+labels["kind"]] = m.GetCounter().GetValue()
			case "blockbook_rpc_latency_seconds":
				observed[labels["method"]] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	if counts["getblockhash/rpc"] != 1 || counts["getblockchaininfo/transport"] != 4 {
		t.Errorf("error counters: %v", counts)
	}
	if observed["getbestblockhash"] != 1 || observed["getblockheader"] != 1 || observed["getblockchaininfo"] != 4 {
		t.Errorf("latency observations: %v", observed)
	}
}

// TestRPCHostileAnswers sends odd but possible bodies to every Node method:
// each call must end with a result or an error, never a panic, and an
// answer that is not a JSON-RPC response must read as ErrNodeUnavailable.
func TestRPCHostileAnswers(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for _, body := range []string{
		`{"result":`, `{"error":"Block not found"}`, `{"error":{"code":"-5","message":"x"}}`,
		`{"result":null,"error":null,"id":1}`, `{"error":{"code":-5},"id":1}`, `{"error":{},"id":1}`,
		`[{"result":"00","error":null,"id":1}]`, `null`, `"result"`, `{"result":1e400}`,
		`{"result":{"height":1e30,"feerate":-1,"warnings":[1,2]},"error":null}`,
		`{"result":"` + strings.Repeat("ab", 5000) + `","error":null}`,
		`{"result":"\xff\xfe","error":null}`, "{\"result\":\"\xff\",\"error\":null}",
		`{"result":` + deep + `,"error":null}`,
		`{"result":{"errors":[],"feerate":"0.0001"},"error":null}`,
	} {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			fs := newFixtureServer(t)
			for _, m := range []string{"getnetworkinfo", "getinfo", "getblockchaininfo", "getbestblockhash",
				"getblockhash", "getblockheader", "getblock", "getrawtransaction", "sendrawtransaction",
				"estimatesmartfee", "estimatefee"} {
				fs.onAny(m, fxReply{Raw: []byte(body), Status: http.StatusOK})
			}
			b, node := newFixtureBackend(t, fs, backendOpts{})
			ctx := testCtx(t)
			h170, tx := mustHash(t, fxHash170), mustHash(t, fxTxid)
			var errs []error
			_, err := node.Dialect(ctx)
			errs = append(errs, err)
			_, _, err = b.Chain.BestBlock(ctx)
			errs = append(errs, err)
			_, err = b.Chain.BlockHash(ctx, 170)
			errs = append(errs, err)
			_, err = b.Chain.BlockHeight(ctx, h170)
			errs = append(errs, err)
			_, err = b.Chain.Block(ctx, h170, 170)
			errs = append(errs, err)
			_, err = b.Txs.RawTx(ctx, tx, h170)
			errs = append(errs, err)
			_, err = b.Txs.TxSpecific(ctx, tx, h170)
			errs = append(errs, err)
			_, err = b.Broadcast.SendRawTx(ctx, []byte{1, 0, 0, 0})
			errs = append(errs, err)
			_, err = b.Fees.EstimateFee(ctx, 2, false)
			errs = append(errs, err)
			_, err = b.Chain.ChainInfo(ctx)
			errs = append(errs, err)
			for i, err := range errs {
				var rpcErr *bchain.RPCError
				if err != nil && !errors.As(err, &rpcErr) && !errors.Is(err, bchain.ErrNodeUnavailable) &&
					!errors.Is(err, bchain.ErrBlockNotFound) && !errors.Is(err, bchain.ErrTxNotFound) &&
					!errors.Is(err, bchain.ErrUnsupported) {
					t.Errorf("call %d: untyped error %v", i, err)
				}
			}
			if len(fs.Calls()) > 100 {
				t.Errorf("%d requests for 10 calls", len(fs.Calls()))
			}
		})
	}
}
