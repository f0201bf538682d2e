package app

import (
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func parseLimitOpts(t *testing.T, args ...string) *Options {
	t.Helper()
	o := &Options{set: map[string]bool{}}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	declareLimitFlags(fs, &o.Limits)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o
}

func envGet(m map[string]string) envGetter {
	return func(suffix string) (string, string, bool) {
		v, ok := m["BTC_"+suffix]
		return "BTC_" + suffix, v, ok
	}
}

// A variable sets a limit unless its flag was given; bad values fail.
func TestLimitEnv(t *testing.T) {
	o := parseLimitOpts(t, "-restburst=7")
	if o.Limits.RESTRate != 300 || o.Limits.WSPending != 48 || o.Limits.WSIPBlock != time.Hour {
		t.Fatalf("defaults: %+v", o.Limits)
	}
	err := readLimitEnv(envGet(map[string]string{
		"BTC_REST_UI_RATE_LIMIT": " 20 ", "BTC_REST_UI_BURST": "99", "BTC_WS_MESSAGE_RATE_WINDOW": "30s",
		"BTC_WS_GETACCOUNTINFO_LIMIT": "0", "BTC_REST_UI_BLOCK_DURATION": "5m",
	}), o)
	if err != nil {
		t.Fatal(err)
	}
	l := o.Limits
	if l.RESTRate != 20 || l.RESTBurst != 7 || l.WSMessageWindow != 30*time.Second || l.WSGetAccountInfo != 0 || l.RESTBlock != 5*time.Minute {
		t.Fatalf("env: %+v", l)
	}
	for k, v := range map[string]string{
		"BTC_REST_UI_RATE_LIMIT": "-1", "BTC_WS_PENDING_REQUESTS_LIMIT": "many", "BTC_WS_IP_BLOCK_DURATION": "12", "BTC_REST_UI_BURST": "0",
	} {
		err := readLimitEnv(envGet(map[string]string{k: v}), parseLimitOpts(t))
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(k, "BTC")) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}

// Runtime settings validate before they apply, and "" unsets.
func TestRuntimeSettings(t *testing.T) {
	env := &envSettings{get: envGet(map[string]string{"BTC_ALLOWED_RPC_CALL_TO": "0xaa"})}
	var err error
	if env.RPCCall, err = readRPCCallAllowlist(env.get); err != nil {
		t.Fatal(err)
	}
	s := newRuntimeSettings(env, slog.New(slog.DiscardHandler))
	if s.allowed("0xbb", "0x") || !s.allowed("0xAA", "0x") {
		t.Fatal("env allowlist not applied")
	}
	if st, _ := s.Get("ALLOWED_RPC_CALL_TO"); st.Source != "env" || st.Value != "0xaa" {
		t.Fatalf("get: %+v", st)
	}
	if _, err := s.Set("ALLOWED_EVM_CALL_METHODS", "0x12"); err == nil {
		t.Fatal("a bad selector was accepted")
	}
	if _, err := s.Set("ALLOWED_RPC_CALL_TO", " , "); err == nil {
		t.Fatal("a value of separators was accepted")
	}
	if _, err := s.Get("NOPE"); err == nil {
		t.Fatal("unknown key accepted")
	}
	if st, err := s.Set("ALLOWED_RPC_CALL_TO", "0xbb"); err != nil || st.Source != "override" {
		t.Fatalf("set: %+v %v", st, err)
	}
	if s.allowed("0xaa", "0x") || !s.allowed("0xbb", "0x") {
		t.Fatal("override not applied")
	}
	if _, err := s.Set("ALLOWED_RPC_CALL_TO", ""); err != nil || !s.allowed("0xcc", "0x") {
		t.Fatalf("empty override must allow all: %v", err)
	}
	if st, err := s.Reset("ALLOWED_RPC_CALL_TO"); err != nil || st.Source != "env" || s.allowed("0xbb", "0x") {
		t.Fatalf("reset: %+v %v", st, err)
	}
}
