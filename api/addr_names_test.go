package api

import (
	"encoding/binary"
	"slices"
	"testing"
)

// The cache answers what render answers, keeps the two kinds apart, lets
// long scripts through uncached and never holds more than addrNamesMax.
func TestAddrNamesBounded(t *testing.T) {
	var c addrNames
	calls := 0
	render := func(s string) func() ([]string, bool) {
		return func() ([]string, bool) { calls++; return []string{s}, true }
	}
	b := []byte{0x00, 0x14, 1, 2, 3}
	if a, ok := c.get(nameOfDesc, b, render("desc")); !ok || !slices.Equal(a, []string{"desc"}) {
		t.Fatalf("first get: %v %v", a, ok)
	}
	if a, _ := c.get(nameOfDesc, b, render("other")); a[0] != "desc" || calls != 1 {
		t.Fatalf("cached get: %v after %d renders, want desc after 1", a, calls)
	}
	if a, _ := c.get(nameOfScript, b, render("script")); a[0] != "script" || calls != 2 {
		t.Fatalf("the script kind of the same bytes: %v after %d renders", a, calls)
	}
	long := make([]byte, addrNameMaxScript+1)
	c.get(nameOfScript, long, render("long"))
	c.get(nameOfScript, long, render("long"))
	if calls != 4 {
		t.Fatalf("a long script was cached (%d renders, want 4)", calls)
	}
	key := make([]byte, 8)
	for i := range addrNamesMax + 10 {
		binary.BigEndian.PutUint64(key, uint64(i))
		c.get(nameOfDesc, key, render("x"))
		if len(c.m) > addrNamesMax {
			t.Fatalf("%d entries, more than %d", len(c.m), addrNamesMax)
		}
	}
}
