package app

import (
	"flag"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/electrum"
	"github.com/openexplorer/blockbook/internal/listen"
)

// listenOptions are the listener kit's settings, the same for every HTTP
// listener (public, Esplora, Electrum's websocket): each gets its own
// connection counts with these caps. Zero fields take the defaults
// (Options built without flags, as the tests do).
type listenOptions struct {
	MaxConns, MaxConnsPerClient int
	ReadTimeout, WriteTimeout   time.Duration
	IdleTimeout                 time.Duration
	// LimitLocal: loopback and private peers are limited per address,
	// not exempt. MaxHeavy and HeavyWait are the process-wide gate on
	// expensive work (listen.Gate; 0: the defaults, MaxHeavy -1: off).
	LimitLocal bool
	MaxHeavy   int
	HeavyWait  time.Duration
	// LateAfter is the run-queue wait past which the process counts as
	// late and a client past its share is refused (listen.LateAfter; 0,
	// as in Options built without flags, or negative: off).
	LateAfter time.Duration
}

// Defaults of the listener kit's flags (docs/operations.md, "Every
// listener's limits").
const (
	defaultListenMaxConns          = 4096
	defaultListenMaxConnsPerClient = 256
	defaultListenReadTimeout       = 30 * time.Second
	defaultListenWriteTimeout      = 90 * time.Second // the 60 s request timeout plus 30 s to read the answer
	defaultListenIdleTimeout       = 120 * time.Second
)

func declareListenFlags(fs *flag.FlagSet, l *listenOptions) {
	fs.IntVar(&l.MaxConns, "listenmaxconns", defaultListenMaxConns, "open connections each HTTP listener (public, -esplora, -electrumws) accepts; more are answered 503 and closed")
	fs.IntVar(&l.MaxConnsPerClient, "listenmaxconnsperclient", defaultListenMaxConnsPerClient, "open connections of one client address (IPv6: per /64) on each HTTP listener; loopback and private peers (proxies) are exempt")
	fs.DurationVar(&l.ReadTimeout, "listenreadtimeout", defaultListenReadTimeout, "time to read a whole request, body included, on the HTTP listeners")
	fs.DurationVar(&l.WriteTimeout, "listenwritetimeout", defaultListenWriteTimeout, "time to work on and write one answer on the HTTP listeners (websockets keep their own)")
	fs.DurationVar(&l.IdleTimeout, "listenidletimeout", defaultListenIdleTimeout, "keep-alive HTTP connections idle this long are closed")
	fs.BoolVar(&l.LimitLocal, "listenlimitlocal", false, "limit loopback and private peers per address like any client, on every listener, instead of exempting them as proxies (a host whose local peers are not proxies; load tests on one machine)")
	fs.IntVar(&l.MaxHeavy, "listenmaxheavy", 0, "expensive requests in progress on the whole process, over every front (heavy REST and Esplora requests, Electrum calls that read the index or the node); past it one waits -listenheavywait, then gets 503 or Electrum -102 (0: 8 per core, at least 32; -1: off)")
	fs.DurationVar(&l.LateAfter, "listenlateafter", listen.DefaultLateAfter, "while the process's goroutines wait longer than this to run (the 90th percentile over 100 ms), a client past its sustained rate (-restratelimit, -electrumcallsperminute) is refused even within its burst (429, Electrum -102), and every refusal of the per-client budgets is held a second (Electrum: the session reads nothing for a second); 0: off")
	fs.DurationVar(&l.HeavyWait, "listenheavywait", listen.DefaultGateWait, "how long an expensive request waits for a place under -listenmaxheavy before it is refused")
}

// late is the process's lateness signal for the per-client limiters (nil:
// off).
func (l listenOptions) late() func() bool { return listen.LateAfter(l.LateAfter) }

// gate is the process-wide admission control of expensive work, shared by
// every front.
func (l listenOptions) gate(reg prometheus.Registerer) *listen.Gate {
	if l.LateAfter > 0 && reg != nil { // made once per process, as the gate
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "blockbook_sched_lag_seconds", Help: "goroutines' wait to run, the 90th percentile of the last 100 ms (the lateness -listenlateafter compares)",
		}, func() float64 { return listen.SchedLag().Seconds() }))
	}
	return listen.NewGate(l.MaxHeavy, l.HeavyWait, reg)
}

// kit is the listener kit's configuration for one HTTP listener; tls is
// whether it speaks TLS (an excess connection is then closed without an
// HTTP answer, which would not be readable).
func (l listenOptions) kit(tls bool) listen.HTTP {
	or := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	ord := func(v, d time.Duration) time.Duration {
		if v <= 0 {
			return d
		}
		return v
	}
	k := listen.HTTP{
		Timeouts: listen.Timeouts{ReadHeader: 10 * time.Second, Read: ord(l.ReadTimeout, defaultListenReadTimeout),
			Write: ord(l.WriteTimeout, defaultListenWriteTimeout), Idle: ord(l.IdleTimeout, defaultListenIdleTimeout)},
		Caps: listen.Caps{MaxConns: or(l.MaxConns, defaultListenMaxConns), MaxConnsPerClient: or(l.MaxConnsPerClient, defaultListenMaxConnsPerClient),
			LimitLocal: l.LimitLocal},
	}
	if tls {
		k.Refuse = func(net.Conn, bool) {}
	}
	return k
}

// electrumCapped puts an Electrum TCP or TLS listener on the kit's
// connection caps (-electrummaxconns, -electrummaxconnsperip, loopback
// and private peers exempt per client, as on every listener): an excess
// connection is refused at Accept, before a TLS handshake or a session.
// On plain TCP it is told why with the protocol's error; on TLS it is
// closed without one (which it could not read).
func electrumCapped(ln net.Listener, o *electrumOptions, limitLocal, plain bool, srv *electrum.Server) *listen.CappedListener {
	caps := listen.Caps{MaxConns: o.MaxConns, MaxConnsPerClient: o.MaxConnsPerIP, LimitLocal: limitLocal}
	if plain {
		caps.Refuse = srv.Refuse
	}
	return listen.Cap(ln, caps)
}
