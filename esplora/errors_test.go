package esplora

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// A node that does not answer gives a 503 that says so, not a 500.
func TestClassifyNodeDown(t *testing.T) {
	s := &Server{}
	r := httptest.NewRequest(http.MethodGet, "/api/fee-estimates", nil)
	cases := []struct {
		err    error
		status int
	}{
		{fmt.Errorf("fees: %w", bchain.ErrNodeUnavailable), http.StatusServiceUnavailable},
		{fmt.Errorf("fees: %w", context.DeadlineExceeded), http.StatusServiceUnavailable},
	}
	for _, c := range cases {
		if got := s.classify(r, c.err); got.status != c.status {
			t.Errorf("%v: status %d, want %d (%q)", c.err, got.status, c.status, got.msg)
		}
	}
}
