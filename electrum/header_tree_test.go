package electrum

import (
	"context"
	"encoding/hex"
	"slices"
	"sync"
	"testing"
	"time"
)

// Proofs through the chunk roots are the whole tree's, for trees of one
// chunk, whole chunks, and a last chunk of one leaf or a few.
func TestTreeBranchIsMerkleBranch(t *testing.T) {
	for _, n := range []int{1, 2, 3, 1023, 1024, 1025, 1027, 2048, 2049, 3000, 5121} {
		leaves := make([][32]byte, n)
		for i := range leaves {
			leaves[i] = hash256([]byte{byte(i), byte(i >> 8), byte(n)})
		}
		roots := chunkRoots(leaves)
		for _, i := range []int{0, 1, n / 2, n - 2, n - 1, 1023, 1024, 2048} {
			if i < 0 || i >= n {
				continue
			}
			wb, wr := merkleBranch(leaves, i)
			gb, gr := treeBranch(leaves, roots, i)
			if gr != wr || !slices.Equal(gb, wb) {
				t.Fatalf("%d leaves, leaf %d: root %x branch %d long, want %x, %d long", n, i, gr, len(gb), wr, len(wb))
			}
		}
	}
}

// chainHeaders gives the raw header at a height.
type chainHeaders func(h int) []byte

// leaves are the hashes of the headers 0..cp.
func (raw chainHeaders) leaves(cp int) [][32]byte {
	var l [][32]byte
	for h := 0; h <= cp; h++ {
		l = append(l, hash256(raw(h)))
	}
	return l
}

// checkProofs asks proofs of a few headers to cp and wants those of the
// whole tree of raw's headers 0..cp; it returns the root.
func checkProofs(t *testing.T, c *client, what string, raw chainHeaders, cp int) string {
	t.Helper()
	leaves := raw.leaves(cp)
	root := shown(naiveRoot(leaves))
	for _, h := range []int{0, 3, 4, cp / 2, cp - 1, cp} {
		p := ok[headerProof](t, c, "blockchain.block.header", h, cp)
		if p.Header != hex.EncodeToString(raw(h)) || p.Root != root || fold(t, leaves[h], h, p.Branch) != root {
			t.Errorf("%s: proof of %d to %d: %+v, want root %s", what, h, cp, p, root)
		}
	}
	return root
}

// reorgFrom replaces the blocks from fork to the tip with others: the one
// at fork with another timestamp, those above it on top of it. It returns
// the new chain's headers.
func (s *served) reorgFrom(t *testing.T, fork int) chainHeaders {
	t.Helper()
	tip := s.f.TipHeight()
	for range tip - fork + 1 {
		s.disconnectTip(t)
	}
	alt := map[int][]byte{}
	for h := fork; h <= tip; h++ {
		b := slices.Clone(s.f.Raw[h])
		if h == fork {
			b[68]++ // the timestamp
		} else {
			prev := hash256(alt[h-1][:80])
			copy(b[4:36], prev[:])
		}
		alt[h] = b
		s.connectRaw(t, b, h)
	}
	return func(h int) []byte {
		if b, ok := alt[h]; ok {
			return b[:80]
		}
		return s.f.Raw[h][:80]
	}
}

// countBuilds counts the chunk roots built from now on.
func countBuilds(t *testing.T) func() int {
	var mu sync.Mutex
	n := 0
	treeHook = func(_ int, build bool) {
		mu.Lock()
		defer mu.Unlock()
		if build {
			n++
		}
	}
	t.Cleanup(func() { treeHook = nil })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// Proofs to checkpoints follow a reorg: to a checkpoint at or above the
// fork they are the new chain's whole tree's (its kept chunk roots are
// another chain's), below it they stay and its roots are kept. The fork
// is at the tip (the header at the checkpoint replaced), then below the
// checkpoint, which is below the tip (only headers before it replaced).
func TestHeaderTreeCacheFollowsReorgs(t *testing.T) {
	defer func(l int) { chunkLevels = l }(chunkLevels)
	chunkLevels = 2 // chunks of 4 headers
	for _, depth := range []int{0, 2} {
		s := newServedOwn(t, Config{})
		c := s.negotiated(t, "1.4")
		tip := s.f.TipHeight()
		if tip < 20 {
			t.Fatalf("a chain of %d blocks is too short", tip)
		}
		fork := tip - depth
		cp, below := min(fork+1, tip), fork-3
		orig := chainHeaders(func(h int) []byte { return s.f.Raw[h][:80] })
		before := checkProofs(t, c, "before", orig, cp)
		lower := checkProofs(t, c, "before, below the fork", orig, below)

		built := countBuilds(t)
		now := s.reorgFrom(t, fork)
		if slices.Equal(now(fork), orig(fork)) || slices.Equal(now(cp), orig(cp)) {
			t.Fatalf("fork %d, checkpoint %d: the reorg left a header as it was", fork, cp)
		}
		if after := checkProofs(t, c, "after the reorg", now, cp); after == before {
			t.Errorf("fork %d: the reorg left the root unchanged: the test proves nothing", fork)
		}
		if got := checkProofs(t, c, "after the reorg, below the fork", now, below); got != lower {
			t.Errorf("fork %d: the root to %d moved from %s to %s", fork, below, lower, got)
		}
		if n := built(); n != 1 {
			t.Errorf("fork %d: %d chunk roots built after the reorg, want 1 (the checkpoint above the fork)", fork, n)
		}
		treeHook = nil
	}
}

// directProof is the proof of the header at height to cp, asked of the
// server without a session (from any goroutine).
func (s *served) directProof(height, cp int) (headerProof, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ioGuard)
	defer cancel()
	b, r, err := s.srv.headerProof(ctx, height, cp)
	return headerProof{Branch: b, Root: r}, err
}

// wantProof fails unless p is the proof of leaves[h] in the whole tree.
func wantProof(t *testing.T, what string, p headerProof, err error, leaves [][32]byte, h int) {
	t.Helper()
	root := shown(naiveRoot(leaves))
	if err != nil || p.Root != root || fold(t, leaves[h], h, p.Branch) != root {
		t.Errorf("%s: proof of %d: %+v, %v; want root %s", what, h, p, err, root)
	}
}

// A request that builds a checkpoint's chunk roots while a reorg replaces
// the header at the checkpoint answers for the chain it read; a request
// after the reorg, while that build runs, does not wait for those roots
// but builds the new chain's, and keeps them: the first request, had it
// read the headers only now, would not replace them with its own.
func TestHeaderTreeBuildRacingReorg(t *testing.T) {
	defer func(l int) { chunkLevels = l }(chunkLevels)
	chunkLevels = 2
	s := newServedOwn(t, Config{})
	tip := s.f.TipHeight()
	orig := chainHeaders(func(h int) []byte { return s.f.Raw[h][:80] })
	var now chainHeaders
	type answer struct {
		p   headerProof
		err error
	}
	second, looked := make(chan answer, 1), make(chan bool, 1)
	calls := 0
	treeHook = func(cp int, build bool) {
		calls++ // the first call is the test's goroutine's; the second comes after it started the second request
		if calls > 1 {
			looked <- build
			return
		}
		// The first request entered the checkpoint and has yet to build.
		now = s.reorgFrom(t, tip)
		go func() {
			p, err := s.directProof(5, tip)
			second <- answer{p, err}
		}()
		select {
		case <-looked:
		case <-time.After(ioGuard):
			t.Fatal("the second request did not look its checkpoint up")
		}
	}
	t.Cleanup(func() { treeHook = nil })
	p, err := s.directProof(5, tip)
	wantProof(t, "the request that read the headers before the reorg", p, err, orig.leaves(tip), 5)
	a := <-second
	wantProof(t, "the request after the reorg", a.p, a.err, now.leaves(tip), 5)

	built := countBuilds(t)
	p, err = s.directProof(9, tip)
	wantProof(t, "a request after both", p, err, now.leaves(tip), 9)
	if n := built(); n != 0 {
		t.Errorf("%d chunk roots built after both, want the second request's kept", n)
	}
	stale, build := s.srv.headerHashes.tree(tip, hash256(orig(tip)))
	if kept := s.srv.headerHashes.trees[tip]; !build || stale == kept || kept.last != hash256(now(tip)) {
		t.Errorf("a lookup with the replaced header at %d: build %v, the entry kept is the new chain's: %v", tip, build, kept.last == hash256(now(tip)))
	}
}

// Concurrent first requests for a checkpoint build its chunk roots once:
// the first enters it and builds after all have looked it up, the others
// wait for it; all answer the same proof.
func TestHeaderTreeBuiltOnce(t *testing.T) {
	defer func(l int) { chunkLevels = l }(chunkLevels)
	chunkLevels = 2
	s := newServedOwn(t, Config{})
	tip := s.f.TipHeight()
	const n = 8
	var mu sync.Mutex
	builds, looked := 0, 0
	all := make(chan struct{})
	treeHook = func(_ int, build bool) {
		mu.Lock()
		looked++
		if build {
			builds++
		}
		if looked == n {
			close(all)
		}
		mu.Unlock()
		if build {
			select { // a failure guard: all n look up before any build
			case <-all:
			case <-time.After(ioGuard):
			}
		}
	}
	t.Cleanup(func() { treeHook = nil })
	var wg sync.WaitGroup
	proofs, errs := make([]headerProof, n), make([]error, n)
	for i := range n {
		wg.Go(func() { proofs[i], errs[i] = s.directProof(7, tip) })
	}
	wg.Wait()
	leaves := chainHeaders(func(h int) []byte { return s.f.Raw[h][:80] }).leaves(tip)
	for i := range n {
		wantProof(t, "a concurrent request", proofs[i], errs[i], leaves, 7)
	}
	if looked != n || builds != 1 {
		t.Errorf("%d concurrent first requests: %d looked up, %d built, want 1 build", n, looked, builds)
	}
}
