package app

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

func TestReadRelayEnv(t *testing.T) {
	op := &bchain.Config{CoinShortcut: "ETH", Network: "OP"}
	e, err := readEnv(lookupIn(map[string]string{
		"OP_ALTERNATIVE_SENDTX_URLS": " http://a/key1 , ,http://b ", "OP_ALTERNATIVE_SENDTX_ONLY": "True",
		"OP_ALTERNATIVE_FETCH_MEMPOOL_TX": "yes",
	}), op)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Relay
	if !slices.Equal(r.URLs, []string{"http://a/key1", "http://b"}) || !r.Only || r.Fetch || r.Var != "OP_ALTERNATIVE_SENDTX_URLS" {
		t.Fatalf("relay env %+v", r)
	}
	if len(e.Unsupported) != 0 {
		t.Fatalf("private sending variables reported unsupported: %v", e.Unsupported)
	}
	// The shortcut's name is read when the network's is not set.
	e, _ = readEnv(lookupIn(map[string]string{"ETH_ALTERNATIVE_SENDTX_URLS": "http://c", "ETH_ALTERNATIVE_FETCH_MEMPOOL_TX": "TRUE"}), op)
	if !slices.Equal(e.Relay.URLs, []string{"http://c"}) || e.Relay.Only || !e.Relay.Fetch {
		t.Fatalf("relay env by shortcut %+v", e.Relay)
	}
}

func TestRelayTimeouts(t *testing.T) {
	c := &bchain.Config{MempoolTxTimeoutHours: 12}
	for _, tc := range []struct {
		mempool, alt string
		relay        bool
		wantMp       time.Duration
		wantAlt      time.Duration
	}{
		{"", "", false, 12 * time.Hour, 5 * time.Minute},
		{"", "", true, 10 * time.Minute, 5 * time.Minute},
		{"30m", "90s", true, 30 * time.Minute, 90 * time.Second},
		{"0s", "", true, 0, 5 * time.Minute},
	} {
		c.MempoolTxTimeout, c.AlternativeMempoolTxTimeout = tc.mempool, tc.alt
		mp, err1 := c.MempoolTimeout(tc.relay)
		alt, err2 := c.AlternativeMempoolTimeout()
		if err1 != nil || err2 != nil || mp != tc.wantMp || alt != tc.wantAlt {
			t.Errorf("%+v: %v %v %v %v", tc, mp, alt, err1, err2)
		}
	}
	for _, bad := range []string{"soon", "-1m"} {
		c.MempoolTxTimeout, c.AlternativeMempoolTxTimeout = bad, bad
		if _, err := c.MempoolTimeout(true); !errors.Is(err, bchain.ErrConfig) {
			t.Errorf("mempoolTxTimeout %q: %v", bad, err)
		}
		if _, err := c.AlternativeMempoolTimeout(); !errors.Is(err, bchain.ErrConfig) {
			t.Errorf("alternativeMempoolTxTimeout %q: %v", bad, err)
		}
	}
	c.AlternativeMempoolTxTimeout = "0s"
	if _, err := c.AlternativeMempoolTimeout(); !errors.Is(err, bchain.ErrConfig) {
		t.Errorf("alternativeMempoolTxTimeout 0: %v", err)
	}
}
