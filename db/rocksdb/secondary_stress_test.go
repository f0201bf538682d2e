package rocksdb

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// The replica catches up concurrently with the primary's block writes and
// its restarts, and ends with the primary's rows.
func TestSecondaryConcurrentCatchUp(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(300)
	o := testOptions(dir)
	o.WriteBufferBytes = 16 << 10 // many flushes
	p, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	x := index(t, p)
	connect(t, x, blocks[:5])
	r, err := OpenSecondary(testOptions(dir), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			_ = r.CatchUp()
		}
	}()
	refill := func(h uint32, _ bchain.Hash) (*bchain.Block, error) { return blocks[h], nil }
	for i := 5; i < 300; i++ {
		connect(t, x, blocks[i:i+1])
		if i%50 == 0 { // a reorg of depth 3 (the same blocks again)
			for range 3 {
				if _, _, err := x.DisconnectTip(refill); err != nil {
					t.Fatal(err)
				}
			}
			connect(t, x, blocks[i-2:i+1])
		}
		if i%100 == 0 { // a restart of the primary
			p.Close()
			if p, err = Open(o); err != nil {
				t.Fatal(err)
			}
			x = index(t, p)
		}
	}
	close(stop)
	wg.Wait()
	defer p.Close()
	if err := r.CatchUp(); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, p), dump(t, r); !bytes.Equal(a, b) {
		t.Fatalf("replica dump (%d bytes) differs from the primary's (%d bytes)", len(b), len(a))
	}
}
