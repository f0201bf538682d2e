// Package nodeproc supervises the node processes the test kits run (btcd
// in tools/regtest, litecoind in tools/ltcregtest): it starts one process
// at a time, waits until it answers, tells whether it is still running,
// and stops it cleanly with a kill as the fallback. It keeps the tail of
// the process's output for error messages.
package nodeproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WithFreshPorts runs start, which makes a node on ports from FreePort and
// launches it, up to three times: a probed port is released before the
// node binds it, so another process may take it first, which the node's
// output tells by bindErr. It returns the started node or the last error.
func WithFreshPorts[N any](start func() (N, *Supervisor, error), bindErr string) (N, error) {
	for attempt := 0; ; attempt++ {
		n, s, err := start()
		if err == nil {
			return n, nil
		}
		if attempt == 2 || s == nil || !strings.Contains(s.Logs.String(), bindErr) {
			var none N
			return none, err
		}
	}
}

// Ready says how to wait for a started process: Probe is called every
// Every, each call bounded by ProbeTimeout, until it succeeds, the process
// exits, or Timeout passes.
type Ready struct {
	Probe        func(ctx context.Context) error
	Timeout      time.Duration
	Every        time.Duration
	ProbeTimeout time.Duration
}

// Supervisor runs one process at a time. Pkg and Name prefix its errors
// ("regtest: btcd ..."); Logs receives the process's output when the
// caller points the command's Stdout and Stderr at it.
type Supervisor struct {
	Pkg, Name string
	Logs      *TailBuffer

	mu   sync.Mutex
	proc *process
}

type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // valid after done is closed
}

// New returns a supervisor keeping the last tailSize bytes of output.
func New(pkg, name string, tailSize int) *Supervisor {
	return &Supervisor{Pkg: pkg, Name: name, Logs: &TailBuffer{Max: tailSize}}
}

// Launch starts cmd (bound to this process's life where the system allows)
// and waits until it is ready; on failure the process is killed and the
// error, which names addr, ends with the tail of its output.
func (s *Supervisor) Launch(ctx context.Context, cmd *exec.Cmd, addr string, r Ready) error {
	bindToParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start %s: %w", s.Pkg, s.Name, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	if err := s.waitReady(ctx, p, r); err != nil {
		s.Kill()
		return fmt.Errorf("%s: %s %s not ready: %w\n--- %s output (tail) ---\n%s",
			s.Pkg, s.Name, addr, err, s.Name, s.LogTail(40))
	}
	return nil
}

func (s *Supervisor) waitReady(ctx context.Context, p *process, r Ready) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	t := time.NewTicker(r.Every)
	defer t.Stop()
	for {
		probeCtx, probeCancel := context.WithTimeout(ctx, r.ProbeTimeout)
		err := r.Probe(probeCtx)
		probeCancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %w", s.Name, p.err)
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// running returns the live process or nil.
func (s *Supervisor) running() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	select {
	case <-s.proc.done:
		return nil
	default:
		return s.proc
	}
}

// Running reports whether the process is alive.
func (s *Supervisor) Running() bool { return s.running() != nil }

// Pid is the running process's id, 0 while none runs.
func (s *Supervisor) Pid() int {
	if p := s.running(); p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// Stop asks the process to exit with request (e.g. an RPC stop), or with
// the signal fallback when request fails, and waits up to timeout for it;
// past that it is killed and an error says so. Stopping when nothing runs
// is a no-op.
func (s *Supervisor) Stop(request func() error, fallback os.Signal, timeout time.Duration) error {
	p := s.running()
	if p == nil {
		return nil
	}
	if err := request(); err != nil {
		_ = p.cmd.Process.Signal(fallback) // it may have exited already: the wait below tells
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		s.Kill()
		return fmt.Errorf("%s: %s did not stop within %v; killed", s.Pkg, s.Name, timeout)
	}
}

// Kill terminates the process with SIGKILL (an unclean shutdown) and waits
// for it.
func (s *Supervisor) Kill() {
	if p := s.running(); p != nil {
		_ = p.cmd.Process.Kill() // it may have exited already: the wait below tells
		<-p.done
	}
}

// Signal sends sig to the running process; it fails when none runs.
func (s *Supervisor) Signal(sig os.Signal) error {
	p := s.running()
	if p == nil {
		return errors.New(s.Pkg + ": " + s.Name + " is not running")
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%s: signal %v: %w", s.Pkg, sig, err)
	}
	return nil
}

// LogTail returns at most the given number of last lines of the output.
func (s *Supervisor) LogTail(lines int) string {
	parts := strings.Split(strings.TrimRight(s.Logs.String(), "\n"), "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

// TailBuffer keeps the last Max bytes written to it.
type TailBuffer struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.Max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
