package fiat

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

func TestFromChainConfig(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	base := func(params string) *bchain.Config {
		return &bchain.Config{CoinName: "Bitcoin", CoinShortcut: "BTC", FiatRates: "coingecko", FiatRatesParams: params}
	}

	// Disabled unless both keys are set, as in Blockbook.
	for _, c := range []*bchain.Config{{}, {FiatRates: "coingecko"}, {FiatRatesParams: `{"coin":"bitcoin","periodSeconds":900}`}} {
		if cfg, err := FromChainConfig(c, getenv); cfg != nil || err != nil {
			t.Errorf("%+v: %+v %v", c, cfg, err)
		}
	}
	for params, want := range map[string]string{
		`{"coin":"bitcoin"}`:                                  "missing periodSeconds",
		`{"periodSeconds":900}`:                               "missing coin",
		`{"coin":"bitcoin","periodSeconds":"900"}`:            "not a valid JSON object",
		`{"coin":"bitcoin","periodSeconds":900,"plan":"pro"}`: `plan "pro" needs an API key`,
	} {
		if _, err := FromChainConfig(base(params), getenv); !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", params, err, want)
		}
	}
	other := base(`{"coin":"bitcoin","periodSeconds":900}`)
	other.FiatRates = "coinmarketcap"
	if _, err := FromChainConfig(other, getenv); !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), "unknown provider") {
		t.Errorf("other provider: %v", err)
	}

	// Blockbook's shipped bitcoin.json values.
	c := base(`{"coin": "bitcoin", "periodSeconds": 900}`)
	c.FiatRatesVsCurrencies = "AED,ARS, USD,BTC,,"
	cfg, err := FromChainConfig(c, getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.defaults()
	if cfg.URL != FreeAPIURL || cfg.Plan != PlanFree || cfg.Period != 900*time.Second || cfg.APIKey != "" ||
		!slices.Equal(cfg.VsCurrencies, []string{"aed", "ars", "usd", "btc"}) || len(cfg.Warnings) != 0 {
		t.Fatalf("bitcoin.json: %+v", cfg)
	}
	// Blockbook's minimum period is a minute.
	cfg, _ = FromChainConfig(base(`{"coin":"bitcoin","periodSeconds":5}`), getenv)
	if cfg.defaults(); cfg.Period != time.Minute {
		t.Errorf("period %v", cfg.Period)
	}

	// Keys from the environment: <NETWORK>_, then <SHORTCUT>_, then the
	// plain name. A key without a plan means pro (Blockbook's backward
	// compatibility), unless the URL is CoinGecko's public one or the plan
	// says demo.
	env["COINGECKO_API_KEY"] = "plain"
	cfg, _ = FromChainConfig(base(`{"coin":"bitcoin","periodSeconds":900}`), getenv)
	if cfg.defaults(); cfg.APIKey != "plain" || cfg.Plan != PlanPro || cfg.URL != ProAPIURL {
		t.Errorf("plain key: %+v", cfg)
	}
	env["BTC_COINGECKO_API_KEY"] = "shortcut"
	cfg, _ = FromChainConfig(base(`{"coin":"bitcoin","periodSeconds":900,"plan":"demo"}`), getenv)
	if cfg.defaults(); cfg.APIKey != "shortcut" || cfg.Plan != PlanFree || cfg.URL != FreeAPIURL {
		t.Errorf("shortcut key, demo plan: %+v", cfg)
	}
	net := base(`{"coin":"bitcoin","periodSeconds":900,"tipUrl":"https://api.coingecko.com/api/v3/"}`)
	net.Network = "testnet"
	env["TESTNET_COINGECKO_API_KEY"] = "network"
	cfg, _ = FromChainConfig(net, getenv)
	if cfg.defaults(); cfg.APIKey != "network" || cfg.Plan != PlanFree || cfg.URL != FreeAPIURL {
		t.Errorf("network key, public URL: %+v", cfg)
	}
	// Blockbook's url is the bootstrap URL, not the API's; its reconcile
	// keys default to on and 5 minutes.
	cfg, _ = FromChainConfig(base(`{"coin":"bitcoin","periodSeconds":900,"url":"http://mirror.test/api/v3/","plan":"demo"}`), getenv)
	if cfg.defaults(); cfg.BootstrapURL != "http://mirror.test/api/v3" || cfg.URL != FreeAPIURL || !cfg.Reconcile || cfg.ReconcileBudget != 5*time.Minute {
		t.Errorf("bootstrap url: %+v", cfg)
	}
	for _, bad := range []string{`"url":"ftp://mirror.test/"`, `"url":"mirror.test/api"`, `"tipUrl":"http://"`} {
		if _, err := FromChainConfig(base(`{"coin":"bitcoin","periodSeconds":900,`+bad+`}`), getenv); !errors.Is(err, bchain.ErrConfig) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	cfg, _ = FromChainConfig(base(`{"coin":"bitcoin","periodSeconds":900,"reconcileHistoricalAtStartup":false,"reconcileHistoricalMaxMinutes":2}`), getenv)
	if cfg.defaults(); cfg.BootstrapURL != "" || cfg.Reconcile || cfg.ReconcileBudget != 2*time.Minute {
		t.Errorf("reconcile keys: %+v", cfg)
	}
	cfg, _ = FromChainConfig(base(`{"coin":"bitcoin","periodSeconds":900,"plan":"enterprise","platformIdentifier":"ethereum","platformVsCurrency":"usd"}`), getenv)
	if cfg.Plan != PlanPro || len(cfg.Warnings) != 1 || !cfg.TokenRates() || cfg.Platform != "ethereum" || cfg.PlatformVsCurrency != "usd" || cfg.PlatformVsIsCoin {
		t.Errorf("unknown plan and token params: %+v", cfg)
	}
	if w := cfg.DropTokenRates(); w == "" || cfg.TokenRates() || cfg.DropTokenRates() != "" {
		t.Errorf("dropping token rates: %q %+v", w, cfg)
	}
	eth := base(`{"coin":"ethereum","periodSeconds":900,"platformIdentifier":"ethereum","platformVsCurrency":"ETH"}`)
	eth.CoinShortcut = "ETH"
	if cfg, _ = FromChainConfig(eth, getenv); !cfg.TokenRates() || !cfg.PlatformVsIsCoin || cfg.PlatformVsCurrency != "eth" {
		t.Errorf("token rates in the coin: %+v", cfg)
	}
}

// The shipped configs parse; those that set fiat_rates, as Blockbook's
// (mainnet Bitcoin, the EVM mainnets), download rates, the test networks
// do not.
func TestShippedConfigsFiat(t *testing.T) {
	files, err := filepath.Glob("../configs/coins/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("configs: %v %v", files, err)
	}
	for _, f := range files {
		c, err := bchain.LoadConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := FromChainConfig(c, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		mainnet := c.CoinName == "Bitcoin"
		if (cfg != nil) != (c.FiatRates != "") || mainnet && c.FiatRates == "" {
			t.Errorf("%s: fiat rates %+v", f, cfg)
		} else if mainnet && (cfg.Coin != "bitcoin" || cfg.Period != 15*time.Minute || len(cfg.VsCurrencies) != 47 || !slices.Contains(cfg.VsCurrencies, "usd")) {
			t.Errorf("%s: %+v", f, cfg)
		}
	}
}

// A config written before the bootstrap named CoinGecko's API in url (then
// the API's address): it stays the API, with a warning, not a mirror that
// would get every currency's whole history at the mirror's pace.
func TestFromChainConfigOldURL(t *testing.T) {
	c := &bchain.Config{CoinName: "Bitcoin", CoinShortcut: "BTC", FiatRates: "coingecko",
		FiatRatesParams: `{"coin":"bitcoin","periodSeconds":900,"url":"` + FreeAPIURL + `/"}`}
	cfg, err := FromChainConfig(c, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.URL != FreeAPIURL || cfg.BootstrapURL != "" || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "tipUrl") {
		t.Errorf("url naming the API: API %q, mirror %q, warnings %q", cfg.URL, cfg.BootstrapURL, cfg.Warnings)
	}
	c.FiatRatesParams = `{"coin":"bitcoin","periodSeconds":900,"url":"HTTPS://API.coingecko.com/api/v3","tipUrl":"https://api.example/v3"}`
	if cfg, err = FromChainConfig(c, func(string) string { return "" }); err != nil || cfg.URL != "https://api.example/v3" || cfg.BootstrapURL != "" || len(cfg.Warnings) != 1 {
		t.Errorf("url naming the API with tipUrl set: %+v %v", cfg, err)
	}
	c.FiatRatesParams = `{"coin":"bitcoin","periodSeconds":900,"url":"https://mirror.example/api/v3"}`
	if cfg, err = FromChainConfig(c, func(string) string { return "" }); err != nil || cfg.BootstrapURL != "https://mirror.example/api/v3" || len(cfg.Warnings) != 0 {
		t.Errorf("url naming a mirror: %+v %v", cfg, err)
	}
}
