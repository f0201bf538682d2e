package electrum

import (
	"context"

	"github.com/openexplorer/blockbook/api"
)

// A proof to a checkpoint (cp_height) is a branch of the merkle tree of
// the headers 0..cp: hashing the whole tree per call costs as many hashes
// as headers. The tree's level chunkLevels (the roots of chunks of
// 2^chunkLevels headers, some 28 KB on a chain of 900,000) is kept per
// checkpoint instead, and a proof hashes its chunk's headers and those
// roots.

// chunkLevels is the tree levels within a chunk (a variable so that
// tests reach several chunks on small chains).
var chunkLevels = 10

// maxHeaderTrees bounds the checkpoints whose chunk roots are kept
// (wallets use a few fixed ones).
const maxHeaderTrees = 8

// headerTree is the chunk roots of the headers 0..cp, valid while the
// header at cp is last (a header commits to all before it). The first
// request for a checkpoint enters it and builds the roots; the others
// wait for done.
type headerTree struct {
	last  [32]byte
	done  chan struct{}
	roots [][32]byte // set before done is closed
}

// treeHook, nil outside tests, sees each proof through the chunk roots
// after it looked its checkpoint up; build says whether it builds them.
var treeHook func(cp int, build bool)

// chunkRoot returns the node chunkLevels above leaves (a whole chunk, or
// the last of a tree of more than one chunk), pairing an odd level's last
// node with itself as the whole tree does; with index >= 0 also the branch
// of leaves[index] up to it.
func chunkRoot(leaves [][32]byte, index int) (branch [][32]byte, root [32]byte) {
	level := append([][32]byte(nil), leaves...)
	var buf [64]byte
	for range chunkLevels {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		if index >= 0 {
			branch = append(branch, level[index^1])
			index /= 2
		}
		next := level[:0] // in place: pair i is read before node i/2 is written
		for i := 0; i < len(level); i += 2 {
			copy(buf[:32], level[i][:])
			copy(buf[32:], level[i+1][:])
			next = append(next, hash256(buf[:]))
		}
		level = next
	}
	return branch, level[0]
}

// chunkRoots is the tree's level chunkLevels over leaves.
func chunkRoots(leaves [][32]byte) [][32]byte {
	size := 1 << chunkLevels
	roots := make([][32]byte, 0, (len(leaves)+size-1)/size)
	for lo := 0; lo < len(leaves); lo += size {
		_, r := chunkRoot(leaves[lo:min(lo+size, len(leaves))], -1)
		roots = append(roots, r)
	}
	return roots
}

// treeBranch is merkleBranch(leaves, index), through the chunk roots.
func treeBranch(leaves, roots [][32]byte, index int) ([][32]byte, [32]byte) {
	size := 1 << chunkLevels
	if len(leaves) <= size {
		return merkleBranch(leaves, index)
	}
	lo := index &^ (size - 1)
	branch, _ := chunkRoot(leaves[lo:min(lo+size, len(leaves))], index-lo)
	upper, root := merkleBranch(roots, index/size)
	return append(branch, upper...), root
}

// proof returns the branch of the header at height to the root of the
// headers 0..cp (cp at most the tip), and the root.
func (c *headerHashCache) proof(ctx context.Context, sq api.ScriptQueries, height, cp int) ([][32]byte, [32]byte, error) {
	hashes, err := c.upTo(ctx, sq, cp)
	if err != nil {
		return nil, [32]byte{}, err
	}
	if len(hashes) <= 1<<chunkLevels {
		b, r := merkleBranch(hashes, height)
		return b, r, nil
	}
	t, build := c.tree(cp, hashes[cp])
	if treeHook != nil {
		treeHook(cp, build)
	}
	if build {
		t.roots = chunkRoots(hashes) // without the lock: up to a second on a long chain
		close(t.done)
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, [32]byte{}, ctx.Err()
	}
	b, r := treeBranch(hashes, t.roots, height)
	return b, r, nil
}

// tree returns the entry of checkpoint cp whose header hashes to last,
// or an empty one to build (build true): entered, replacing one of
// another last (another chain's roots, left by a reorg), unless the
// cached hashes show that last is no longer the header at cp (the
// request read the headers before a reorg).
func (c *headerHashCache) tree(cp int, last [32]byte) (t *headerTree, build bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.trees[cp]; e != nil && e.last == last {
		return e, false
	}
	t = &headerTree{last: last, done: make(chan struct{})}
	if len(c.hashes) > cp && c.hashes[cp] != last {
		return t, true
	}
	if c.trees == nil {
		c.trees = map[int]*headerTree{}
	}
	if _, ok := c.trees[cp]; !ok && len(c.trees) >= maxHeaderTrees {
		for k := range c.trees { // any one; its waiters keep it
			delete(c.trees, k)
			break
		}
	}
	c.trees[cp] = t
	return t, true
}
