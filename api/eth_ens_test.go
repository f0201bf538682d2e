package api

import "testing"

// EIP-137's namehash examples, and which inputs are asked as names.
func TestENSNameHash(t *testing.T) {
	for name, want := range map[string]string{
		"":        "0x0000000000000000000000000000000000000000000000000000000000000000",
		"eth":     "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae",
		"foo.eth": "0xde9b09fd7c5f901e23a3f19fecc54828e9c848539801e86591bd9801b019f84f",
	} {
		if got := ENSNameHash(name).Hex(); got != want {
			t.Errorf("namehash(%q) = %s, want %s", name, got, want)
		}
	}
	for _, c := range []struct {
		s    string
		want bool
	}{{"vitalik.eth", true}, {" Vitalik.ETH ", true}, {"a.b.eth", true}, {"eth", false}, {"0xabc", false}, {"x.eth.com", false}} {
		if IsENSName(c.s) != c.want {
			t.Errorf("IsENSName(%q) = %v", c.s, !c.want)
		}
	}
}
