package eth

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// Addresses of tx-specific answers are checksummed; what is not an
// address (a creation's empty recipient) stays as it is.
func TestEIP55(t *testing.T) {
	for in, want := range map[string]string{
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"":     "",
		"0x":   "0x",
		"0x12": "0x12",
	} {
		if got := eip55(in); got != want {
			t.Errorf("eip55(%q) = %q, want %q", in, got, want)
		}
	}
}

// The pending tag reads the state with the node's pending txs.
func TestBlockArg(t *testing.T) {
	if blockArg(bchain.EthPending) != "pending" || blockArg(bchain.EthLatest) != "latest" {
		t.Fatalf("tags: %v %v", blockArg(bchain.EthPending), blockArg(bchain.EthLatest))
	}
}
