package db

import (
	"context"
	"strings"
	"testing"
)

// Verify finds nothing in a sound index and names each kind of damage it
// checks for.
func TestVerify(t *testing.T) {
	d := openTestDB(t)
	x := newTestIndex(t, d, 10, FilterParams{})
	chain := newSynthChain(7)
	for i := 0; i < 6; i++ {
		if err := x.ConnectBlock(chain.next("v")); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if p, err := d.Verify(ctx); err != nil || len(p) != 0 {
		t.Fatalf("sound index: %v %v", p, err)
	}
	stats, err := d.ColumnStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stats {
		if s.CF == CFHeight && s.Rows != 6 {
			t.Fatalf("height rows: %+v", s)
		}
	}
	damage := func(f func(b *Batch)) {
		b := d.NewBatch()
		f(b)
		if err := d.write(b); err != nil {
			t.Fatal(err)
		}
	}
	damage(func(b *Batch) { b.eb.Delete(CFHeight, heightKey(2)) })
	damage(func(b *Batch) { b.put(CFAddressBalance, []byte("desc"), []byte{0xff}) })
	damage(func(b *Batch) { b.put(CFHeight, heightKey(9), []byte{1}) })
	p, err := d.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(p, "\n")
	for _, want := range []string{"jump from height 1 to 3", "addressBalance row", "height 9 does not decode", "rows end at 9"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
}
