package bchain

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// stallChain answers BestBlock at once, or blocks until the caller's
// context ends while frozen is set (as a SIGSTOPped node does).
type stallChain struct {
	BlockChain
	frozen atomic.Bool
	height atomic.Uint32
}

func (c *stallChain) BestBlock(ctx context.Context) (uint32, Hash, error) {
	if c.frozen.Load() {
		<-ctx.Done()
		return 0, Hash{}, ctx.Err()
	}
	return c.height.Load(), Hash{}, nil
}

func (c *stallChain) ChainInfo(ctx context.Context) (*ChainInfo, error) {
	if c.frozen.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &ChainInfo{Chain: "regtest", Blocks: int(c.height.Load())}, nil
}

// The probe's verdict follows the node: one slow probe is tolerated, the
// second in a row marks the node down (Check then wraps
// ErrNodeUnavailable), and one answer brings it back.
func TestLivenessFollowsNode(t *testing.T) {
	c := &stallChain{}
	c.height.Store(7)
	l := NewLiveness(c, LivenessConfig{Timeout: 20 * time.Millisecond, Failures: 2}, slog.New(slog.DiscardHandler))
	ctx := context.Background()

	if err := l.Check(); err != nil {
		t.Fatalf("before any probe: %v", err)
	}
	l.probe(ctx)
	st := l.State()
	if !st.Responding || st.Height != 7 || st.Info == nil || st.Info.Blocks != 7 {
		t.Fatalf("after a good probe: %+v", st)
	}

	c.frozen.Store(true)
	l.probe(ctx)
	if err := l.Check(); err != nil {
		t.Fatalf("one failed probe already marks the node down: %v", err)
	}
	l.probe(ctx)
	err := l.Check()
	if !errors.Is(err, ErrNodeUnavailable) {
		t.Fatalf("two failed probes: Check = %v, want ErrNodeUnavailable", err)
	}
	if st := l.State(); st.Responding || st.Err == "" || st.Info == nil {
		t.Fatalf("frozen node: state %+v (the last chain info must be kept)", st)
	}

	c.frozen.Store(false)
	c.height.Store(8)
	l.probe(ctx)
	if err := l.Check(); err != nil {
		t.Fatalf("after the node answered again: %v", err)
	}
	if st := l.State(); st.Height != 8 || st.Err != "" {
		t.Fatalf("after recovery: %+v", st)
	}
}

// WaitInfo returns once the first probe is done, even when it failed.
func TestLivenessWaitInfoAfterFailure(t *testing.T) {
	c := &stallChain{}
	c.frozen.Store(true)
	l := NewLiveness(c, LivenessConfig{Timeout: 10 * time.Millisecond}, nil)
	l.probe(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l.WaitInfo(ctx)
	if ctx.Err() != nil {
		t.Fatal("WaitInfo waited for a node that did not answer")
	}
}
