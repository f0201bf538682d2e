package listen

import "math"

// Spend takes cost units (a call's weight known before it runs, at least
// 1) of ip's rate, for a front whose calls are not HTTP requests
// (Electrum's); a non-empty Msg says why not. The concurrency limit is
// not held past the call here: such a front bounds its calls in progress
// itself.
func (l *Limiter) Spend(ip string, cost int) Refusal {
	cost = max(cost, 1)
	ref := l.acquire(ip, cost)
	if ref.Msg == "" {
		l.release(ip, l.concCost(cost))
	}
	return ref
}

// Charge takes cost more units of ip's rate after a call (a post-charge):
// the work only known once done, such as a history's length or an
// answer's bytes. The bucket may go below zero, at most one burst deep,
// so that the client's next calls are refused (with the seconds until it
// has refilled) rather than this one, whose work is already done. It
// counts towards the client's recent rate too (its share while late).
func (l *Limiter) Charge(ip string, cost int) {
	if cost <= 0 || l.cfg.Rate <= 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.client(IPKey(ip), now) // created if forgotten since admitted (idle past StateTTL)
	l.refill(k, now)
	k.spend(float64(cost), now)
	k.tokens = math.Max(k.tokens, -float64(l.cfg.Burst)) // at most one burst deep
}
