package app

import (
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/server"
)

// limitOptions are the per-client limits of the public server. Each has a
// flag and one of Blockbook's variables; a flag given on the command line
// wins, then the variable, then our default (see docs/operations.md,
// "Limits", for both projects' defaults).
type limitOptions struct {
	RESTRate          int
	RESTWindow        time.Duration
	RESTBurst         int
	RESTMaxConcurrent int
	RESTBlock         time.Duration
	RESTStateTTL      time.Duration
	WSMessageRate     int
	WSMessageWindow   time.Duration
	WSIPBlock         time.Duration
	WSPending         int
	WSGetAccountInfo  int
	// fromEnv are the variables that set a limit (by suffix).
	fromEnv map[string]bool
}

// limitSpec ties a flag to its variable suffix and default.
type limitSpec struct {
	flag, env string
	def       any // int or time.Duration
	usage     string
	int       func(*limitOptions) *int
	dur       func(*limitOptions) *time.Duration
}

var limitSpecs = []limitSpec{
	{flag: "restratelimit", env: "REST_UI_RATE_LIMIT", def: 300, usage: "cost units a client may start per -restratewindow on the public HTTP server (a plain request costs 1); 0 disables", int: func(l *limitOptions) *int { return &l.RESTRate }},
	{flag: "restratewindow", env: "REST_UI_RATE_WINDOW", def: time.Minute, usage: "refill window of -restratelimit", dur: func(l *limitOptions) *time.Duration { return &l.RESTWindow }},
	{flag: "restburst", env: "REST_UI_BURST", def: 60, usage: "cost units a client may spend at once before the rate applies", int: func(l *limitOptions) *int { return &l.RESTBurst }},
	{flag: "restmaxconcurrent", env: "REST_UI_MAX_CONCURRENT", def: 24, usage: "cost units of requests one client may have in progress; 0 disables", int: func(l *limitOptions) *int { return &l.RESTMaxConcurrent }},
	{flag: "restblockduration", env: "REST_UI_BLOCK_DURATION", def: time.Duration(0), usage: "block a client this long after repeated excess; 0 only answers 429", dur: func(l *limitOptions) *time.Duration { return &l.RESTBlock }},
	{flag: "reststatettl", env: "REST_UI_STATE_TTL", def: 10 * time.Minute, usage: "how long an idle client's limiter state is kept", dur: func(l *limitOptions) *time.Duration { return &l.RESTStateTTL }},
	{flag: "wsmessageratelimit", env: "WS_MESSAGE_RATE_LIMIT", def: 2500, usage: "messages one websocket connection may send per -wsmessageratewindow; 0 disables", int: func(l *limitOptions) *int { return &l.WSMessageRate }},
	{flag: "wsmessageratewindow", env: "WS_MESSAGE_RATE_WINDOW", def: 10 * time.Minute, usage: "sliding window of -wsmessageratelimit", dur: func(l *limitOptions) *time.Duration { return &l.WSMessageWindow }},
	{flag: "wsipblockduration", env: "WS_IP_BLOCK_DURATION", def: time.Hour, usage: "how long an address over -wsmessageratelimit may open no websocket; 0 disables", dur: func(l *limitOptions) *time.Duration { return &l.WSIPBlock }},
	{flag: "wspendingrequestslimit", env: "WS_PENDING_REQUESTS_LIMIT", def: 48, usage: "requests one websocket connection may have in progress", int: func(l *limitOptions) *int { return &l.WSPending }},
	{flag: "wsgetaccountinfolimit", env: "WS_GETACCOUNTINFO_LIMIT", def: 42, usage: "distinct accounts one websocket connection may ask getAccountInfo for; 0 disables", int: func(l *limitOptions) *int { return &l.WSGetAccountInfo }},
}

// defaultWSMaxConnsPerIP is -wsmaxconnsperip's default: a wallet opens one
// connection per coin, a browser a few tabs.
const defaultWSMaxConnsPerIP = 32

// declareLimitFlags declares the limit flags with their defaults.
func declareLimitFlags(fs *flag.FlagSet, l *limitOptions) {
	for _, s := range limitSpecs {
		if s.int != nil {
			fs.IntVar(s.int(l), s.flag, s.def.(int), s.usage+" (<NET>_"+s.env+")")
		} else {
			fs.DurationVar(s.dur(l), s.flag, s.def.(time.Duration), s.usage+" (<NET>_"+s.env+")")
		}
	}
}

// readLimitEnv applies the variables to the limits whose flag was not
// given. A malformed or negative value is a configuration error.
func readLimitEnv(get envGetter, o *Options) error {
	for _, s := range limitSpecs {
		name, v, ok := get(s.env)
		if !ok || o.IsSet(s.flag) {
			continue
		}
		v = strings.TrimSpace(v)
		if s.int != nil {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%w: %s: %q is not a non-negative integer", bchain.ErrConfig, name, v)
			}
			*s.int(&o.Limits) = n
			o.Limits.given(s.env)
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%w: %s: %q is not a non-negative duration such as 10m", bchain.ErrConfig, name, v)
		}
		*s.dur(&o.Limits) = d
		o.Limits.given(s.env)
	}
	if o.Limits.RESTRate > 0 && o.Limits.RESTBurst <= 0 {
		return fmt.Errorf("%w: the REST burst (-restburst, <NET>_REST_UI_BURST) must be positive while the rate limit is on", bchain.ErrConfig)
	}
	return nil
}

func (l *limitOptions) given(env string) {
	if l.fromEnv == nil {
		l.fromEnv = map[string]bool{}
	}
	l.fromEnv[env] = true
}

// restLimiter builds an HTTP listener's limiter (nil when every REST
// limit is off): the public server's (name "rest", cost nil) or another
// front's with its own buckets, metric and request cost.
func restLimiter(o *Options, env *envSettings, over *server.OverLimits, reg prometheus.Registerer, name string, cost func(*http.Request) int) (*server.RESTLimiter, error) {
	l := o.Limits
	if l.RESTRate == 0 && l.RESTMaxConcurrent == 0 {
		return nil, nil
	}
	proxies, err := server.ParseTrustedProxies(o.WsTrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("%w: -wstrustedproxies: %v", bchain.ErrConfig, err)
	}
	return server.NewRESTLimiter(server.RESTLimitConfig{
		Rate: l.RESTRate, Window: l.RESTWindow, Burst: l.RESTBurst, MaxConcurrent: l.RESTMaxConcurrent,
		BlockDuration: l.RESTBlock, StateTTL: l.RESTStateTTL, TrustedProxies: proxies, ClientIP: env.ClientIP, Metrics: reg,
		Name: name, Cost: cost, Late: o.Listen.late(),
	}, over), nil
}

// wsLimits sets the websocket's limits in cfg.
func wsLimits(o *Options, cfg *server.WebsocketConfig, over *server.OverLimits) {
	l := o.Limits
	cfg.MessageRate, cfg.MessageWindow, cfg.IPBlockDuration = l.WSMessageRate, l.WSMessageWindow, l.WSIPBlock
	cfg.GetAccountInfoLimit, cfg.Over = l.WSGetAccountInfo, over
	cfg.MaxPendingRequests = l.WSPending // 0 (Options not from flags): the server's default
	if l.WSPending == 0 && (o.IsSet("wspendingrequestslimit") || l.fromEnv["WS_PENDING_REQUESTS_LIMIT"]) {
		cfg.MaxPendingRequests = 1 << 20 // 0 given disables; the server-wide cap still holds
	}
}
