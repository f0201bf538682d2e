package listen

import "net/netip"

// cloudflareRanges are the address ranges Cloudflare publishes for its
// edge servers (IPv4 and IPv6 lists, as of 2026-06). Requests from them
// carry the visitor's address in CF-Connecting-IP. <NET>_CLOUDFLARE_IPS
// replaces the list without a rebuild when Cloudflare changes it.
var cloudflareRanges = []string{
	"173.245.48.0/20", "103.21.244.0/22", "103.22.200.0/22", "103.31.4.0/22",
	"141.101.64.0/18", "108.162.192.0/18", "190.93.240.0/20", "188.114.96.0/20",
	"197.234.240.0/22", "198.41.128.0/17", "162.158.0.0/15", "104.16.0.0/13",
	"104.24.0.0/14", "172.64.0.0/13", "131.0.72.0/22",
	"2400:cb00::/32", "2606:4700::/32", "2803:f800::/32", "2405:b500::/32",
	"2405:8100::/32", "2a06:98c0::/29", "2c0f:f248::/32",
}

// CloudflareRanges returns Cloudflare's published edge ranges compiled
// into the binary.
func CloudflareRanges() []netip.Prefix {
	out := make([]netip.Prefix, len(cloudflareRanges))
	for i, s := range cloudflareRanges {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
