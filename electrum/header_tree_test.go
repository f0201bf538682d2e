package electrum

import (
	"encoding/hex"
	"slices"
	"testing"
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

// Proofs to a checkpoint come from the chunk roots kept for it (built
// once) and fold to the root of the headers; a reorg that replaces the
// header at the checkpoint drops them, and the proofs follow the new
// header.
func TestHeaderTreeCacheFollowsReorgs(t *testing.T) {
	defer func(l int) { chunkLevels = l }(chunkLevels)
	chunkLevels = 2 // chunks of 4 headers
	s := newServedOwn(t, Config{})
	c := s.negotiated(t, "1.4")
	tip := s.f.TipHeight()
	if tip < 20 {
		t.Fatalf("a chain of %d blocks is too short", tip)
	}
	check := func(what string, raw func(h int) []byte, cp int) string {
		t.Helper()
		var leaves [][32]byte
		for h := 0; h <= cp; h++ {
			leaves = append(leaves, hash256(raw(h)))
		}
		root := shown(naiveRoot(leaves))
		for _, h := range []int{0, 3, 4, cp / 2, cp - 1, cp} {
			p := ok[headerProof](t, c, "blockchain.block.header", h, cp)
			if p.Header != hex.EncodeToString(raw(h)) || p.Root != root || fold(t, leaves[h], h, p.Branch) != root {
				t.Errorf("%s: proof of %d to %d: %+v, want root %s", what, h, cp, p, root)
			}
		}
		return root
	}
	built := func() int {
		s.srv.headerHashes.mu.Lock()
		defer s.srv.headerHashes.mu.Unlock()
		return s.srv.headerHashes.treesBuilt
	}
	orig := func(h int) []byte { return s.f.Raw[h][:80] }
	before := check("before", orig, tip)
	check("before, a lower checkpoint", orig, tip-3)
	if n := built(); n != 2 {
		t.Fatalf("%d trees built for two checkpoints asked 6 times each", n)
	}

	// The tip block again with another timestamp: another header at tip.
	s.disconnectTip(t)
	alt := slices.Clone(s.f.Raw[tip])
	alt[68]++
	s.connectRaw(t, alt, tip)
	now := func(h int) []byte {
		if h == tip {
			return alt[:80]
		}
		return orig(h)
	}
	if after := check("after the reorg", now, tip); after == before {
		t.Error("the reorg left the root unchanged: the test proves nothing")
	}
	check("after the reorg, the lower checkpoint", now, tip-3)
	if n := built(); n != 4 {
		t.Errorf("%d trees built, want 4 (both checkpoints again after the reorg)", n)
	}
}
