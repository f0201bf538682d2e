package bchain

import (
	"errors"
	"testing"
)

func TestConfigENSKeys(t *testing.T) {
	const reg, base = "0x00000000000C2E074eC69A0dFb2997BA6C7d2e1e", "0x57f1887a8BF19b14fC0dF6Fd9B2acc9Af147eA85"
	for _, c := range []struct {
		reg, base string
		ok        bool
	}{
		{"", "", true}, {reg, base, true}, {reg, "", false}, {"", base, false},
		{"0x1234", base, false}, {reg, "57f1887a8BF19b14fC0dF6Fd9B2acc9Af147eA8500", false}, {reg, "0xz7f1887a8BF19b14fC0dF6Fd9B2acc9Af147eA85", false},
	} {
		doc := `{"coin_name": "Ethereum", "rpc_url": "http://x", "ens_registry": "` + c.reg + `", "ens_base_registrar": "` + c.base + `"}`
		cfg, err := ParseConfig([]byte(doc))
		if c.ok != (err == nil) || (err != nil && !errors.Is(err, ErrConfig)) {
			t.Errorf("%q %q: %v", c.reg, c.base, err)
		}
		if err == nil && (cfg.ENSRegistry != c.reg || cfg.ENSBaseRegistrar != c.base) {
			t.Errorf("%q %q: parsed %q %q", c.reg, c.base, cfg.ENSRegistry, cfg.ENSBaseRegistrar)
		}
	}
}
