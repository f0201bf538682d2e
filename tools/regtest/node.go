package regtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/tools/nodeproc"
)

const (
	rpcUser = "regtest"
	rpcPass = "regtest"

	readyTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
	logTailSize  = 16 << 10
)

// Options configures a btcd node started by Start.
type Options struct {
	// Dir holds the node's data, logs and HOME (btcd writes ~/.btcd). It is
	// required; tests normally pass t.TempDir().
	Dir string
	// MiningAddr is passed as --miningaddr (only needed for generate/getblocktemplate).
	MiningAddr string
	// TxIndex enables --txindex (getrawtransaction for confirmed txs).
	TxIndex bool
	// Listen opens a P2P listener on 127.0.0.1 (needed as a Connect target).
	Listen bool
	// Host is the loopback IP the node is reached on instead of 127.0.0.1
	// (any 127.x.y.z works on Linux): with DefaultP2PPort, a test gets the
	// regtest default P2P port to itself. RPC goes through a forwarder on
	// Host (see startRPCProxy).
	Host string
	// DefaultP2PPort makes Listen use regtest's default P2P port (18444)
	// instead of a free one, as a node run with its defaults would.
	DefaultP2PPort bool
	// ExtraArgs are appended to btcd's command line, e.g. "--addrindex".
	ExtraArgs []string
	// Stdout, if set, receives btcd's stdout and stderr.
	Stdout io.Writer
}

// Node is a running btcd regtest process. The embedded Client talks to its
// RPC server.
type Node struct {
	*Client
	RPCURL  string // http://127.0.0.1:port
	RPCUser string
	RPCPass string
	P2PAddr string // 127.0.0.1:port, empty unless Options.Listen
	Dir     string

	bin  string
	args []string
	opts Options
	proc *nodeproc.Supervisor

	proxyMu sync.Mutex
	proxy   net.Listener // the RPC forwarder on Options.Host, while running
	rpcPort int
}

// Start launches btcd and waits until its RPC server answers.
func Start(ctx context.Context, o Options) (*Node, error) {
	if o.Dir == "" {
		return nil, errors.New("regtest: Options.Dir is required")
	}
	bin, err := BtcdPath()
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"home", "data", "logs"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("regtest: %w", err)
		}
	}
	return nodeproc.WithFreshPorts(func() (*Node, *nodeproc.Supervisor, error) {
		n, err := newNode(bin, o)
		if err != nil {
			return nil, nil, err
		}
		if err := n.launch(ctx); err != nil {
			n.closeProxy()
			return n, n.proc, err
		}
		return n, n.proc, nil
	}, "address already in use")
}

func newNode(bin string, o Options) (*Node, error) {
	rpcPort, err := nodeproc.FreePort()
	if err != nil {
		return nil, fmt.Errorf("regtest: %w", err)
	}
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	n := &Node{
		RPCURL:  "http://" + host + ":" + strconv.Itoa(rpcPort),
		RPCUser: rpcUser,
		RPCPass: rpcPass,
		Dir:     o.Dir,
		bin:     bin,
		opts:    o,
		proc:    nodeproc.New("regtest", "btcd", logTailSize),
	}
	n.Client = NewClient(n.RPCURL, n.RPCUser, n.RPCPass)
	n.rpcPort = rpcPort
	args := []string{
		"--regtest", "--notls", "--nodnsseed",
		"--rpcuser=" + rpcUser, "--rpcpass=" + rpcPass,
		"--rpclisten=127.0.0.1:" + strconv.Itoa(rpcPort),
		"--datadir=" + filepath.Join(o.Dir, "data"),
		"--logdir=" + filepath.Join(o.Dir, "logs"),
		// Peers on a test network are often idle; don't drop them as stalled.
		"--nostalldetect",
		// btcd serves 10 RPC clients by default; an indexer's sync and
		// mempool workers plus the test's own client can need more.
		"--rpcmaxclients=100",
	}
	if o.Listen {
		p2pPort, err := nodeproc.FreePort()
		if err != nil {
			return nil, fmt.Errorf("regtest: %w", err)
		}
		if o.DefaultP2PPort {
			p2pPort = 18444
		}
		n.P2PAddr = host + ":" + strconv.Itoa(p2pPort)
		args = append(args, "--listen="+n.P2PAddr)
	} else {
		args = append(args, "--nolisten")
	}
	if o.TxIndex {
		args = append(args, "--txindex")
	}
	if o.MiningAddr != "" {
		args = append(args, "--miningaddr="+o.MiningAddr)
	}
	args = append(args, o.ExtraArgs...)
	n.args = args
	return n, nil
}

// launch starts the process and waits for RPC readiness; on failure the
// process is killed and the error includes the tail of btcd's output.
func (n *Node) launch(ctx context.Context) error {
	if err := n.openProxy(); err != nil {
		return err
	}
	cmd := exec.Command(n.bin, n.args...)
	cmd.Env = append(withoutEnv(os.Environ(), "HOME"), "HOME="+filepath.Join(n.Dir, "home"))
	var out io.Writer = n.proc.Logs
	if n.opts.Stdout != nil {
		out = io.MultiWriter(n.proc.Logs, n.opts.Stdout)
	}
	cmd.Stdout, cmd.Stderr = out, out
	return n.proc.Launch(ctx, cmd, n.RPCURL, nodeproc.Ready{
		Probe: func(ctx context.Context) error {
			_, err := n.Call(ctx, "getblockcount")
			return err
		},
		Timeout: readyTimeout, Every: 20 * time.Millisecond, ProbeTimeout: time.Second,
	})
}

// openProxy starts the RPC forwarder of a node on Options.Host.
func (n *Node) openProxy() error {
	n.proxyMu.Lock()
	defer n.proxyMu.Unlock()
	if n.proxy != nil || n.opts.Host == "" || n.opts.Host == "127.0.0.1" {
		return nil
	}
	port := strconv.Itoa(n.rpcPort)
	ln, err := startRPCProxy(n.opts.Host+":"+port, "127.0.0.1:"+port)
	if err != nil {
		return fmt.Errorf("regtest: %w", err)
	}
	n.proxy = ln
	return nil
}

func (n *Node) closeProxy() {
	n.proxyMu.Lock()
	defer n.proxyMu.Unlock()
	if n.proxy != nil {
		_ = n.proxy.Close()
		n.proxy = nil
	}
}

// Stop shuts btcd down gracefully (RPC stop, so it flushes its database) and
// kills it if it has not exited within a timeout, then closes the RPC
// forwarder (Options.Host). Stopping a stopped node is a no-op.
func (n *Node) Stop() error {
	defer n.closeProxy()
	defer n.http.CloseIdleConnections()
	return n.proc.Stop(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := n.Call(ctx, "stop")
		return err
	}, os.Interrupt, stopTimeout) // SIGINT: btcd's other clean shutdown
}

// Kill terminates btcd with SIGKILL (an unclean shutdown) and waits for it.
func (n *Node) Kill() {
	n.proc.Kill()
	n.http.CloseIdleConnections()
}

// Restart stops the node (gracefully if it is running) and starts it again
// with the same data directory, ports and options.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Stop(); err != nil {
		return err
	}
	return n.launch(ctx)
}

// Connect makes n open a persistent P2P connection to other (which must have
// been started with Listen) and waits until the handshake has completed.
func (n *Node) Connect(ctx context.Context, other *Node) error {
	if other.P2PAddr == "" {
		return errors.New("regtest: Connect target was started without Listen")
	}
	if _, err := n.Call(ctx, "addnode", other.P2PAddr, "add"); err != nil {
		return err
	}
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for {
		var peers []struct {
			Addr    string `json:"addr"`
			Version int32  `json:"version"`
		}
		if err := n.CallResult(ctx, &peers, "getpeerinfo"); err != nil {
			return err
		}
		for _, p := range peers {
			if p.Addr == other.P2PAddr && p.Version > 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("regtest: connect to %s: %w", other.P2PAddr, ctx.Err())
		case <-t.C:
		}
	}
}

// LogTail returns at most the given number of last lines of btcd's stdout/stderr.
func (n *Node) LogTail(lines int) string { return n.proc.LogTail(lines) }

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// Signal sends sig to the running btcd (tests freeze it with SIGSTOP and
// thaw it with SIGCONT); it fails when the node is not running.
func (n *Node) Signal(sig os.Signal) error { return n.proc.Signal(sig) }
