package app

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// -xpubcachemb sizes the account cache; the deprecated -xpubcachesize is
// converted at 60 bytes per entry with a warning, and loses to
// -xpubcachemb when both are given.
func TestXpubCacheBytes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int64
		warn string
	}{
		{nil, 128 << 20, ""},
		{[]string{"-xpubcachemb=16"}, 16 << 20, ""},
		{[]string{"-xpubcachesize=4000000"}, 240_000_000, "-xpubcachesize is deprecated: use -xpubcachemb"},
		{[]string{"-xpubcachesize=1000", "-xpubcachemb=8"}, 8 << 20, "ignored as -xpubcachemb is set"},
	} {
		o, err := ParseFlags(append([]string{"-blockchaincfg=x"}, tc.args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		got := o.xpubCacheBytes(slog.New(slog.NewTextHandler(&logs, nil)))
		if got != tc.want || tc.warn == "" && logs.Len() > 0 || !strings.Contains(logs.String(), tc.warn) {
			t.Errorf("%v: %d bytes, log %q; want %d, %q", tc.args, got, logs.String(), tc.want, tc.warn)
		}
	}
	for _, bad := range []string{"-xpubcachemb=0", "-xpubcachesize=0", "-xpubcachesize=-5"} {
		if _, err := ParseFlags([]string{"-blockchaincfg=x", bad}, io.Discard); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
