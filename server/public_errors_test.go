package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// REST errors: mistakes 400 with their text; an unreachable node and a
// request over its time limit 503, each said as what it is (a slow query
// is not the node's fault); anything else 500 without details.
func TestRESTErrorsAreMapped(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		body   string
	}{
		{&api.Error{Msg: "Invalid address"}, 400, "Invalid address"},
		{fmt.Errorf("rpc: %w: dial secret-detail", bchain.ErrNodeUnavailable), 503, "the blockchain node is not responding"},
		{fmt.Errorf("rpc: %w: %w", bchain.ErrNodeUnavailable, context.DeadlineExceeded), 503, "the blockchain node is not responding"},
		{fmt.Errorf("xpub secret-detail: %w", context.DeadlineExceeded), 503, "the request took too long"},
		{errors.New("corrupt row secret-detail"), 500, "Internal server error"},
	} {
		var logs bytes.Buffer
		p := NewPublic(&fakeService{}, PublicConfig{}, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
		rec := httptest.NewRecorder()
		code := p.writeError(rec, httptest.NewRequest("GET", "/api/v2/xpub/x", nil), "xpub", c.err)
		body := rec.Body.String()
		if code != c.status || rec.Code != c.status || !strings.Contains(body, c.body) || strings.Contains(body, "secret") {
			t.Errorf("%v: %d %s, want %d with %q", c.err, rec.Code, body, c.status, c.body)
		}
	}
}
