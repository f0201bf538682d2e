package electrum

import (
	"testing"

	"github.com/openexplorer/blockbook/internal/listen"
)

// Loopback and private peers are exempt from MaxCallsPerIP (by the key
// the server counts them under: an address, or an IPv6 /64).
func TestLocalKey(t *testing.T) {
	for ip, local := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "192.168.0.9": true, "::1": true, "fd00::1": true,
		"203.0.113.5": false, "2001:db8::1": false, "": false,
	} {
		if got := localKey(listen.IPKey(ip)); got != local {
			t.Errorf("%q (key %q): local %v", ip, listen.IPKey(ip), got)
		}
	}
}
