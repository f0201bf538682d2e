package electrum

import (
	"context"
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// A node that does not answer is the daemon's trouble, said in words, not
// an internal error of the server.
func TestWireErrorNodeDown(t *testing.T) {
	s := &Server{}
	cases := []struct {
		err  error
		code int
	}{
		{fmt.Errorf("estimatefee: %w", bchain.ErrNodeUnavailable), codeDaemonError},
		{fmt.Errorf("get_history: %w", api.ErrTooManyTxs), codeBadRequest},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), codeInternal},
	}
	for _, c := range cases {
		got := s.wireError("m", c.err)
		if got.Code != c.code {
			t.Errorf("%v: code %d, want %d (%q)", c.err, got.Code, c.code, got.Message)
		}
	}
	if got := s.wireError("m", bchain.ErrNodeUnavailable); got.Message != "the blockchain node is not responding" {
		t.Errorf("node down message %q", got.Message)
	}
}
