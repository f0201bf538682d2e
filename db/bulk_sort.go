package db

import (
	"bytes"
	"cmp"
	"slices"
)

// sorted returns the live rows in key order; of equal keys the last added
// wins (as with puts in sequence). With release, the row references are
// dropped once copied (a flush sorts a family once), so that the radix
// sort's scratch copy takes their place in memory.
//
// The rows are ordered by their 8-byte prefixes with a radix sort, which
// keeps the order they were added in among equal prefixes, and only rows
// sharing a prefix are compared key by key: a comparison sort of the
// references took a tenth of the whale chain's sync (docs/performance.md).
func (c *cfRows) sorted(release bool) []rowRef {
	live := make([]rowRef, 0, c.n)
	for _, refs := range c.refs {
		for _, r := range refs {
			if !r.dead {
				live = append(live, r)
			}
		}
	}
	if release {
		c.refs = nil
	}
	live = radixByPrefix(live)
	for i := 0; i < len(live); {
		j := i + 1
		for j < len(live) && live[j].prefix == live[i].prefix {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(live[i:j], func(a, b rowRef) int {
				ka, kb := c.key(a), c.key(b)
				if len(ka) >= 8 && len(kb) >= 8 { // the prefixes are these 8 bytes, equal
					ka, kb = ka[8:], kb[8:]
				}
				if d := bytes.Compare(ka, kb); d != 0 {
					return d
				}
				if a.chunk != b.chunk { // insertion order breaks ties
					return cmp.Compare(a.chunk, b.chunk)
				}
				return cmp.Compare(a.off, b.off)
			})
		}
		i = j
	}
	out := live[:0]
	for i, r := range live {
		if i+1 < len(live) && live[i+1].prefix == r.prefix && bytes.Equal(c.key(r), c.key(live[i+1])) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// radixByPrefix sorts rows by prefix, stably (least significant byte
// first), skipping the bytes in which all prefixes agree (the heights'
// high bytes, a family's leading tag). It may return its scratch slice
// rather than rows.
func radixByPrefix(rows []rowRef) []rowRef {
	if len(rows) < 2 {
		return rows
	}
	var counts [8][256]int
	for i := range rows {
		p := rows[i].prefix
		for b := range 8 {
			counts[b][byte(p>>(8*b))]++
		}
	}
	src, dst := rows, make([]rowRef, len(rows))
	for b := range 8 {
		cnt := &counts[b]
		if cnt[byte(src[0].prefix>>(8*b))] == len(src) {
			continue // every prefix has this byte
		}
		pos := 0
		for v := range cnt {
			n := cnt[v]
			cnt[v] = pos
			pos += n
		}
		shift := 8 * b
		for i := range src {
			v := byte(src[i].prefix >> shift)
			dst[cnt[v]] = src[i]
			cnt[v]++
		}
		src, dst = dst, src
	}
	return src
}
