package listen

import "math"

// SpendCost is Spend of a call that weighs cost units (known before it
// runs): its rate tokens are taken at once.
func (l *Limiter) SpendCost(ip string, cost int) Refusal {
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

// Tokens is what ip has left of its rate now (negative: in debt after a
// post-charge); the burst for a client never seen (tests, tools).
func (l *Limiter) Tokens(ip string) float64 {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.clients[IPKey(ip)]
	if k == nil {
		return float64(l.cfg.Burst)
	}
	if l.cfg.Rate > 0 {
		l.refill(k, now)
	}
	return k.tokens
}
