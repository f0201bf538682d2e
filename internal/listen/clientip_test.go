package listen

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// Blockbook's attribution: X-Real-Ip and CF-Connecting-IP(v6) are believed
// only from the peers env.md names.
func TestRealClientIP(t *testing.T) {
	cf := ClientIPConfig{Cloudflare: CloudflareRanges()}
	proxies := ClientIPConfig{RealIPProxies: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}, Cloudflare: CloudflareRanges()}
	for _, tc := range []struct {
		name string
		cfg  ClientIPConfig
		peer string
		hdr  map[string]string
		want string
	}{
		{"direct public peer forging headers", cf, "203.0.113.9:1", map[string]string{"X-Real-Ip": "1.2.3.4", "CF-Connecting-IP": "1.2.3.4"}, "203.0.113.9"},
		{"cloudflare edge", cf, "104.16.0.1:1", map[string]string{"CF-Connecting-IP": "1.2.3.4"}, "1.2.3.4"},
		{"cloudflare edge: X-Real-Ip not believed", cf, "104.16.0.1:1", map[string]string{"X-Real-Ip": "1.2.3.4"}, "104.16.0.1"},
		{"local proxy: CF header", cf, "127.0.0.1:1", map[string]string{"CF-Connecting-IP": "1.2.3.4"}, "1.2.3.4"},
		{"local proxy: X-Real-Ip", cf, "10.0.0.2:1", map[string]string{"X-Real-Ip": "1.2.3.5"}, "1.2.3.5"},
		{"CF-Connecting-IPv6 ignored by default", cf, "104.16.0.1:1", map[string]string{"CF-Connecting-IPv6": "2001:db8::1", "CF-Connecting-IP": "1.2.3.4"}, "1.2.3.4"},
		{"pseudo IPv4 mode", ClientIPConfig{Cloudflare: CloudflareRanges(), PseudoIPv4: true}, "104.16.0.1:1", map[string]string{"CF-Connecting-IPv6": "2001:db8::1", "CF-Connecting-IP": "240.0.0.1"}, "2001:db8::1"},
		{"verification off", ClientIPConfig{CloudflareAnyPeer: true}, "203.0.113.9:1", map[string]string{"CF-Connecting-IP": "1.2.3.4"}, "1.2.3.4"},
		{"configured proxy: X-Real-Ip", proxies, "198.51.100.7:1", map[string]string{"X-Real-Ip": "1.2.3.6"}, "1.2.3.6"},
		{"proxies set: CF headers off", proxies, "104.16.0.1:1", map[string]string{"CF-Connecting-IP": "1.2.3.4"}, "104.16.0.1"},
		{"link-local peer not implicitly trusted", cf, "[fe80::1]:1", map[string]string{"X-Real-Ip": "1.2.3.4"}, "fe80::1"},
		{"garbled header", cf, "127.0.0.1:1", map[string]string{"X-Real-Ip": "nonsense"}, "127.0.0.1"},
	} {
		r := httptest.NewRequest("GET", "/websocket", nil)
		r.RemoteAddr = tc.peer
		for k, v := range tc.hdr {
			r.Header.Set(k, v)
		}
		if got := ClientIP(r, nil, tc.cfg); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// -wstrustedproxies peers keep X-Forwarded-For.
	r := httptest.NewRequest("GET", "/websocket", nil)
	r.RemoteAddr = "10.1.1.1:1"
	r.Header.Set("X-Forwarded-For", "203.0.113.5")
	r.Header.Set("X-Real-Ip", "1.1.1.1")
	if got := ClientIP(r, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, cf); got != "203.0.113.5" {
		t.Errorf("X-Forwarded-For from a -wstrustedproxies peer: %s", got)
	}
}
