package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/server"
)

// checkBackend: the Ethereum-type keys warn once on a Bitcoin-type coin,
// and an Ethereum-type node that cannot be reached is warned about, not
// refused (it is checked again before the first block).
func TestCheckBackendWarnings(t *testing.T) {
	for _, c := range []struct {
		cfg  string
		want []string
	}{
		{`{"coin_name":"Regtest","rpc_url":"http://127.0.0.1:1","disableMempoolSync":true,"trace_timeout":"10s"}`,
			[]string{"key=disableMempoolSync", "key=trace_timeout"}},
		{`{"coin_name":"Polygon","rpc_url":"http://127.0.0.1:1","rpc_timeout":1,"missingBlockRetry":{"tipRecheckThreshold":3}}`,
			[]string{"could not ask the node its chain id", "tipRecheckThreshold has no effect"}},
	} {
		cfg, err := bchain.ParseConfig([]byte(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: log})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkBackend(context.Background(), cfg, b, log); err != nil {
			t.Errorf("%s: %v", cfg.CoinName, err)
		}
		for _, w := range c.want {
			if strings.Count(logs.String(), w) != 1 {
				t.Errorf("%s: want one warning with %q in\n%s", cfg.CoinName, w, logs.String())
			}
		}
		if b.Close != nil {
			_ = b.Close()
		}
	}
}

// The Ethereum mempool follower starts only once the sync worker reports
// the tip reached (Blockbook's order), and not at all if ctx ends first.
func TestWaitInSync(t *testing.T) {
	var calls atomic.Int32
	inSync := func() bool { return calls.Add(1) >= 3 }
	if !waitInSync(context.Background(), inSync) {
		t.Fatal("waitInSync gave up though the sync reached the tip")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("inSync asked %d times before the wait ended, want 3", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	if waitInSync(ctx, func() bool { return false }) {
		t.Error("waitInSync returned true for a sync that never reached the tip")
	}
	if !waitInSync(context.Background(), nil) {
		t.Error("waitInSync without a sync worker must not wait")
	}
}

// fixedStatus is a sync status that says st.
type fixedStatus struct{ st api.SyncState }

func (f fixedStatus) State() api.SyncState { return f.st }

// With a sync worker, what waits for the initial sync reads the latch
// (ReachedTip), not InSync, which a fast chain clears within milliseconds.
func TestStartMempoolWaitsOnTheLatch(t *testing.T) {
	ran := 0
	var inSync func() bool // what the follower was given
	s := &chainStack{runMempool: func(_ context.Context, _ *sync.WaitGroup, _ *server.Websocket, f func() bool) { ran++; inSync = f }}
	s.startMempool(context.Background(), &sync.WaitGroup{}, nil, true, fixedStatus{api.SyncState{InSync: false, ReachedTip: true}})
	if ran != 1 || inSync == nil || !inSync() {
		t.Fatalf("ran %d times; inSync given %v", ran, inSync != nil)
	}
	s.startMempool(context.Background(), &sync.WaitGroup{}, nil, true, fixedStatus{api.SyncState{InSync: true}})
	if ran != 2 || inSync == nil || inSync() {
		t.Error("inSync read InSync, not the latch")
	}
	s.startMempool(context.Background(), &sync.WaitGroup{}, nil, false, fixedStatus{})
	if ran != 3 || inSync != nil {
		t.Error("without a sync worker nothing should wait")
	}
}
