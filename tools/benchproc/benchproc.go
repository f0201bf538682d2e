// Package benchproc runs the blockbook binary as a child process against a
// regtest node for the benchmark commands (cmd/wsbench, cmd/explorerbench,
// cmd/ethbench), so that what is measured is the real program, over real
// sockets.
package benchproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/internal/promreg"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// Options say what to run and when it counts as ready.
type Options struct {
	Bin  string // the blockbook binary
	Work string // directory for the config, the index and the log
	Node *regtest.Node
	// Config, when set, is written as the blockchaincfg instead of the
	// Bitcoin Regtest one built from Node (which may then be nil): how
	// other chain types (an Ethereum dev node) are run.
	Config map[string]any
	// Workers is blockbook's -workers (default 2).
	Workers int
	Height  uint32 // the node's tip: Start returns once the index reaches it
	// Mempool also waits for the mempool to be in sync.
	Mempool bool
	// Timeout bounds the wait for sync (default 10 minutes).
	Timeout time.Duration
	// Args are extra blockbook flags (e.g. -prof, -electrum=<host:port>).
	Args []string
}

// Process is a running blockbook.
type Process struct {
	Public, Internal string // host:port of the public and internal servers
	LogPath          string
	// PeakAnon and PeakFile are the largest anonymous and file-backed
	// resident sizes seen while waiting for sync (sampled every 50 ms):
	// where the peak RSS went, heaps or the binary's pages.
	PeakAnon, PeakFile int64
	cmd                *exec.Cmd
	done               chan struct{}
}

// Start writes a Regtest config, starts the binary with -sync on free
// loopback ports and waits until it is in sync at o.Height.
func Start(ctx context.Context, o Options) (*Process, error) {
	cfg := filepath.Join(o.Work, "blockchaincfg.json")
	conf := o.Config
	if conf == nil {
		conf = map[string]any{"coin_name": "Regtest", "coin_shortcut": "rBTC", "rpc_url": o.Node.RPCURL,
			"rpc_user": o.Node.RPCUser, "rpc_pass": o.Node.RPCPass, "parse": true, "block_addresses_to_keep": 300}
	}
	data, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		return nil, err
	}
	p := &Process{LogPath: filepath.Join(o.Work, "blockbook.log"), done: make(chan struct{})}
	workers := o.Workers
	if workers <= 0 {
		workers = 2
	}
	if p.Public, err = FreeAddr(); err != nil {
		return nil, err
	}
	if p.Internal, err = FreeAddr(); err != nil {
		return nil, err
	}
	logFile, err := os.Create(p.LogPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{"-blockchaincfg=" + cfg, "-datadir=" + filepath.Join(o.Work, "index"), "-sync",
		"-public=" + p.Public, "-internal=" + p.Internal, "-workers=" + strconv.Itoa(workers)}, o.Args...)
	p.cmd = exec.Command(o.Bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		_ = logFile.Close() // nothing was written to it
		return nil, fmt.Errorf("start %s: %w (build it with `go build -o bin/blockbook .`)", o.Bin, err)
	}
	go func() { _ = p.cmd.Wait(); _ = logFile.Close(); close(p.done) }() // the log is diagnostics only
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	if err := p.waitInSync(ctx, o.Height, o.Mempool, timeout); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, p.LogPath)
	}
	return p, nil
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the child has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the child with SIGTERM, killing it after 30 s.
func (p *Process) Stop() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitInSync polls the status until the index (and the mempool when asked)
// is in sync at height.
func (p *Process) waitInSync(ctx context.Context, height uint32, mempool bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.Exited() {
			return errors.New("blockbook exited")
		}
		anon, file := MemParts(p.Pid())
		p.PeakAnon, p.PeakFile = max(p.PeakAnon, anon), max(p.PeakFile, file)
		if Synced("http://"+p.Public, height, mempool) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("blockbook not in sync at %d within %v", height, timeout)
}

// Synced asks the status endpoint at base whether the index is in sync at
// height or above (and the mempool too, when asked).
func Synced(base string, height uint32, mempool bool) bool {
	var st struct {
		Blockbook struct {
			InSync        bool   `json:"inSync"`
			InSyncMempool bool   `json:"inSyncMempool"`
			BestHeight    uint32 `json:"bestHeight"`
		} `json:"blockbook"`
	}
	resp, err := http.Get(base + "/api/v2")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return false
	}
	b := st.Blockbook
	return b.InSync && (b.InSyncMempool || !mempool) && b.BestHeight >= height
}

// Metrics returns the internal server's samples whose names start with
// prefix (histogram buckets left out), keyed by name with labels.
func (p *Process) Metrics(prefix string) map[string]float64 {
	out := map[string]float64{}
	c := http.Client{Timeout: 10 * time.Second} // a stuck process must not stall the bench
	resp, err := c.Get("http://" + p.Internal + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := promreg.WithoutCoin(sc.Text())
		if !strings.HasPrefix(line, prefix) || strings.Contains(line, "_bucket") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				out[line[:i]] = v
			}
		}
	}
	return out
}

// FreeAddr is a loopback address with a port free at the moment of the
// call, for a process about to listen on it.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// RaiseNoFile lifts the open-file soft limit to the hard limit, so that a
// benchmark and the blockbook it starts (which inherits it) can hold many
// connections, and returns the limit.
func RaiseNoFile() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	l.Cur = l.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur
}
