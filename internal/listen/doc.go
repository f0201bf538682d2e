// Package listen is the listener kit every front serves through: the
// HTTP server's timeouts and header cap, connection caps (total and per
// client), the one rule that names a request's client (X-Real-Ip from
// trusted proxies, the loopback exemption), the per-client cost budget and
// rate limiter, the process-wide gate on expensive work (gate.go), and
// error answers that never let a browser sniff them or
// echo unbounded input. A new front built with it gets all of these by
// construction (docs/operations.md, "Every listener's limits").
package listen
