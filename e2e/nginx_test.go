package e2e

import (
	"context"
	"testing"

	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/nginxlb"
)

// startNginx runs nginx (tools/nginxlb) in front of the servers
// (host:port) until the test ends; it returns the balancer's base URL.
func startNginx(t testing.TB, servers []string) string {
	t.Helper()
	logs := &syncbuf.Buffer{}
	lb, err := nginxlb.Start(context.Background(), t.TempDir(), servers, logs)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	t.Cleanup(lb.Stop)
	return lb.Base
}
