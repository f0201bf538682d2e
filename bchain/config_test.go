package bchain

import (
	"errors"
	"strings"
	"testing"
)

// The block filter keys are validated when the config is loaded, with a
// message naming the key; Blockbook's production values load.
func TestParseConfigBlockFilters(t *testing.T) {
	base := `"coin_name": "Bitcoin", "rpc_url": "http://127.0.0.1:8030"`
	for _, tc := range []struct {
		extra string
		err   string // "" means valid
	}{
		{``, ""},
		{`, "block_golomb_filter_p": 20, "block_filter_scripts": "taproot-noordinals", "block_filter_use_zeroed_key": true`, ""},
		{`, "block_golomb_filter_p": 32, "block_filter_scripts": "taproot"`, ""},
		{`, "block_golomb_filter_p": 19, "block_filter_scripts": ""`, ""},
		{`, "block_golomb_filter_p": 33`, "block_golomb_filter_p must be at most 32"},
		{`, "block_golomb_filter_p": 256`, "not valid JSON"},
		{`, "block_golomb_filter_p": -1`, "not valid JSON"},
		{`, "block_golomb_filter_p": 20, "block_filter_scripts": "p2tr"`, `block_filter_scripts must be`},
		{`, "block_filter_scripts": "Taproot"`, `block_filter_scripts must be`},
	} {
		c, err := ParseConfig([]byte("{" + base + tc.extra + "}"))
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.extra, err)
			}
			continue
		}
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, %v; want an ErrConfig containing %q", tc.extra, c, err, tc.err)
		}
	}
	c, err := ParseConfig([]byte(`{` + base + `, "block_golomb_filter_p": 20, "block_filter_scripts": "taproot-noordinals", "block_filter_use_zeroed_key": true}`))
	if err != nil || c.BlockGolombFilterP != 20 || c.BlockFilterScripts != "taproot-noordinals" || !c.BlockFilterUseZeroedKey {
		t.Fatalf("production filter settings: %+v %v", c, err)
	}
}

// The Ethereum-type keys of Blockbook's EVM configs: parsed, their forms
// checked, and listed for the warning on other chain types.
func TestEthNetworkKeys(t *testing.T) {
	const base = `"coin_name": "Optimism", "rpc_url": "http://127.0.0.1:8300"`
	c, err := ParseConfig([]byte(`{` + base + `, "disableMempoolSync": true, "trace_timeout": "10s",
		"missingBlockRetry": {"retryDelayMs": 1000, "recheckThreshold": 10, "tipRecheckThreshold": 3, "maxStallMs": 60000},
		"consensusNodeVersion": "http://localhost:7536/eth/v1/node/version", "fourByteSignatures": "https://www.4byte.directory/api/v1/signatures/"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.DisableMempoolSync || c.TraceTimeout != "10s" || c.MissingBlockRetry == nil || c.MissingBlockRetry.RecheckThreshold != 10 ||
		c.MissingBlockRetry.MaxStallMs != 60000 || c.ConsensusNodeVersion != "http://localhost:7536/eth/v1/node/version" ||
		c.FourByteSignatures != "https://www.4byte.directory/api/v1/signatures/" {
		t.Fatalf("parsed %+v", c)
	}
	if got := strings.Join(c.EthOnlyKeys(), ","); got != "disableMempoolSync,missingBlockRetry,trace_timeout,consensusNodeVersion,fourByteSignatures" {
		t.Errorf("EthOnlyKeys %q", got)
	}
	for extra, msg := range map[string]string{
		`"trace_timeout": "10"`:                        "trace_timeout must be a positive duration",
		`"trace_timeout": "-1s"`:                       "trace_timeout must be a positive duration",
		`"missingBlockRetry": {"retryDelayMs": -1}`:    "missingBlockRetry values must not be negative",
		`"missingBlockRetry": 5`:                       "not valid JSON",
		`"consensusNodeVersion": "localhost:7536/eth"`: "consensusNodeVersion must be an http(s) URL",
		`"disableMempoolSync": "yes"`:                  "not valid JSON",
		`"fourByteSignatures": "ftp://4byte/"`:         "fourByteSignatures must be an http(s) URL",
	} {
		if _, err := ParseConfig([]byte(`{` + base + `, ` + extra + `}`)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", extra, err, msg)
		}
	}
	if c, _ := ParseConfig([]byte(`{` + base + `}`)); len(c.EthOnlyKeys()) != 0 {
		t.Errorf("EthOnlyKeys of a config without them: %v", c.EthOnlyKeys())
	}
}
