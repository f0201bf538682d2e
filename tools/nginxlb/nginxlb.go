// Package nginxlb runs nginx (the Debian package) as a load balancer in
// front of blockbook processes, for the replica test and benchmark: in the
// foreground, as one process, with its config, pid and temp paths in a
// directory of its own, so that nothing outside that directory changes.
package nginxlb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"
)

// conf balances the public ports of blockbook processes, websocket
// included. nginx's open-source edition checks servers passively only: a
// server is taken out for fail_timeout after a refused connection, a
// timeout or a 502/503/504 answer, and the request goes to the next one.
// /health (on the internal ports) is for balancers with active checks.
const conf = `worker_processes 1;
daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	map $http_upgrade $connection_upgrade { default upgrade; '' close; }
	upstream blockbook {
%[2]s		keepalive 64;
	}
	server {
		listen %[3]s;
		location / {
			proxy_pass http://blockbook;
			proxy_http_version 1.1;
			proxy_set_header Upgrade $http_upgrade;
			proxy_set_header Connection $connection_upgrade;
			proxy_set_header X-Real-Ip $remote_addr;
			proxy_read_timeout 1h;
			proxy_next_upstream error timeout http_502 http_503 http_504;
		}
	}
}
`

// LB is a running nginx.
type LB struct {
	Base string // http://host:port of the balancer
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs nginx in dir (created if needed), listening on a free
// loopback port, in front of servers (host:port each), and waits until it
// answers /api/v2. log receives nginx's own messages.
func Start(ctx context.Context, dir string, servers []string, log io.Writer) (*LB, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx" // not on a non-root user's PATH
		if _, err2 := os.Stat(bin); err2 != nil {
			return nil, fmt.Errorf("nginx is not installed (scripts/install-deps.sh test installs it): %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var ups strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&ups, "\t\tserver %s max_fails=1 fail_timeout=2s;\n", s)
	}
	addr, err := benchproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, fmt.Appendf(nil, conf, dir, ups.String(), addr), 0o644); err != nil {
		return nil, err
	}
	lb := &LB{Base: "http://" + addr, done: make(chan struct{})}
	lb.cmd = exec.Command(bin, "-p", dir, "-c", path, "-e", "stderr")
	lb.cmd.Stdout, lb.cmd.Stderr = log, log
	if err := lb.cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	go func() { _ = lb.cmd.Wait(); close(lb.done) }()
	if err := lb.waitReady(ctx); err != nil {
		lb.Stop()
		return nil, err
	}
	return lb, nil
}

func (lb *LB) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(lb.Base + "/api/v2"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-lb.done:
			return errors.New("nginx exited at start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("nginx does not answer /api/v2")
}

// Pid is nginx's process id (its only process: master_process off).
func (lb *LB) Pid() int { return lb.cmd.Process.Pid }

// Stop ends nginx (SIGTERM: a fast shutdown) and waits for it.
func (lb *LB) Stop() {
	_ = lb.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-lb.done:
	case <-time.After(10 * time.Second):
		_ = lb.cmd.Process.Kill()
		<-lb.done
	}
}
