package memdb

// A persistent treap: nodes are never modified once published, so a
// snapshot is just the roots it saw, and readers walk a tree without locks
// while writers build new versions by copying the O(log n) nodes on the
// path they change. A node's priority is a hash of its key, so the tree's
// shape depends only on its keys; that also means a key already in a
// subtree never has a higher priority than the subtree's root.

import (
	"bytes"
	"hash/maphash"

	"github.com/openexplorer/blockbook/db"
)

type node struct {
	key, val    []byte
	prio        uint64
	left, right *node
}

var prioSeed = maphash.MakeSeed()

func priority(key []byte) uint64 { return maphash.Bytes(prioSeed, key) }

// insert returns a tree with key set to val, and the value it replaced.
func insert(n *node, key, val []byte, prio uint64) (out *node, old []byte, existed bool) {
	if n == nil {
		return &node{key: key, val: val, prio: prio}, nil, false
	}
	c := bytes.Compare(key, n.key)
	if c == 0 {
		m := *n
		m.val = val
		return &m, n.val, true
	}
	if prio > n.prio {
		// key is not in n's subtree (its priority would not exceed n's).
		l, r := split(n, key)
		return &node{key: key, val: val, prio: prio, left: l, right: r}, nil, false
	}
	m := *n
	if c < 0 {
		m.left, old, existed = insert(n.left, key, val, prio)
	} else {
		m.right, old, existed = insert(n.right, key, val, prio)
	}
	return &m, old, existed
}

// split divides a tree that does not hold key into the keys below and
// above it.
func split(n *node, key []byte) (lo, hi *node) {
	if n == nil {
		return nil, nil
	}
	m := *n
	if bytes.Compare(n.key, key) < 0 {
		m.right, hi = split(n.right, key)
		return &m, hi
	}
	lo, m.left = split(n.left, key)
	return lo, &m
}

// remove returns a tree without key, and the value it held.
func remove(n *node, key []byte) (out *node, old []byte, existed bool) {
	if n == nil {
		return nil, nil, false
	}
	c := bytes.Compare(key, n.key)
	if c == 0 {
		return merge(n.left, n.right), n.val, true
	}
	m := *n
	if c < 0 {
		m.left, old, existed = remove(n.left, key)
	} else {
		m.right, old, existed = remove(n.right, key)
	}
	if !existed {
		return n, nil, false // nothing changed: keep sharing the old nodes
	}
	return &m, old, true
}

// merge joins two trees whose keys are all below (lo) and above (hi).
func merge(lo, hi *node) *node {
	switch {
	case lo == nil:
		return hi
	case hi == nil:
		return lo
	case lo.prio >= hi.prio:
		m := *lo
		m.right = merge(lo.right, hi)
		return &m
	}
	m := *hi
	m.left = merge(lo, hi.left)
	return &m
}

func lookup(n *node, key []byte) *node {
	for n != nil {
		switch c := bytes.Compare(key, n.key); {
		case c == 0:
			return n
		case c < 0:
			n = n.left
		default:
			n = n.right
		}
	}
	return nil
}

// ascend calls fn for the keys >= start with prefix, in order, until fn
// returns false or an error.
func ascend(root *node, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if start == nil {
		start = prefix
	}
	var stack []*node
	for n := root; n != nil; { // the path to the first key >= start
		if bytes.Compare(n.key, start) >= 0 {
			stack = append(stack, n)
			n = n.left
		} else {
			n = n.right
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !bytes.HasPrefix(n.key, prefix) {
			return nil
		}
		if more, err := fn(n.key, n.val); err != nil || !more {
			return err
		}
		for c := n.right; c != nil; c = c.left {
			stack = append(stack, c)
		}
	}
	return nil
}

// descend calls fn for the keys <= start (the last key with prefix when
// start is nil) with prefix, in descending order, until fn returns false,
// an error, or a key without prefix.
func descend(root *node, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	var end []byte // exclusive bound when start is nil
	if start == nil {
		end = db.PrefixEnd(prefix)
	}
	var stack []*node
	for n := root; n != nil; { // the path to the last key in bounds
		if (start != nil && bytes.Compare(n.key, start) <= 0) || (start == nil && (end == nil || bytes.Compare(n.key, end) < 0)) {
			stack = append(stack, n)
			n = n.right
		} else {
			n = n.left
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !bytes.HasPrefix(n.key, prefix) {
			return nil
		}
		if more, err := fn(n.key, n.val); err != nil || !more {
			return err
		}
		for c := n.left; c != nil; c = c.right {
			stack = append(stack, c)
		}
	}
	return nil
}
