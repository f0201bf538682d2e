package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/apitest"
)

// Bad searches are user errors naming what is wrong, checked before the
// index; an index built without the pushdata index says it is off. (The
// matches themselves are checked end to end, e2e/pushdata_test.go.)
func TestPushdataSearchErrors(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	s := newService(f)
	ctx := context.Background()
	good := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		hashes []string
		want   string
	}{
		{nil, "hashes: give 1 to 1000"},
		{[]string{good, "xyz"}, `hashes[1]: "xyz" is not a sha256`},
		{[]string{good[:62]}, "hashes[0]:"},
		{[]string{good + "00"}, "hashes[0]:"},
		{make([]string, 1001), "hashes: 1001 hashes, at most 1000"},
		{[]string{good, good}, "pushdata index is not enabled"},
	} {
		_, err := s.PushdataSearch(ctx, tc.hashes)
		wantUserError(t, err, tc.want)
	}
}
