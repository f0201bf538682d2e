package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// profilePage writes blockbook's CPU profile (its -prof server at prof)
// of seconds spent answering url one request after another: what the
// page's time goes to.
func profilePage(prof, url, out string, seconds int) error {
	var stop atomic.Bool
	done := make(chan error, 1)
	go func() {
		n := 0
		for !stop.Load() {
			if _, _, err := get(url); err != nil {
				done <- err
				return
			}
			n++
		}
		fmt.Printf("profile: %d requests of %s in %d s\n", n, url, seconds)
		done <- nil
	}()
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", prof, seconds))
	stop.Store(true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", resp.Status)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		return fmt.Errorf("profile: the requests did not stop")
	}
}
