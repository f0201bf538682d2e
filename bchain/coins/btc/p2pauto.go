package btc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"

	"github.com/btcsuite/btcd/wire/v2"
)

// P2POff is the p2p_address value that turns P2P block downloads off,
// including the automatic choice of a local node's P2P port.
const P2POff = "none"

// autoP2P decides once, on the first block download, whether blocks can
// come over the P2P port of a local node that p2p_address does not name:
// the network's default port on the RPC host. The peer must be the RPC
// node itself, so it is used only if its version message announces the
// RPC tip's height and it serves the tip block by its hash; on any doubt
// blocks come over RPC, and the reason is logged once.
type autoP2P struct {
	rpcHost string // host of rpc_url, without port
	port    string // the network's default P2P port
	net     wire.BitcoinNet
	opts    P2POptions

	mu      sync.Mutex
	decided bool
	p2p     *p2pBlocks // nil when decided for RPC
}

func newAutoP2P(rpcURL, port string, btcnet wire.BitcoinNet, opts P2POptions) *autoP2P {
	u, err := url.Parse(rpcURL)
	if err != nil || port == "" {
		return nil
	}
	return &autoP2P{rpcHost: u.Hostname(), port: port, net: btcnet, opts: opts}
}

// blocks returns the verified P2P downloader, or nil for RPC. Concurrent
// callers wait for the one check; a check cut short by ctx is retried.
func (a *autoP2P) blocks(ctx context.Context, n *Node) *p2pBlocks {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.decided {
		return a.p2p
	}
	addr := net.JoinHostPort(a.rpcHost, a.port)
	p, err := a.verify(ctx, n, addr)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	a.decided = true
	if err != nil {
		n.log.Info("blocks are downloaded over RPC: the node's P2P port was not used (p2p_address not set; logged once)", "tried", addr, "reason", err)
		return nil
	}
	n.log.Info("blocks are downloaded over the local node's P2P port (auto-detected; p2p_address \"none\" turns this off)", "p2p_address", addr)
	a.p2p = p
	return p
}

func (a *autoP2P) verify(ctx context.Context, n *Node, addr string) (*p2pBlocks, error) {
	if err := localHost(ctx, a.rpcHost); err != nil {
		return nil, err
	}
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

// localHost accepts a loopback or private-network RPC host (a name must
// resolve only to such addresses): a node elsewhere is not assumed to
// expose its P2P port to us.
func localHost(ctx context.Context, host string) error {
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return fmt.Errorf("RPC host %q: %w", host, err)
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
	if a.p2p != nil {
		a.p2p.close()
	}
}
