package vtc

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// Accounts: EdgeApp's edge-currency-plugins Vertcoin tests ("abandon …
// about", account 0, all three keys with the xpub version) record each
// key's first address; as a plain key (BIP44) and in sh(wpkh()) and
// wpkh() descriptors (BIP49, BIP84) they derive it through the backend the
// shipped config builds.
func TestXpubVertcoin(t *testing.T) {
	cfg, err := bchain.LoadConfig("../../../configs/coins/vertcoin.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for desc, addr := range map[string]string{
		"xpub6CmMJaaUpYLYQJPRkjVAvqwsABqVRdDmxs7Y9k9GqXFdBkBz7Gtjb2VhxzCeYKuXkEzZ23MNRFj9tqjYS5UgvewWpxYmhWuwDiLR84spHS8":           "Vce16eJifb7HpuoTFEBJyKNLsBJPo7fM83",
		"sh(wpkh(xpub6D1pK4ozztYgDWaNcvgYjXTQoWNfzSgQY9poZkJWhhbCKYVjQdUmhkRYF6NkLPNzTohQ3KEMm1ZqzZAHTPPQYuDYzVmkXtTLzLYPDhjoUrm))": "3GKaSv31kZoxGwMs2Kp25ngoHRHi5pz2SP",
		"wpkh(xpub6Cq877KwJnLWBSAoVoFLwoe7BbPhxxkpBkvEugZRzmWRsGqPJDJU3t8jWFuNWMR5uYLQuYPgypSR2F9HWjVaroCNtRqH43Chwjeox4je1yB)":     "vtc1qfe8v6c4r39fq8xnjgcpunt5spdfcxw63zzfwru",
	} {
		d, err := b.Xpub.ParseXpub(desc)
		if err != nil {
			t.Fatalf("%s: %v", desc[:16], err)
		}
		descs, err := b.Xpub.DeriveAddrDescs(d, 0, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.Addresses.AddrDescFromAddress(addr)
		if err != nil || len(descs) != 1 || !bytes.Equal(descs[0], want) {
			t.Errorf("%s: derived %x, recorded %s (%x, %v)", desc[:16], descs, addr, want, err)
		}
		got, _, _ := b.Addresses.AddressesFromAddrDesc(descs[0])
		if len(got) != 1 || got[0] != addr {
			t.Errorf("%s: renders %v", desc[:16], got)
		}
	}
}
