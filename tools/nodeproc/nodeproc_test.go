package nodeproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The supervisor on real processes (sh): ready once the process has written
// a file, a process that exits first, a clean stop by request, the signal
// fallback, and the kill after the stop timeout.

func fileReady(path string) Ready {
	return Ready{
		Probe: func(context.Context) error {
			_, err := os.Stat(path)
			return err
		},
		Timeout: 10 * time.Second, Every: 10 * time.Millisecond, ProbeTimeout: time.Second,
	}
}

// start runs script in sh with $1 = a file it may create to become ready.
func start(t *testing.T, script string) (*Supervisor, string, error) {
	t.Helper()
	s := New("nodeproc", "sh", 1<<10)
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command("sh", "-c", script, "sh", ready)
	cmd.Stdout, cmd.Stderr = s.Logs, s.Logs
	err := s.Launch(context.Background(), cmd, "test", fileReady(ready))
	t.Cleanup(s.Kill)
	return s, ready, err
}

func TestLaunchAndStop(t *testing.T) {
	// Exits 0 on SIGTERM (the request below "asks" by signalling it).
	s, _, err := start(t, `trap 'echo bye; exit 0' TERM; echo hello; touch "$1"; while :; do sleep 0.05; done`)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Running() || s.Pid() == 0 {
		t.Fatalf("running %v pid %d", s.Running(), s.Pid())
	}
	pid := s.Pid()
	err = s.Stop(func() error { return syscall.Kill(pid, syscall.SIGTERM) }, syscall.SIGKILL, 10*time.Second)
	if err != nil || s.Running() || s.Pid() != 0 {
		t.Fatalf("stop: %v, running %v", err, s.Running())
	}
	if tail := s.LogTail(2); tail != "hello\nbye" {
		t.Fatalf("log tail %q", tail)
	}
	if err := s.Stop(func() error { t.Fatal("request on a stopped process"); return nil }, syscall.SIGKILL, time.Second); err != nil {
		t.Fatalf("stopping a stopped process: %v", err)
	}
	if err := s.Signal(syscall.SIGCONT); err == nil {
		t.Fatal("signal to a stopped process accepted")
	}
}

func TestStopFallbackAndKill(t *testing.T) {
	s, _, err := start(t, `trap 'exit 0' INT; touch "$1"; while :; do sleep 0.05; done`)
	if err != nil {
		t.Fatal(err)
	}
	// The request fails: the fallback signal stops it.
	if err := s.Stop(func() error { return errors.New("no rpc") }, os.Interrupt, 10*time.Second); err != nil || s.Running() {
		t.Fatalf("fallback stop: %v, running %v", err, s.Running())
	}
	// A process that ignores the request is killed after the timeout.
	s, _, err = start(t, `trap '' TERM INT; touch "$1"; while :; do sleep 0.05; done`)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Stop(func() error { return errors.New("no rpc") }, syscall.SIGTERM, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not stop within 300ms; killed") || s.Running() {
		t.Fatalf("stop timeout: %v, running %v", err, s.Running())
	}
}

func TestLaunchFailures(t *testing.T) {
	_, _, err := start(t, `echo "cannot bind" >&2; exit 3`)
	if err == nil || !strings.Contains(err.Error(), "sh exited: exit status 3") || !strings.HasSuffix(err.Error(), "--- sh output (tail) ---\ncannot bind") {
		t.Fatalf("exit before ready: %v", err)
	}
	s := New("nodeproc", "sh", 1<<10)
	r := fileReady(filepath.Join(t.TempDir(), "never"))
	r.Timeout = 200 * time.Millisecond
	cmd := exec.Command("sh", "-c", "sleep 30")
	err = s.Launch(context.Background(), cmd, "test", r)
	if !errors.Is(err, context.DeadlineExceeded) || s.Running() {
		t.Fatalf("never ready: %v, running %v", err, s.Running())
	}
	if err := New("nodeproc", "none", 10).Launch(context.Background(), exec.Command(filepath.Join(t.TempDir(), "missing")), "x", r); err == nil {
		t.Fatal("a missing binary started")
	}
}

func TestTailBuffer(t *testing.T) {
	b := &TailBuffer{Max: 5}
	for _, w := range []string{"abc", "defg", "h"} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatal(n, err)
		}
	}
	if b.String() != "defgh" {
		t.Fatalf("%q", b.String())
	}
}

func TestWithFreshPorts(t *testing.T) {
	port, err := FreePort()
	if err != nil || port <= 0 {
		t.Fatalf("FreePort: %d %v", port, err)
	}
	attempt := func(fails int, msg string) (int, int, error) {
		calls := 0
		n, err := WithFreshPorts(func() (int, *Supervisor, error) {
			calls++
			s := New("nodeproc", "node", 100)
			if calls <= fails {
				_, _ = s.Logs.Write([]byte(msg))
				return calls, s, errors.New("not ready")
			}
			return calls, s, nil
		}, "address already in use")
		return n, calls, err
	}
	if n, calls, err := attempt(2, "bind: address already in use"); err != nil || n != 3 || calls != 3 {
		t.Fatalf("two bind failures then a start: %d after %d calls, %v", n, calls, err)
	}
	if n, calls, err := attempt(3, "bind: address already in use"); err == nil || n != 0 || calls != 3 {
		t.Fatalf("three bind failures: %d after %d calls, %v", n, calls, err)
	}
	if _, calls, err := attempt(1, "some other failure"); err == nil || calls != 1 {
		t.Fatalf("another failure is not retried: %d calls, %v", calls, err)
	}
}
