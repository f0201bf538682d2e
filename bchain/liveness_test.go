package bchain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
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

// answerChain answers BestBlock 60 ms after it is asked, as a healthy
// node does, but like a real client it drops an answer read after its
// context ended.
type answerChain struct{ BlockChain }

func (answerChain) BestBlock(ctx context.Context) (uint32, Hash, error) {
	time.Sleep(60 * time.Millisecond)
	if dl, ok := ctx.Deadline(); ok && time.Now().After(dl) {
		return 0, Hash{}, context.DeadlineExceeded // as a read past its deadline fails
	}
	if err := ctx.Err(); err != nil {
		return 0, Hash{}, err
	}
	return 1, Hash{}, nil
}

func (c answerChain) ChainInfo(ctx context.Context) (*ChainInfo, error) {
	_, _, err := c.BestBlock(ctx)
	return &ChainInfo{Blocks: 1}, err
}

// A process starved of CPU reads a healthy node's answer late; that is
// not the node's fault. Here the test process itself is stopped for
// 500 ms at a time and runs 10 ms between (SIGSTOP from a child, as a
// loaded machine's scheduler starves the process), 6 times, while it
// probes a node that answers in 60 ms, with a 200 ms probe timeout: the
// node must stay responding (a timeout in wall time marked it down).
func TestLivenessNotFooledByStarvation(t *testing.T) {
	if testing.Short() {
		t.Skip("stops the test process")
	}
	l := NewLiveness(answerChain{}, LivenessConfig{Interval: 5 * time.Millisecond, Timeout: 200 * time.Millisecond, Failures: 2}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan struct{})
	go func() { defer close(ran); l.Run(ctx) }()
	script := fmt.Sprintf("sleep 0.05; for i in 1 2 3 4 5 6; do kill -STOP %d; sleep 0.5; kill -CONT %d; sleep 0.01; done", os.Getpid(), os.Getpid())
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("starving the process: %v %s", err, out)
	}
	cancel()
	<-ran
	t.Logf("failed probes in a row at the end %v, state %+v", l.fails, l.State())
	select {
	case <-l.Down():
		t.Fatalf("a healthy node was marked down while this process was starved: %+v", l.State())
	default:
	}
	if st := l.State(); !st.Responding || st.LastOK.IsZero() {
		t.Fatalf("state after the starvation: %+v", st)
	}
}

// A failed echo trip (a byte may be left in the pair) drops the pair; the
// next trip opens a new one instead of reading the stale byte at once.
func TestLivenessEchoReopenedAfterFailure(t *testing.T) {
	var l Liveness
	defer l.closeEcho()
	if d := l.echoTrip(); d <= 0 || l.echo == nil {
		t.Fatalf("no loopback echo (trip %v)", d)
	}
	old := l.echo
	_ = old.b.Close() // the next read fails
	l.echoTrip()
	if l.echo != nil {
		t.Fatal("a failed trip kept its pair")
	}
	if d := l.echoTrip(); d <= 0 || l.echo == nil || l.echo == old {
		t.Fatalf("after a failure: trip %v, pair %p (old %p), want a new pair", d, l.echo, old)
	}
}
