package bchain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/internal/promreg"
)

// LivenessConfig tunes the node liveness probe. Zero fields take defaults.
type LivenessConfig struct {
	// Interval between probes (default 1 s).
	Interval time.Duration
	// Timeout of one probe (default 2 s). It is independent of the RPC
	// timeout so that a frozen node is noticed in seconds, not minutes.
	// It counts only the time this process ran (see runTime): a process
	// starved of CPU by its own clients or by the machine reads the
	// node's answer late, and that is not the node's fault.
	Timeout time.Duration
	// MaxWait bounds one probe in real time, starved or not (default
	// 10 s; the app passes half of rpc_timeout): a frozen node is still
	// noticed under any load, within Failures x MaxWait. A probe that
	// runs out of time before this process sent its request, or with the
	// node's answer waiting unread (the chain's AnswerOwed), is no
	// verdict: a frozen node holds a sent request and answers nothing.
	MaxWait time.Duration
	// Failures is how many probes in a row must fail before the node is
	// declared unresponsive (default 2): one slow answer under load is not
	// an outage.
	Failures int
	// InfoEvery is how often the node's chain info (for status pages) is
	// refreshed while the node answers (default 5 s).
	InfoEvery time.Duration
	// Metrics receives blockbook_node_responding and
	// blockbook_node_probe_failures_total; may be nil.
	Metrics prometheus.Registerer
}

func (c *LivenessConfig) defaults() {
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Second
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 10 * time.Second
	}
	// Past Timeout the probe waits for a request written late to be owed
	// Timeout itself: MaxWait must leave room for that.
	c.MaxWait = max(c.MaxWait, 2*c.Timeout)
	if c.Failures <= 0 {
		c.Failures = 2
	}
	if c.InfoEvery <= 0 {
		c.InfoEvery = 5 * time.Second
	}
}

// NodeLiveness is the probe's last verdict on the node.
type NodeLiveness struct {
	// Responding is false once Failures probes in a row failed; it is true
	// before the first probe (nothing is known against the node yet).
	Responding bool
	// Height is the node's best height at the last successful probe.
	Height uint32
	// LastOK is when the node last answered a probe (zero if never).
	LastOK time.Time
	// Err is the last probe's error, empty when it succeeded.
	Err string
	// Info is the node's chain info from the last successful refresh (nil
	// before one), with InfoErr the error of the last refresh attempt.
	Info    *ChainInfo
	InfoErr string
}

// Liveness probes the node on its own schedule, off the request path, so
// that requests can ask whether the node answers without calling it.
type Liveness struct {
	chain BlockChain
	cfg   LivenessConfig
	log   *slog.Logger

	mu       sync.RWMutex
	state    NodeLiveness
	fails    int
	infoAt   time.Time
	infoOnce chan struct{} // closed after the first chain info attempt
	down     chan struct{} // closed when the node is marked unresponsive

	responding prometheus.Gauge
	failures   prometheus.Counter
	starved    prometheus.Counter
	// inconclusive counts probes that ran out of time with the request
	// unsent or the answer unread: neither a failure nor a success.
	inconclusive prometheus.Counter

	// echo is opened on first use (only the probing goroutine uses it);
	// noEcho once loopback cannot be had.
	echo   *echoPair
	noEcho bool
}

// echoPair is a loopback TCP connection to itself: the time a byte takes
// to come back is the time the process takes to run a goroutine the
// network poller woke.
type echoPair struct{ a, b net.Conn }

func newEchoPair() *echoPair {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil
	}
	b, err := ln.Accept()
	if err != nil {
		_ = a.Close()
		return nil
	}
	return &echoPair{a, b}
}

// roundTrip is one byte's trip, and false when it failed (a byte may then
// be left in the pair, which must not be used again).
func (e *echoPair) roundTrip() (time.Duration, bool) {
	start := time.Now()
	var one [1]byte
	_ = e.b.SetReadDeadline(start.Add(10 * time.Second))
	if _, err := e.a.Write(one[:]); err != nil {
		return 0, false
	}
	_, err := e.b.Read(one[:])
	return time.Since(start), err == nil
}

func (e *echoPair) close() {
	_ = e.a.Close()
	_ = e.b.Close()
}

// echoTrip is one byte's trip over the echo pair (0 without loopback). A
// failed trip closes the pair, and the next opens a new one: a late byte
// left in it would make every later trip look instant.
func (l *Liveness) echoTrip() time.Duration {
	if l.echo == nil && !l.noEcho {
		l.echo = newEchoPair()
		l.noEcho = l.echo == nil
	}
	if l.echo == nil {
		return 0
	}
	d, ok := l.echo.roundTrip()
	if !ok {
		l.closeEcho()
	}
	return d
}

func (l *Liveness) closeEcho() {
	if l.echo != nil {
		l.echo.close()
		l.echo = nil
	}
}

// NewLiveness builds a probe of chain; Run starts it.
func NewLiveness(chain BlockChain, cfg LivenessConfig, log *slog.Logger) *Liveness {
	cfg.defaults()
	if log == nil {
		log = slog.Default()
	}
	l := &Liveness{chain: chain, cfg: cfg, log: log.With("subsystem", "liveness"),
		state: NodeLiveness{Responding: true}, infoOnce: make(chan struct{}), down: make(chan struct{}),
		responding: prometheus.NewGauge(prometheus.GaugeOpts{Name: "blockbook_node_responding",
			Help: "1 while the node answers the liveness probe, 0 once it is considered unresponsive"}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_node_probe_failures_total",
			Help: "Liveness probes the node did not answer in time"}),
		starved: prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_node_probe_starved_seconds_total",
			Help: "Time the liveness probe waited past its timeout because this process was not running (CPU starvation)"}),
		inconclusive: prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_node_probe_inconclusive_total",
			Help: "Liveness probes that ran out of time with the request not yet sent or the node's answer unread (this process starved): not counted as failures"}),
	}
	if cfg.Metrics != nil {
		l.responding = promreg.Register(cfg.Metrics, l.responding)
		l.failures = promreg.Register(cfg.Metrics, l.failures)
		l.starved = promreg.Register(cfg.Metrics, l.starved)
		l.inconclusive = promreg.Register(cfg.Metrics, l.inconclusive)
	}
	l.responding.Set(1)
	return l
}

// Run probes until ctx ends.
func (l *Liveness) Run(ctx context.Context) {
	t := time.NewTicker(l.cfg.Interval)
	defer t.Stop()
	defer l.closeEcho()
	for {
		l.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probe asks the node for its best block (cheap on every node type) and,
// when that answered and the chain info is due, refreshes the chain info.
func (l *Liveness) probe(ctx context.Context) {
	var height uint32
	err := l.runTime(ctx, func(ctx context.Context) (err error) {
		height, _, err = l.chain.BestBlock(ctx)
		return err
	})
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, errProbeStarved) {
		l.inconclusive.Inc()
		l.log.Debug("liveness probe inconclusive", "err", err)
		return
	}
	l.record(height, err)
	if err != nil {
		l.mu.Lock()
		l.infoDone() // WaitInfo must not wait for a node that does not answer
		l.mu.Unlock()
		return
	}
	l.mu.RLock()
	due := time.Since(l.infoAt) >= l.cfg.InfoEvery
	l.mu.RUnlock()
	if !due {
		return
	}
	var info *ChainInfo
	err = l.runTime(ctx, func(ctx context.Context) (err error) {
		info, err = l.chain.ChainInfo(ctx)
		return err
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.infoAt = time.Now()
	if err != nil {
		l.state.InfoErr = err.Error()
	} else {
		l.state.Info, l.state.InfoErr = info, ""
	}
	l.infoDone()
}

// runTime runs call with a deadline of Timeout counted in the time this
// process ran, at most MaxWait in real time. A watcher wakes every
// Timeout/40; a wake that comes late means the process (the Go scheduler
// behind its own runnable goroutines, or the machine behind other
// processes) did not run meanwhile, and that lateness is added to the
// deadline. Each wake also sends a byte to itself over loopback TCP
// (echoPair): a goroutine woken by the network poller, as the one that
// reads the node's answer is, waits behind every runnable goroutine of
// the process, which a timer's does not (under 600 attackers the
// ticker came on time while the answer waited seconds to be read). The
// probe's own connections (ProbeChain) keep it out of the
// clients' queues; this keeps CPU starvation from passing for a frozen
// node. A frozen node with the process running is still judged after
// Timeout.
func (l *Liveness) runTime(ctx context.Context, call func(context.Context) error) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	step := l.cfg.Timeout / 40
	tick := time.NewTicker(step)
	defer tick.Stop()
	start := time.Now()
	last, late := start, time.Duration(0)
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			now := time.Now()
			if d := now.Sub(last) - step; d > step { // one step of jitter is not starvation
				late += d
				l.starved.Add(d.Seconds())
			}
			if d := l.echoTrip(); d > step {
				late += d
				l.starved.Add(d.Seconds())
			}
			last = time.Now()
			elapsed := last.Sub(start)
			if elapsed > l.cfg.MaxWait || elapsed-late > l.cfg.Timeout {
				// A request this process has not sent yet, or an answer
				// it has not read, is no verdict on the node: it is blamed
				// only for a request it has held for Timeout, real time.
				// Short of that the probe waits on, to MaxWait.
				cause := errProbeTimeout
				if owed, ok := l.answerOwed(start, last); ok && owed < l.cfg.Timeout {
					if elapsed <= l.cfg.MaxWait {
						continue
					}
					cause = errProbeStarved
				}
				stop(cause)
				if err := <-done; err != nil {
					return fmt.Errorf("%w: %w", cause, err)
				}
				return nil // it answered as the deadline came
			}
		}
	}
}

var (
	errProbeTimeout = errors.New("the node did not answer the liveness probe in time")
	errProbeStarved = errors.New("this process was too busy to send the liveness probe's request or read the node's answer in time")
)

// answerOwed is how long the node has owed the probe an answer to what it
// sent since the probe began (see ArrivalConns.Owed); false when the chain
// cannot tell.
func (l *Liveness) answerOwed(since, now time.Time) (time.Duration, bool) {
	o, ok := l.chain.(interface {
		AnswerOwed(since, now time.Time) (time.Duration, bool)
	})
	if !ok {
		return 0, false
	}
	return o.AnswerOwed(since, now)
}

// infoDone releases WaitInfo after the first attempt; call with mu held.
func (l *Liveness) infoDone() {
	select {
	case <-l.infoOnce:
	default:
		close(l.infoOnce)
	}
}

func (l *Liveness) record(height uint32, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		if !l.state.Responding {
			l.log.Info("node answers again", "height", height, "down for", time.Since(l.state.LastOK).Round(time.Second))
			l.down = make(chan struct{})
		}
		l.fails = 0
		l.responding.Set(1)
		l.state.Responding, l.state.Height, l.state.LastOK, l.state.Err = true, height, time.Now(), ""
		return
	}
	l.fails++
	l.failures.Inc()
	l.state.Err = err.Error()
	if l.fails >= l.cfg.Failures && l.state.Responding {
		l.state.Responding = false
		close(l.down) // ends the node calls in flight (api's gate)
		l.responding.Set(0)
		l.log.Warn("node is not responding; node-bound requests fail fast until it answers", "err", err)
	}
}

// Down returns a channel closed once the node is marked unresponsive
// (already closed while it is).
func (l *Liveness) Down() <-chan struct{} {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.down
}

// State returns the last verdict.
func (l *Liveness) State() NodeLiveness {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.state
}

// Check returns nil while the node is considered responsive, else an
// error wrapping ErrNodeUnavailable.
func (l *Liveness) Check() error {
	st := l.State()
	if st.Responding {
		return nil
	}
	if st.LastOK.IsZero() {
		return fmt.Errorf("node does not answer (%s): %w", st.Err, ErrNodeUnavailable)
	}
	return fmt.Errorf("node has not answered since %s (%s): %w", st.LastOK.UTC().Format(time.RFC3339), st.Err, ErrNodeUnavailable)
}

// WaitInfo waits (at most until ctx ends) for the first chain info
// attempt, so that a status asked right at startup has the node's part.
func (l *Liveness) WaitInfo(ctx context.Context) {
	select {
	case <-l.infoOnce:
	case <-ctx.Done():
	}
}
