package electrumwallet

import (
	"context"
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// An offline Electrum daemon restores BIP84, BIP49 and BIP44 accounts from
// the extended keys AccountKey encodes (private and public), and derives
// the same receive and change addresses as chaingen's HD accounts: the
// premise of the wallet end-to-end test.
func TestRestoreDerivesChaingenAddresses(t *testing.T) {
	Require(t)
	ctx := context.Background()
	d, err := Start(ctx, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Error(err)
		}
	})
	params := &chaincfg.RegressionNetParams
	seed := chaingen.HDSeed("electrumwallet")
	for _, purpose := range []uint32{chaingen.BIP84, chaingen.BIP49, chaingen.BIP44} {
		acct, err := chaingen.NewHDAccount(params, seed, purpose, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, private := range []bool{true, false} {
			key, err := AccountKey(params, seed, purpose, 0, private)
			if err != nil {
				t.Fatal(err)
			}
			if !private && purpose != chaingen.BIP44 && key != acct.Xpub() {
				t.Errorf("purpose %d: public key %s, chaingen's %s", purpose, key, acct.Xpub())
			}
			w, err := d.Restore(ctx, key, fmt.Sprintf("p%d-%v", purpose, private))
			if err != nil {
				t.Fatalf("restore purpose %d private %v: %v", purpose, private, err)
			}
			for change := range uint32(2) {
				addrs, err := d.Addresses(ctx, w, change == 1)
				if err != nil {
					t.Fatal(err)
				}
				if len(addrs) < 10 {
					t.Fatalf("purpose %d chain %d: %d addresses", purpose, change, len(addrs))
				}
				for i, got := range addrs {
					want, err := acct.Address(change, uint32(i))
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("purpose %d private %v %d/%d: electrum %s, chaingen %s", purpose, private, change, i, got, want)
					}
				}
			}
		}
	}
}

func TestParseFormatBTC(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "1": 100_000_000, "-0.0001": -10_000, "0.00000001": 1,
		"21000000.12345678": 2_100_000_012_345_678, "1.50": 150_000_000, ".5": 50_000_000} {
		got, err := ParseBTC(s)
		if err != nil || got != want {
			t.Errorf("ParseBTC(%q) = %d, %v; want %d", s, got, err, want)
		}
		if back, _ := ParseBTC(FormatBTC(want)); back != want {
			t.Errorf("FormatBTC(%d) = %s does not parse back", want, FormatBTC(want))
		}
	}
	for _, bad := range []string{"0.000000001", "abc", "1.2.3", "--1"} {
		if _, err := ParseBTC(bad); err == nil {
			t.Errorf("ParseBTC(%q) accepted", bad)
		}
	}
}
