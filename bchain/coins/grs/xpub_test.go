package grs

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/chainhash/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// Accounts: extended keys carry a Grøstl base58check checksum. Each key
// of EdgeApp's edge-currency-plugins Groestlcoin tests ("abandon … about",
// account 0) derives its recorded first address through the backend the
// shipped config builds; the same key with Bitcoin's checksum is refused.
func TestXpubGroestlcoin(t *testing.T) {
	cfg, err := bchain.LoadConfig("../../../configs/coins/groestlcoin.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for xpub, addr := range map[string]string{
		"xpub6DFSGe2bonksyNuiTXpJ7iuFZZUAdKvsdxSdp1zREazBVTBDcWn94f7eNg5MN148WHsaUfG3Mmmqa6nBi1VCde1t7wM3NA3993CcjChk1g5": "Fpzstx4fKWhqZYbVVmuncuhbEmgecqPTgg",
		"ypub6X46SconPpL9QhXPnMGuPLB9jYai7nrHz7ki4zq3awHb462iPSG5eV19oBWv22RWt69npsi75XGcANsevtTWE8YFgqpygrGUPnEKp6vty5v": "3299Qf2x9BnzLaZu4HCLvm26RbBB3ZRf4u",
		"zpub6qdhcNVVLJ2t8kLzGLzeaiJv7EahaRBsXmu1yVPyXHvMdFmS4d7JSi5aS6mc1oz5k6DZN781Ffn3GAs3r2FJnCPSw5nti63s3c9EDg2u7MS": "grs1qrm2uggqj846nljryvmuga56vtwfey0dtnc4z55",
	} {
		d, err := b.Xpub.ParseXpub(xpub)
		if err != nil {
			t.Fatalf("%s: %v", xpub[:12], err)
		}
		descs, err := b.Xpub.DeriveAddrDescs(d, 0, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.Addresses.AddrDescFromAddress(addr)
		if err != nil || len(descs) != 1 || !bytes.Equal(descs[0], want) {
			t.Errorf("%s: derived %x, recorded %s (%x, %v)", xpub[:12], descs, addr, want, err)
		}
		if d.BasePath != "m/"+map[byte]string{'x': "44", 'y': "49", 'z': "84"}[xpub[0]]+"'/17'/0'" {
			t.Errorf("%s: base path %s", xpub[:12], d.BasePath)
		}
		raw := base58.Decode(xpub)
		body := raw[:len(raw)-4]
		bitcoinForm := base58.Encode(append(body[:len(body):len(body)], chainhash.DoubleHashB(body)[:4]...))
		if _, err := b.Xpub.ParseXpub(bitcoinForm); !errors.Is(err, bchain.ErrInvalidXpub) {
			t.Errorf("%s with a double SHA-256 checksum: %v", xpub[:12], err)
		}
	}
}
