// Package ltcregtest drives a real litecoind (Litecoin Core 0.21.2.1, as
// Debian ships it) in regtest mode for the test suite and the demo: it
// starts and stops the node, generates a chain of wallet transactions of
// every script type with MWEB peg-ins and peg-outs (scenario.go), and
// computes the ledger an explorer must show from the node's own decoding
// of its blocks (ledger.go), so the oracle shares no code with the indexer.
package ltcregtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/tools/nodeproc"
	"github.com/openexplorer/blockbook/tools/regtest"
)

const (
	rpcUser = "ltcregtest"
	rpcPass = "ltcregtest"

	readyTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
	logTailSize  = 32 << 10
)

// Options configures a litecoind started by Start.
type Options struct {
	// Dir is the data directory (tests pass t.TempDir()). It may hold a
	// copy of another node's directory (see CopyDir): the chain and the
	// wallets in it are reused.
	Dir string
	// Listen opens a P2P listener on 127.0.0.1 (P2PAddr).
	Listen bool
	// Wallets are loaded at startup (they must exist in Dir).
	Wallets []string
	// ExtraArgs are appended to litecoind's command line.
	ExtraArgs []string
}

// Node is a running litecoind -regtest. The embedded client talks to its
// RPC server without a wallet; Wallet returns one bound to a wallet.
type Node struct {
	*regtest.Client
	RPCURL  string // http://127.0.0.1:port
	RPCUser string
	RPCPass string
	P2PAddr string // 127.0.0.1:port, empty unless Options.Listen
	Dir     string

	args    []string
	proc    *nodeproc.Supervisor
	mu      sync.Mutex // guards wallets
	wallets map[string]*regtest.Client
}

// LitecoindPath finds the litecoind binary (Debian's package installs it
// on PATH; scripts/install-deps.sh installs the package).
func LitecoindPath() (string, error) {
	p, err := exec.LookPath("litecoind")
	if err != nil {
		return "", fmt.Errorf("ltcregtest: litecoind not found (install Debian's litecoind: scripts/install-deps.sh): %w", err)
	}
	return p, nil
}

// Require makes t fail when litecoind is missing under CI=true (CI must run
// these tests) and skips it otherwise.
func Require(t testing.TB) {
	t.Helper()
	if _, err := LitecoindPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// Start launches litecoind and waits until its RPC server answers.
func Start(ctx context.Context, o Options) (*Node, error) {
	if o.Dir == "" {
		return nil, errors.New("ltcregtest: Options.Dir is required")
	}
	bin, err := LitecoindPath()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("ltcregtest: %w", err)
	}
	return nodeproc.WithFreshPorts(func() (*Node, *nodeproc.Supervisor, error) {
		n, err := newNode(o)
		if err != nil {
			return nil, nil, err
		}
		return n, n.proc, n.launch(ctx, bin)
	}, "Unable to bind")
}

func newNode(o Options) (*Node, error) {
	rpcPort, err := nodeproc.FreePort()
	if err != nil {
		return nil, fmt.Errorf("ltcregtest: %w", err)
	}
	n := &Node{
		RPCURL: "http://127.0.0.1:" + strconv.Itoa(rpcPort), RPCUser: rpcUser, RPCPass: rpcPass,
		Dir: o.Dir, proc: nodeproc.New("ltcregtest", "litecoind", logTailSize), wallets: map[string]*regtest.Client{},
	}
	n.Client = regtest.NewClient(n.RPCURL, rpcUser, rpcPass)
	args := []string{
		"-regtest", "-server", "-datadir=" + o.Dir, "-printtoconsole", "-txindex",
		"-rpcuser=" + rpcUser, "-rpcpassword=" + rpcPass,
		"-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1", "-rpcport=" + strconv.Itoa(rpcPort),
		// Wallet sends need a fee rate before the node has seen any fees.
		"-fallbackfee=0.0001",
		// An indexer's sync and mempool workers plus the test's own calls.
		"-rpcthreads=16", "-rpcworkqueue=256",
		"-dnsseed=0", "-discover=0", "-listenonion=0", "-upnp=0",
		// A small keypool: creating a wallet with the default 1000 keys
		// takes seconds.
		"-keypool=16",
		// Regtest checks the whole mempool after each block by default;
		// 0.21.2.1's check aborts the node when a reorg leaves an MWEB tx
		// whose input was orphaned in the mempool (its block assembler
		// skips such txs). Mainnet nodes run without the check.
		"-checkmempool=0",
	}
	if o.Listen {
		p2pPort, err := nodeproc.FreePort()
		if err != nil {
			return nil, fmt.Errorf("ltcregtest: %w", err)
		}
		n.P2PAddr = "127.0.0.1:" + strconv.Itoa(p2pPort)
		args = append(args, "-listen=1", "-bind="+n.P2PAddr, "-port="+strconv.Itoa(p2pPort))
	} else {
		args = append(args, "-listen=0")
	}
	for _, w := range o.Wallets {
		args = append(args, "-wallet="+w)
	}
	args = append(args, o.ExtraArgs...)
	n.args = args
	return n, nil
}

// launch starts the process and waits for RPC readiness; on failure the
// process is killed and the error includes the tail of litecoind's output.
func (n *Node) launch(ctx context.Context, bin string) error {
	cmd := exec.Command(bin, n.args...)
	cmd.Stdout, cmd.Stderr = n.proc.Logs, n.proc.Logs
	return n.proc.Launch(ctx, cmd, n.RPCURL, nodeproc.Ready{
		// Answers -28 (warming up) until the chain and wallets are loaded.
		Probe: func(ctx context.Context) error {
			_, err := n.Call(ctx, "getblockcount")
			return err
		},
		Timeout: readyTimeout, Every: 50 * time.Millisecond, ProbeTimeout: 2 * time.Second,
	})
}

// Stop shuts litecoind down cleanly (RPC stop, so it flushes its chain
// state and wallets) and kills it if it has not exited within a timeout.
// Stopping a stopped node is a no-op.
func (n *Node) Stop() error {
	return n.proc.Stop(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := n.Call(ctx, "stop")
		// litecoind's shutdown waits for open RPC connections.
		n.closeIdle()
		return err
	}, syscall.SIGTERM, stopTimeout) // SIGTERM: litecoind's other clean shutdown
}

// Kill terminates litecoind with SIGKILL and waits for it.
func (n *Node) Kill() {
	n.proc.Kill()
	n.closeIdle()
}

// Wallet returns a client bound to the named loaded wallet.
func (n *Node) Wallet(name string) *regtest.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.wallets[name]
	if c == nil {
		c = regtest.NewClient(n.RPCURL+"/wallet/"+name, n.RPCUser, n.RPCPass)
		n.wallets[name] = c
	}
	return c
}

// closeIdle closes this package's kept-alive RPC connections: litecoind's
// shutdown waits (up to half a minute) for open RPC connections.
func (n *Node) closeIdle() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.CloseIdleConnections()
	for _, c := range n.wallets {
		c.CloseIdleConnections()
	}
}

// LogTail returns at most the given number of last lines of litecoind's output.
func (n *Node) LogTail(lines int) string { return n.proc.LogTail(lines) }

// CopyDir copies a stopped node's data directory src into dst (created),
// so several tests can start nodes from one generated chain.
func CopyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() || d.Name() == ".lock" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("ltcregtest: copy %s: %w", rel, err)
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// BestBlock returns the height and hash of the node's chain tip
// (litecoind has no getbestblock, which the embedded btcd client uses).
func (n *Node) BestBlock(ctx context.Context) (int32, string, error) {
	var h int32
	if err := n.CallResult(ctx, &h, "getblockcount"); err != nil {
		return 0, "", fmt.Errorf("getblockcount: %w", err)
	}
	hash, err := n.BlockHash(ctx, h)
	if err != nil {
		return 0, "", fmt.Errorf("getblockhash: %w", err)
	}
	return h, hash, nil
}
