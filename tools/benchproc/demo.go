package benchproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// StartDemo runs blockbook for the demos (make run, make run-eth): cfg
// written to dir/blockchaincfg.json, the index in dir/index, -sync on the
// given addresses, its log on stderr. stop ends it (SIGTERM, SIGKILL after
// 15 s); exited reports its end.
func StartDemo(bin, dir, public, internal string, cfg map[string]any, extra ...string) (exited <-chan error, stop func(), err error) {
	cfgPath := filepath.Join(dir, "blockchaincfg.json")
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(cfgPath, data, 0o644); err != nil {
		return nil, nil, err
	}
	args := append([]string{"-blockchaincfg=" + cfgPath, "-datadir=" + filepath.Join(dir, "index"), "-sync",
		"-public=" + public, "-internal=" + internal}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	errc, finished := make(chan error, 1), make(chan struct{})
	go func() { errc <- cmd.Wait(); close(finished) }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-finished:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	return errc, stop, nil
}

// WaitSynced polls base's status until the index is in sync at height,
// failing if the process exits or ctx ends first.
func WaitSynced(ctx context.Context, base string, height uint32, exited <-chan error) error {
	for !Synced(base, height, false) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exited:
			return fmt.Errorf("blockbook exited: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// Every calls step(n), n = 0, 1, ..., once per interval, until ctx ends
// (nil), blockbook exits or a step fails (an error). With interval <= 0 it
// only waits for one of the ends.
func Every(ctx context.Context, interval time.Duration, exited <-chan error, step func(n int64) error) error {
	var tick <-chan time.Time // nil: never fires
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for n := int64(0); ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case err := <-exited:
			return fmt.Errorf("blockbook exited: %w", err)
		case <-tick:
		}
		if err := step(n); err != nil {
			return err
		}
	}
}
