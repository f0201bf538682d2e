package memdb

import (
	"bytes"
	"maps"
	"math/rand"
	"slices"
	"testing"
)

// The treap against a map: random puts and deletes, every version kept
// and checked again at the end (persistence), with in-order walks both ways.
func TestTreeMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	type version struct {
		root  *node
		model map[string]string
	}
	var root *node
	model := map[string]string{}
	var versions []version
	for i := range 5000 {
		k := string([]byte{byte(rng.Intn(40)), byte(rng.Intn(4))})[:1+rng.Intn(2)]
		if rng.Intn(3) == 0 {
			var existed bool
			root, _, existed = remove(root, []byte(k))
			if _, ok := model[k]; ok != existed {
				t.Fatalf("remove %x: existed %v, model %v", k, existed, ok)
			}
			delete(model, k)
		} else {
			v := string(rune('a' + i%26))
			var old []byte
			var existed bool
			root, old, existed = insert(root, []byte(k), []byte(v), priority([]byte(k)))
			if mv, ok := model[k]; ok != existed || (ok && mv != string(old)) {
				t.Fatalf("insert %x: old %q %v, model %q %v", k, old, existed, mv, ok)
			}
			model[k] = v
		}
		if i%50 == 0 {
			versions = append(versions, version{root, maps.Clone(model)})
		}
	}
	versions = append(versions, version{root, model})
	for i, v := range versions {
		keys := slices.Sorted(maps.Keys(v.model))
		var got []string
		_ = ascend(v.root, nil, nil, func(k, val []byte) (bool, error) {
			if v.model[string(k)] != string(val) {
				t.Fatalf("version %d: %x = %q, model %q", i, k, val, v.model[string(k)])
			}
			got = append(got, string(k))
			return true, nil
		})
		if !slices.Equal(got, keys) {
			t.Fatalf("version %d: %d keys in order, model %d", i, len(got), len(keys))
		}
		got = got[:0]
		_ = descend(v.root, nil, nil, func(k, _ []byte) (bool, error) {
			got = append(got, string(k))
			return true, nil
		})
		slices.Reverse(got)
		if !slices.Equal(got, keys) {
			t.Fatalf("version %d: reverse walk differs", i)
		}
		checkHeap(t, v.root)
	}
}

func checkHeap(t *testing.T, n *node) {
	t.Helper()
	if n == nil {
		return
	}
	for _, c := range []*node{n.left, n.right} {
		if c != nil && c.prio > n.prio {
			t.Fatalf("heap order broken at %x", n.key)
		}
	}
	if n.left != nil && bytes.Compare(n.left.key, n.key) >= 0 || n.right != nil && bytes.Compare(n.right.key, n.key) <= 0 {
		t.Fatalf("key order broken at %x", n.key)
	}
	checkHeap(t, n.left)
	checkHeap(t, n.right)
}
