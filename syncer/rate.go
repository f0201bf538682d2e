package syncer

import "time"

// rateWindow is how far back the sync rate looks: long enough to smooth a
// bulk round's bursts, short enough to show a slowdown within a minute.
const rateWindow = time.Minute

// syncRate measures blocks connected per second over the last rateWindow.
// It keeps about one sample a second (a bulk sync connects thousands of
// blocks a second), so its memory is bounded by the window.
type syncRate struct {
	samples []rateSample // oldest first, at least a second apart
	last    rateSample   // the newest tip seen
}

type rateSample struct {
	at     time.Time
	height uint32
}

// add records the tip at height, reached at now. A lower height (a
// reorg or rollback) starts the measurement again.
func (r *syncRate) add(now time.Time, height uint32) {
	if height < r.last.height {
		r.samples = r.samples[:0]
	}
	r.last = rateSample{now, height}
	if n := len(r.samples); n == 0 || now.Sub(r.samples[n-1].at) >= time.Second {
		r.samples = append(r.samples, r.last)
	}
	drop := 0
	for drop < len(r.samples)-1 && now.Sub(r.samples[drop].at) > rateWindow {
		drop++
	}
	r.samples = append(r.samples[:0], r.samples[drop:]...)
}

// perSecond is the rate at now: the blocks connected since the oldest
// sample in the window over the time since it; 0 when no block came in
// the window or it holds too little time to tell.
func (r *syncRate) perSecond(now time.Time) float64 {
	var base *rateSample
	for i := range r.samples {
		if now.Sub(r.samples[i].at) <= rateWindow {
			base = &r.samples[i]
			break
		}
	}
	if base == nil || r.last.height <= base.height {
		return 0
	}
	d := now.Sub(base.at).Seconds()
	if d < 1 {
		return 0
	}
	return float64(r.last.height-base.height) / d
}
