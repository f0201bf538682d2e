package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Blockbook's variables, prefixed with the network (or the coin shortcut
// without one), set origins, proxy attribution, caps and allowlists.
func TestReadEnv(t *testing.T) {
	btc := &bchain.Config{CoinShortcut: "BTC"}
	e, err := readEnv(lookupIn(map[string]string{}), btc)
	if err != nil {
		t.Fatal(err)
	}
	if e.AllowedOrigins != nil || e.RPCCall != nil || e.HistoryMaxTxsWS != 1_000_000 || e.HistoryMaxTxsREST != 250_000 ||
		len(e.ClientIP.Cloudflare) == 0 || e.ClientIP.CloudflareAnyPeer || len(e.Unsupported) != 0 {
		t.Fatalf("defaults: %+v", e)
	}
	e, err = readEnv(lookupIn(map[string]string{
		"BTC_WS_ALLOWED_ORIGINS": " https://a.example ,https://b.example,", "BTC_WS_TRUSTED_PROXIES": "198.51.100.0/24",
		"BTC_CLOUDFLARE_IPS": "off", "BTC_CLOUDFLARE_PSEUDO_IPV4": "true", "BTC_BALANCE_HISTORY_MAX_TXS": "10",
		"BTC_WS_BALANCE_HISTORY_MAX_TXS": "0", "INFURA_API_KEY": "k", "BTC_REST_UI_RATE_LIMIT": "5", "ETH_STAKING_POOL_CONTRACT": "x",
	}), btc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(e.AllowedOrigins, " ") != "https://a.example https://b.example" || len(e.ClientIP.RealIPProxies) != 1 ||
		!e.ClientIP.CloudflareAnyPeer || !e.ClientIP.PseudoIPv4 || e.HistoryMaxTxsWS != 0 || e.HistoryMaxTxsREST != 10 || len(e.Unsupported) != 1 {
		t.Fatalf("set: %+v", e)
	}
	// The network, when configured, is the prefix; the shortcut's names
	// are read too.
	op := &bchain.Config{CoinShortcut: "ETH", Network: "op"}
	e, err = readEnv(lookupIn(map[string]string{"OP_ALLOWED_RPC_CALL_TO": "0xAbC", "ETH_ALLOWED_EVM_CALL_METHODS": "0xdd62ed3e"}), op)
	if err != nil || e.prefix != "OP" || e.RPCCall == nil {
		t.Fatalf("network prefix: %+v %v", e, err)
	}
	for _, c := range []struct {
		to, data string
		ok       bool
	}{
		{"0xabc", "0x", true},
		{"0xdef", "0xdd62ed3e0000", true},
		{"0xdef", "0xDD62ED3E", true},
		{"0xdef", "0x70a08231", false},
		{"0xdef", "dd62ed3e00", false},  // no 0x
		{"0xdef", "0xdd62ed3e0", false}, // odd length
		{"0xdef", "0xdd62ed3ezz", false},
	} {
		if got := e.RPCCall.allowed(c.to, c.data); got != c.ok {
			t.Errorf("rpcCall to %s data %s: %v, want %v", c.to, c.data, got, c.ok)
		}
	}
}

// Malformed values stop the start with a message naming the variable.
func TestReadEnvErrors(t *testing.T) {
	cfg := &bchain.Config{CoinShortcut: "BTC"}
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{
		"BTC_TRUSTED_PROXIES":            "10.0.0.0/33",
		"BTC_WS_TRUSTED_PROXIES":         "0.0.0.0/4",
		"BTC_CLOUDFLARE_IPS":             "@" + empty,
		"BTC_WS_CLOUDFLARE_IPS":          "nonsense",
		"BTC_CLOUDFLARE_PSEUDO_IPV4":     "perhaps",
		"BTC_BALANCE_HISTORY_MAX_TXS":    "-1",
		"BTC_WS_BALANCE_HISTORY_MAX_TXS": "many",
		"BTC_ALLOWED_RPC_CALL_TO":        " , ",
		"BTC_ALLOWED_EVM_CALL_METHODS":   "0x1234",
	} {
		_, err := readEnv(lookupIn(map[string]string{name: v}), cfg)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: %v", name, v, err)
		}
	}
	// A ranges file replaces the compiled-in list.
	file := filepath.Join(t.TempDir(), "cf.txt")
	if err := os.WriteFile(file, []byte("# edge\n192.0.2.0/24 # one\n\n2001:db8::/32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := readEnv(lookupIn(map[string]string{"BTC_CLOUDFLARE_IPS": "@" + file}), cfg)
	if err != nil || len(e.ClientIP.Cloudflare) != 2 {
		t.Fatalf("ranges file: %+v %v", e, err)
	}
}

// -balancehistorymaxtxs, when given, wins over the environment on both
// surfaces; 0 (flag or variable) means no cap.
func TestHistoryLimits(t *testing.T) {
	env := &envSettings{HistoryMaxTxsWS: 0, HistoryMaxTxsREST: 7}
	o, err := ParseFlags([]string{"-blockchaincfg=x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := historyLimits(o, env, apiLimits()); l.MaxHistoryTxs != -1 || l.MaxHistoryTxsREST != 7 {
		t.Fatalf("from the environment: %+v", l)
	}
	o, _ = ParseFlags([]string{"-blockchaincfg=x", "-balancehistorymaxtxs=3"}, nil)
	if l := historyLimits(o, env, apiLimits()); l.MaxHistoryTxs != 3 || l.MaxHistoryTxsREST != 3 {
		t.Fatalf("flag: %+v", l)
	}
	o, _ = ParseFlags([]string{"-blockchaincfg=x", "-balancehistorymaxtxs=0"}, nil)
	if l := historyLimits(o, env, apiLimits()); l.MaxHistoryTxs != -1 || l.MaxHistoryTxsREST != -1 {
		t.Fatalf("flag 0: %+v", l)
	}
}
