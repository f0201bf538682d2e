package api

import "sync"

// addrNames caches how scripts and descriptors render as addresses. A page
// of a busy address's txs names the same few descriptors over and over
// (the address itself in nearly every tx), and rendering one (script
// classification, then base58 or bech32 with its checksum) was a tenth of
// a full-tx page's CPU. The parser's rendering is a pure function of the
// bytes, so entries never go stale; the cache is bounded by emptying it
// when full, and only short scripts (every standard address kind) enter.
type addrNames struct {
	mu sync.Mutex
	m  map[string]addrName
}

type addrName struct {
	addrs []string // shared: callers must not modify it
	ok    bool
}

const (
	// addrNamesMax bounds the entries (about 150 bytes each).
	addrNamesMax = 1 << 15
	// addrNameMaxScript is the longest script cached: P2TR and P2WSH
	// are 34 bytes; data carriers and bare multisig are longer and rare.
	addrNameMaxScript = 40
)

// Kinds of rendering, the first byte of a key: a descriptor through
// AddressesFromAddrDesc, a script through OutputAddresses.
const (
	nameOfDesc   = 'd'
	nameOfScript = 's'
)

// get returns the rendering of b of the kind, computing it with render
// on a miss.
func (c *addrNames) get(kind byte, b []byte, render func() ([]string, bool)) ([]string, bool) {
	if len(b) > addrNameMaxScript {
		return render()
	}
	var kb [addrNameMaxScript + 1]byte
	kb[0] = kind
	key := kb[:1+copy(kb[1:], b)]
	c.mu.Lock()
	e, hit := c.m[string(key)]
	c.mu.Unlock()
	if hit {
		return e.addrs, e.ok
	}
	addrs, ok := render()
	c.mu.Lock()
	if c.m == nil || len(c.m) >= addrNamesMax {
		c.m = make(map[string]addrName)
	}
	c.m[string(key)] = addrName{addrs, ok}
	c.mu.Unlock()
	return addrs, ok
}
