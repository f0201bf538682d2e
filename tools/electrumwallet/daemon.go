// Package electrumwallet drives the real Electrum wallet (Debian's
// `electrum` package) headless on regtest: it starts the wallet's daemon in
// a private data directory, connected to one Electrum server only (or
// offline), and calls the daemon's JSON-RPC interface, the interface the
// `electrum` command line itself uses, to restore wallets, wait until they
// are synchronized, read their balance and history, and pay.
package electrumwallet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// Options configure a daemon.
type Options struct {
	// Dir is the daemon's private data directory (created if missing).
	Dir string
	// Server is the host:port of the Electrum TCP server the wallet uses,
	// and the only one; empty runs the daemon offline.
	Server string
	// Bin is the electrum executable; default "electrum" on the PATH.
	Bin string
	// Log receives the daemon's verbose log; nil runs it quiet.
	Log io.Writer
}

// Daemon is a running Electrum daemon.
type Daemon struct {
	cmd    *exec.Cmd
	url    string
	user   string
	pass   string
	dir    string
	done   chan error
	nextID atomic.Int64
	client *http.Client
}

// Find returns the path of the electrum executable, or an error saying
// how to install it.
func Find(bin string) (string, error) {
	if bin == "" {
		bin = "electrum"
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("electrumwallet: %s not found (apt-get install electrum): %w", bin, err)
	}
	return p, nil
}

// Start writes the daemon's configuration (RPC credentials and port, the
// one server, no auto-connect) and starts `electrum --regtest daemon` in
// the foreground as a child process, returning once its RPC answers.
func Start(ctx context.Context, o Options) (*Daemon, error) {
	bin, err := Find(o.Bin)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	d := &Daemon{url: "http://127.0.0.1:" + strconv.Itoa(port) + "/", user: "ewallet", pass: "ewallet-rpc",
		dir: o.Dir, done: make(chan error, 1), client: &http.Client{Timeout: 60 * time.Second}}
	// --regtest keeps its configuration in <dir>/regtest/config.
	cfg := map[string]any{
		"rpcuser": d.user, "rpcpassword": d.pass, "rpchost": "127.0.0.1", "rpcport": port,
		"auto_connect": false, "check_updates": false, "use_gossip": false, "dont_show_testnet_warning": true,
	}
	args := []string{"--regtest", "-D", o.Dir, "daemon"}
	if o.Log != nil {
		args = []string{"--regtest", "-D", o.Dir, "-v", "daemon"} // its log is kept only for diagnosis
	}
	if o.Server != "" {
		cfg["oneserver"], cfg["server"] = true, o.Server+":t"
		args = append(args, "--oneserver", "--server", o.Server+":t")
	} else {
		args = append(args, "--offline")
	}
	if err := writeConfig(filepath.Join(o.Dir, "regtest"), cfg); err != nil {
		return nil, err
	}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Env = append(os.Environ(), "HOME="+o.Dir) // nothing of the user's ~/.electrum
	if o.Log != nil {
		d.cmd.Stdout, d.cmd.Stderr = o.Log, o.Log
	}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("electrumwallet: start %s: %w", bin, err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	if err := d.waitRPC(ctx, 60*time.Second); err != nil {
		d.kill()
		return nil, err
	}
	return d, nil
}

func writeConfig(dir string, cfg map[string]any) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("electrumwallet: %w", err)
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), data, 0o600); err != nil {
		return fmt.Errorf("electrumwallet: write config: %w", err)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("electrumwallet: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitRPC polls the daemon's ping until it answers or the process exits.
func (d *Daemon) waitRPC(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-d.done:
			d.done <- err
			return fmt.Errorf("electrumwallet: daemon exited before answering: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		var pong bool
		if last = d.Call(ctx, "ping", nil, &pong); last == nil {
			return nil
		}
	}
	return fmt.Errorf("electrumwallet: daemon RPC did not answer in %v: %w", timeout, last)
}

// RPCError is an error the daemon returned for a call.
type RPCError struct {
	Method  string
	Code    int
	Message string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("electrum %s: %s (code %d)", e.Method, e.Message, e.Code)
}

// Call calls a daemon command with named parameters and decodes its result
// into out (which may be nil).
func (d *Daemon) Call(ctx context.Context, method string, params map[string]any, out any) error {
	if params == nil {
		params = map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": d.nextID.Add(1), "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(d.user, d.pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("electrum %s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("electrum %s: %w", method, err)
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("electrum %s: HTTP %d: %q: %w", method, resp.StatusCode, truncate(data, 200), err)
	}
	if r.Error != nil {
		return &RPCError{Method: method, Code: r.Error.Code, Message: r.Error.Message}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return fmt.Errorf("electrum %s: result %q: %w", method, truncate(r.Result, 200), err)
	}
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Stop asks the daemon to stop and waits for it to exit, killing it after
// 20 seconds.
func (d *Daemon) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	callErr := d.Call(ctx, "stop", nil, nil)
	select {
	case err := <-d.done:
		d.done <- err
		return nil
	case <-time.After(20 * time.Second):
		d.kill()
		return fmt.Errorf("electrumwallet: daemon did not stop (stop: %v); killed", callErr)
	}
}

// kill ends the daemon process (only the one this package started).
func (d *Daemon) kill() {
	if d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Kill()
	select {
	case err := <-d.done:
		d.done <- err
	case <-time.After(5 * time.Second):
	}
}

// Exited reports whether the daemon process has exited.
func (d *Daemon) Exited() bool {
	select {
	case err := <-d.done:
		d.done <- err
		return true
	default:
		return false
	}
}

var errNotConnected = errors.New("not connected")
