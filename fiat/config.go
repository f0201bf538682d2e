// Package fiat downloads the coin's exchange rates from CoinGecko into the
// index's fiatRates column family: the current rates every period and the
// daily history of every vs-currency, resuming from what is stored. It runs
// on its own goroutines, beside the sync worker, and never waits for it.
package fiat

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
)

// CoinGecko plans: the public API (with or without a demo key) and the paid
// one. They differ in base URL, key header and how far back history goes.
const (
	PlanFree = "free"
	PlanPro  = "pro"

	FreeAPIURL = "https://api.coingecko.com/api/v3"
	ProAPIURL  = "https://pro-api.coingecko.com/api/v3"

	// freeHistoryDays is how far back the public API serves history.
	freeHistoryDays = 365
	// MinPeriod is the shortest period of current-rate downloads (Blockbook's).
	MinPeriod = time.Minute
)

// Config configures a Downloader. FromChainConfig builds it from Blockbook's
// configuration keys; zero durations take defaults.
type Config struct {
	URL string // API base URL, e.g. FreeAPIURL (fiat_rates_params' tipUrl)
	// BootstrapURL is Blockbook's bootstrap URL (fiat_rates_params' url):
	// a mirror of the API's paths and JSON (a CDN) that serves the daily
	// history, its first "max" download and the startup reconcile, and the
	// vs-currency and coin lists; "" sends everything to URL (bootstrap.go).
	BootstrapURL string
	// BootstrapGap spaces history requests to BootstrapURL (100 ms,
	// Blockbook's).
	BootstrapGap time.Duration
	// Reconcile turns on the startup repair of holes in the daily history
	// (reconcileHistoricalAtStartup, default on); ReconcileBudget bounds
	// it (reconcileHistoricalMaxMinutes, 5 minutes).
	Reconcile       bool
	ReconcileBudget time.Duration
	Coin            string   // CoinGecko coin id, e.g. "bitcoin"
	Plan            string   // PlanFree or PlanPro
	APIKey          string   // sent as x-cg-demo-api-key (free) or x-cg-pro-api-key (pro)
	VsCurrencies    []string // lowercase vs-currencies to keep; empty keeps every supported one
	// Period is how often the current rates are downloaded (periodSeconds).
	Period time.Duration
	// RequestGap spaces history requests (default: 2.1 s on the free plan,
	// whose limit is 30 calls a minute, 100 ms on pro).
	RequestGap time.Duration
	// HTTPTimeout bounds one request (15 s, Blockbook's).
	HTTPTimeout time.Duration
	// MaxAttempts bounds tries of a throttled request (4); MaxBackoff caps
	// one wait, Retry-After included (10 min).
	MaxAttempts int
	MaxBackoff  time.Duration
	Log         *slog.Logger
	Metrics     prometheus.Registerer
	Client      *http.Client // default: one with HTTPTimeout
	// Now is the clock (default time.Now); tests fix it.
	Now func() time.Time
	// Warnings are what FromChainConfig accepted but the operator should
	// know (logged at start).
	Warnings []string

	// Token rates (Ethereum-type chains): Platform is CoinGecko's asset
	// platform id (fiat_rates_params' platformIdentifier, e.g. "ethereum"),
	// PlatformVsCurrency the currency the token prices are asked in
	// (platformVsCurrency, e.g. "usd"); both empty: no token rates.
	Platform           string
	PlatformVsCurrency string
	// PlatformVsIsCoin: platformVsCurrency is the coin itself (its
	// shortcut, as Blockbook compares), so token prices are already in coins.
	PlatformVsIsCoin bool
	// MaxTokens bounds the tokens whose rates are kept (default 5000).
	MaxTokens int
}

// TokenRates reports whether token rates are configured.
func (c *Config) TokenRates() bool { return c.Platform != "" && c.PlatformVsCurrency != "" }

// DropTokenRates turns token rates off where the chain has no tokens
// (Bitcoin-type), returning the warning to log ("" when they were off).
func (c *Config) DropTokenRates() string {
	if !c.TokenRates() {
		return ""
	}
	c.Platform, c.PlatformVsCurrency = "", ""
	return "fiat_rates_params: platformIdentifier asks for token rates, which Bitcoin-type chains do not have; ignored"
}

func (c *Config) defaults() {
	c.URL = strings.TrimSuffix(c.URL, "/")
	if c.URL == "" {
		c.URL = FreeAPIURL
		if c.Plan == PlanPro {
			c.URL = ProAPIURL
		}
	}
	if c.Plan == "" {
		c.Plan = PlanFree
	}
	if c.Period < MinPeriod {
		c.Period = MinPeriod
	}
	if c.RequestGap <= 0 {
		c.RequestGap = 2100 * time.Millisecond
		if c.Plan == PlanPro {
			c.RequestGap = 100 * time.Millisecond
		}
	}
	c.BootstrapURL = strings.TrimSuffix(c.BootstrapURL, "/")
	if c.BootstrapGap <= 0 {
		c.BootstrapGap = 100 * time.Millisecond
	}
	if c.ReconcileBudget <= 0 {
		c.ReconcileBudget = 5 * time.Minute
	}
	if c.HTTPTimeout <= 0 {
		c.HTTPTimeout = 15 * time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 4
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Minute
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 5000
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: c.HTTPTimeout}
	}
}

// historyDaysLimit is how far back the plan serves history (0: no limit,
// "max"): what the bootstrap asks without a mirror.
func (c *Config) historyDaysLimit() int {
	if c.Plan == PlanPro {
		return 0
	}
	return freeHistoryDays
}

// params is fiat_rates_params, Blockbook's JSON string.
type params struct {
	URL                string `json:"url"`    // Blockbook's bootstrap URL
	TipURL             string `json:"tipUrl"` // ours: the API base (Blockbook's is fixed)
	Coin               string `json:"coin"`
	PeriodSeconds      int64  `json:"periodSeconds"`
	Plan               string `json:"plan"`
	PlatformIdentifier string `json:"platformIdentifier"`
	PlatformVsCurrency string `json:"platformVsCurrency"`
	// Blockbook's startup reconcile: absent means on; minutes <= 0 the default.
	ReconcileHistoricalAtStartup  *bool `json:"reconcileHistoricalAtStartup"`
	ReconcileHistoricalMaxMinutes *int  `json:"reconcileHistoricalMaxMinutes"`
}

// FromChainConfig reads Blockbook's keys: fiat_rates (the provider,
// "coingecko"), fiat_rates_params ({"coin", "periodSeconds", optional
// "url" (the bootstrap URL), "plan", "reconcileHistoricalAtStartup",
// "reconcileHistoricalMaxMinutes", "platformIdentifier" with
// "platformVsCurrency" for token rates, and our "tipUrl"}) and
// fiat_rates_vs_currencies. It returns nil when
// either of the first two is empty (rates disabled, as in Blockbook). The
// API key comes from the environment, as in Blockbook:
// <NETWORK>_COINGECKO_API_KEY, <COIN SHORTCUT>_COINGECKO_API_KEY or
// COINGECKO_API_KEY, the first set.
func FromChainConfig(c *bchain.Config, getenv func(string) string) (*Config, error) {
	if c.FiatRates == "" || c.FiatRatesParams == "" {
		return nil, nil
	}
	if c.FiatRates != "coingecko" {
		return nil, fmt.Errorf("%w: fiat_rates: unknown provider %q (only \"coingecko\" is supported)", bchain.ErrConfig, c.FiatRates)
	}
	var p params
	if err := json.Unmarshal([]byte(c.FiatRatesParams), &p); err != nil {
		return nil, fmt.Errorf("%w: fiat_rates_params is not a valid JSON object: %v", bchain.ErrConfig, err)
	}
	if p.PeriodSeconds <= 0 {
		return nil, fmt.Errorf("%w: fiat_rates_params: missing periodSeconds", bchain.ErrConfig)
	}
	if p.Coin == "" {
		return nil, fmt.Errorf("%w: fiat_rates_params: missing coin (the CoinGecko coin id, e.g. \"bitcoin\")", bchain.ErrConfig)
	}
	cfg := &Config{URL: strings.TrimSpace(p.TipURL), BootstrapURL: strings.TrimSpace(p.URL), Coin: p.Coin,
		Period: time.Duration(p.PeriodSeconds) * time.Second, Reconcile: true}
	for key, u := range map[string]string{"url": cfg.BootstrapURL, "tipUrl": cfg.URL} {
		if err := checkBaseURL(u); err != nil {
			return nil, fmt.Errorf("%w: fiat_rates_params: %s: %v", bchain.ErrConfig, key, err)
		}
	}
	if u := strings.TrimRight(cfg.BootstrapURL, "/"); apiPlan(u) != "" {
		// Before Blockbook's bootstrap, url was the API's address here;
		// the API as a mirror would get every history at the mirror's pace.
		if cfg.URL == "" {
			cfg.URL = u
		}
		cfg.Warnings = append(cfg.Warnings, "fiat_rates_params: url is the history bootstrap mirror (as in Blockbook) and the API goes in tipUrl; "+
			"url names CoinGecko's API, so it is not used as a mirror (and is the API unless tipUrl is set)")
		cfg.BootstrapURL = ""
	}
	if p.ReconcileHistoricalAtStartup != nil {
		cfg.Reconcile = *p.ReconcileHistoricalAtStartup
	}
	if m := p.ReconcileHistoricalMaxMinutes; m != nil && *m > 0 {
		cfg.ReconcileBudget = time.Duration(*m) * time.Minute
	}
	for _, v := range strings.Split(strings.ToLower(c.FiatRatesVsCurrencies), ",") {
		if v = strings.TrimSpace(v); v != "" {
			cfg.VsCurrencies = append(cfg.VsCurrencies, v)
		}
	}
	for _, prefix := range []string{c.Network, c.CoinShortcut, "-"} {
		name := "COINGECKO_API_KEY"
		switch prefix {
		case "":
			continue
		case "-":
		default:
			name = strings.ToUpper(prefix) + "_" + name
		}
		if cfg.APIKey = strings.TrimSpace(getenv(name)); cfg.APIKey != "" {
			break
		}
	}
	plan, err := resolvePlan(p.Plan, cfg.URL, cfg.APIKey != "")
	if err != nil {
		return nil, err
	}
	cfg.Plan = plan
	if p.Plan != "" && !strings.EqualFold(p.Plan, plan) && !strings.EqualFold(p.Plan, "demo") {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("fiat_rates_params: unknown plan %q, using %q", p.Plan, plan))
	}
	if p.PlatformIdentifier != "" && p.PlatformVsCurrency != "" {
		cfg.Platform = strings.TrimSpace(p.PlatformIdentifier)
		cfg.PlatformVsCurrency = strings.ToLower(strings.TrimSpace(p.PlatformVsCurrency))
		cfg.PlatformVsIsCoin = strings.EqualFold(c.CoinShortcut, cfg.PlatformVsCurrency)
	}
	return cfg, nil
}

// resolvePlan follows Blockbook: an explicit plan ("demo" is the free one),
// else CoinGecko's own URL tells, else an API key means pro.
func resolvePlan(plan, url string, hasKey bool) (string, error) {
	switch strings.ToLower(strings.TrimSpace(plan)) {
	case PlanFree, "demo":
		return PlanFree, nil
	case PlanPro:
		if !hasKey {
			return "", fmt.Errorf("%w: fiat_rates_params: plan \"pro\" needs an API key in COINGECKO_API_KEY (or <NETWORK>_ or <COIN SHORTCUT>_COINGECKO_API_KEY)", bchain.ErrConfig)
		}
		return PlanPro, nil
	}
	// No plan, or an unknown one (Blockbook warns and goes on likewise).
	if p := apiPlan(url); p != "" {
		return p, nil
	}
	if hasKey {
		return PlanPro, nil
	}
	return PlanFree, nil
}

// checkBaseURL accepts "" (the default) or an absolute http(s) URL.
func checkBaseURL(u string) error {
	if u == "" {
		return nil
	}
	pu, err := url.Parse(u)
	if err != nil {
		return err
	}
	if (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" || pu.RawQuery != "" {
		return fmt.Errorf("%q is not an http(s) base URL", u)
	}
	return nil
}

// apiPlan is the plan of CoinGecko's own API base url names ("" for any
// other url).
func apiPlan(url string) string {
	switch strings.TrimSuffix(strings.ToLower(url), "/") {
	case FreeAPIURL:
		return PlanFree
	case ProAPIURL:
		return PlanPro
	}
	return ""
}
