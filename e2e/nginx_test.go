package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/internal/syncbuf"
)

// nginxConf balances the public ports of blockbook processes, websocket
// included. /health stays on the internal ports: nginx (open source) has
// passive checks only, so a server is taken out for fail_timeout after a
// refused connection, a timeout or a 502/503/504 answer, and the request
// goes to the next one.
const nginxConf = `worker_processes 1;
daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	map $http_upgrade $connection_upgrade { default upgrade; '' close; }
	upstream blockbook {
%[2]s		keepalive 32;
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

// startNginx runs nginx (the Debian package) in the foreground with its
// own prefix, config, pid and temp paths in a temporary directory, in
// front of the servers (host:port); it returns the balancer's base URL.
func startNginx(t testing.TB, servers []string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err2 := os.Stat("/usr/sbin/nginx"); err2 != nil {
			t.Fatalf("nginx is not installed (scripts/install-deps.sh test installs it): %v", err)
		}
		bin = "/usr/sbin/nginx"
	}
	dir := t.TempDir()
	var ups strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&ups, "\t\tserver %s max_fails=1 fail_timeout=2s;\n", s)
	}
	addr := freePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, dir, ups.String(), addr), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", "stderr")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("nginx: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	base := "http://" + addr
	deadline := time.Now().Add(waitFor)
	for {
		if code, _ := tryGet(base+"/api/v2", nil); code == 200 {
			return base
		}
		select {
		case <-done:
			t.Fatalf("nginx exited: %s", logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not answer: %s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
