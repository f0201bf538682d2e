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
