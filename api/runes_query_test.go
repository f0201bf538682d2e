package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/apitest"
)

// Bad rune ids and names are user errors checked before the index; an
// index built without the Runes index says it is off. (Answers are
// checked on a runes chain in db/optional/runes and end to end.)
func TestRuneErrors(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	s := newService(f)
	ctx := context.Background()
	for _, tc := range []struct{ q, want string }{
		{"", `rune "": not an id`},
		{"abc", `rune "abc": not an id`},
		{"A••B", `rune "A••B": not an id (block:tx) nor a name: double spacer`},
		{"•A", `rune "•A": not an id (block:tx) nor a name: leading spacer`},
		{"A•", `rune "A•": not an id (block:tx) nor a name: trailing spacer`},
		{strings.Repeat("Z", 40), `rune "ZZZZ`},
		{"840000:x", `rune "840000:x": not an id`},
		{"840000:3", "runes index is not enabled"},
		{"UNCOMMON•GOODS", "runes index is not enabled"},
	} {
		_, err := s.Rune(ctx, tc.q)
		wantUserError(t, err, tc.want)
	}
}
