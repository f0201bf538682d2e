package esplora

import (
	"strconv"
	"sync"

	"golang.org/x/sync/singleflight"
)

// hashrateCache keeps each interval's hashrate answer for one tip and one
// minute (the answer is computed at the minute), so that the header walk
// behind it (about a million reads for "all" on mainnet) runs at most once
// a minute per interval however many clients ask, not once per request.
type hashrateCache struct {
	group singleflight.Group
	mu    sync.Mutex
	tip   string
	min   int64
	byKey map[string]*reply
}

// get answers interval at (tip, minute) from the cache, or from compute, run
// once for all callers that ask for the same key at the same time.
func (c *hashrateCache) get(interval, tip string, minute int64, compute func() (*reply, error)) (*reply, error) {
	c.mu.Lock()
	if c.tip != tip || c.min != minute || c.byKey == nil {
		c.tip, c.min, c.byKey = tip, minute, map[string]*reply{}
	}
	r := c.byKey[interval]
	c.mu.Unlock()
	if r != nil {
		return r, nil
	}
	v, err, _ := c.group.Do(interval+"/"+tip+"/"+strconv.FormatInt(minute, 10), func() (any, error) {
		// A caller that missed the cache just before another's computation
		// stored its answer finds it here, not by computing it again.
		c.mu.Lock()
		r := c.byKey[interval]
		if c.tip != tip || c.min != minute {
			r = nil
		}
		c.mu.Unlock()
		if r != nil {
			return r, nil
		}
		r, err := compute()
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.tip == tip && c.min == minute {
			c.byKey[interval] = r
		}
		c.mu.Unlock()
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*reply), nil
}
