package btc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/wire/v2"
)

// P2POff is the p2p_address value that turns P2P block downloads off,
// including the automatic choice of a local node's P2P port.
const P2POff = "none"

// autoP2P decides, on block downloads, whether blocks can come over the
// P2P port of a local node that p2p_address does not name: the network's
// default port on the RPC host. The peer must be the RPC node itself, so
// it is used only if its version message announces the RPC tip's height
// and it serves the tip block by its hash; until then blocks come over
// RPC. A failed check is retried after a backoff (autoRetryFirst doubling
// up to autoRetryMax), since a node that is still starting, catching up
// or out of inbound slots may pass later; only a non-local RPC host is a
// final no. The first reason is logged at info, later ones at debug.
type autoP2P struct {
	rpcHost string // host of rpc_url, without port
	port    string // the network's default P2P port
	net     wire.BitcoinNet
	opts    P2POptions
	now     func() time.Time

	// state is read by every download without a lock; mu is held only by
	// the one caller that checks (the others download over RPC meanwhile)
	// and by close.
	state  atomic.Pointer[autoState]
	mu     sync.Mutex
	closed bool
}

// autoState is a published decision: p2p when verified, else RPC until
// retryAt (never again when final).
type autoState struct {
	p2p     *p2pBlocks
	final   bool
	retryAt time.Time
	backoff time.Duration // the wait after the next failure
	fails   int
}

const (
	autoRetryFirst = 15 * time.Second
	autoRetryMax   = 10 * time.Minute
)

func newAutoP2P(rpcURL, port string, btcnet wire.BitcoinNet, opts P2POptions) *autoP2P {
	u, err := url.Parse(rpcURL)
	if err != nil || port == "" {
		return nil
	}
	a := &autoP2P{rpcHost: u.Hostname(), port: port, net: btcnet, opts: opts, now: time.Now}
	a.state.Store(&autoState{backoff: autoRetryFirst})
	return a
}

// blocks returns the verified P2P downloader, or nil for RPC. It never
// waits: while one caller checks the peer, the others get nil.
func (a *autoP2P) blocks(ctx context.Context, n *Node) *p2pBlocks {
	s := a.state.Load()
	if s.p2p != nil || s.final || a.now().Before(s.retryAt) || !a.mu.TryLock() {
		return s.p2p
	}
	defer a.mu.Unlock()
	if s = a.state.Load(); s.p2p != nil || s.final || a.now().Before(s.retryAt) || a.closed {
		return s.p2p
	}
	addr := net.JoinHostPort(a.rpcHost, a.port)
	p, final, err := a.verify(ctx, n, addr)
	if err != nil && ctx.Err() != nil {
		return nil // cut short: the next download checks again
	}
	if err == nil {
		n.log.Info("blocks are downloaded over the local node's P2P port (auto-detected; p2p_address \"none\" turns this off)", "p2p_address", addr)
		a.state.Store(&autoState{p2p: p})
		return p
	}
	a.state.Store(&autoState{final: final, retryAt: a.now().Add(s.backoff), backoff: min(2*s.backoff, autoRetryMax), fails: s.fails + 1})
	if s.fails > 0 {
		n.log.Debug("the node's P2P port was checked again and not used", "tried", addr, "reason", err, "retry_in", s.backoff)
		return nil
	}
	retry := "retried in " + s.backoff.String()
	if final {
		retry = "not retried"
	}
	n.log.Info("blocks are downloaded over RPC: the node's P2P port was not used (p2p_address not set; logged once)", "tried", addr, "reason", err, "check", retry)
	return nil
}

// verify checks the peer at addr; final says that a failure is for good
// (the RPC host is not local).
func (a *autoP2P) verify(ctx context.Context, n *Node, addr string) (_ *p2pBlocks, final bool, _ error) {
	if err := localHost(ctx, a.rpcHost); err != nil {
		return nil, !errors.Is(err, errLookup), err
	}
	p, err := a.verifyPeer(ctx, n, addr)
	return p, false, err
}

func (a *autoP2P) verifyPeer(ctx context.Context, n *Node, addr string) (*p2pBlocks, error) {
	// Dial first: without a peer there, no RPC call is spent.
	c, err := dialPeer(ctx, addr, a.net, a.opts)
	if err != nil {
		return nil, err
	}
	height, hash, err := n.BestBlock(ctx)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("RPC tip: %w", err)
	}
	if c.startHeight != int32(height) {
		// The tip may have moved between the two questions: ask again.
		if height, hash, err = n.BestBlock(ctx); err != nil || c.startHeight != int32(height) {
			c.close()
			return nil, fmt.Errorf("the peer's best height %d is not the RPC tip's %d: another node", c.startHeight, height)
		}
	}
	if _, err := c.getBlock(ctx, internalHash(hash)); err != nil {
		c.close()
		return nil, fmt.Errorf("the peer does not serve the RPC tip %s: %w", hash, err)
	}
	p := newP2PBlocks(addr, a.net, a.opts, n.log)
	p.idle <- c
	return p, nil
}

// errLookup marks a failed name lookup of the RPC host, which may pass later.
var errLookup = errors.New("lookup")

// localHost accepts a loopback or private-network RPC host (a name must
// resolve only to such addresses): a node elsewhere is not assumed to
// expose its P2P port to us.
func localHost(ctx context.Context, host string) error {
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return fmt.Errorf("%w: RPC host %q: %w", errLookup, host, err)
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	if len(ips) == 0 {
		return fmt.Errorf("RPC host %q has no address", host)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() && !ip.IsPrivate() {
			return errors.New("the RPC host is not local (loopback or private network)")
		}
	}
	return nil
}

func (a *autoP2P) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if s := a.state.Swap(&autoState{final: true}); s.p2p != nil {
		s.p2p.close()
	}
}
