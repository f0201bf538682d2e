package btc

import (
	"bytes"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// Keys of each script type (BIP44/49/84/86 vectors of the "abandon …
// about" seed).
var deriveKeys = []string{
	"xpub6BosfCnifzxcFwrSzQiqu2DBVTshkCXacvNsWGYJVVhhawA7d4R5WSWGFNbi8Aw6ZRc1brxMyWMzG3DSSSSoekkudhUd9yLb6qx39T9nMdj",
	"ypub6Ww3ibxVfGzLrAH1PNcjyAWenMTbbAosGNB6VvmSEgytSER9azLDWCxoJwW7Ke7icmizBMXrzBx9979FfaHxHcrArf3zbeJJJUZPf663zsP",
	"zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
	"tr(xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ/<0;1>/*)",
}

// referenceDescs derives with hdkeychain alone, child by child: what
// DeriveAddrDescs did before chainKey.
func referenceDescs(t testing.TB, p *XpubParser, d *bchain.XpubDescriptor, change, from, to uint32) []bchain.AddrDesc {
	chain, err := d.Key.(*accountKey).ext.Derive(change)
	if err != nil {
		t.Fatal(err)
	}
	var out []bchain.AddrDesc
	for i := from; i < to; i++ {
		child, err := chain.Derive(i)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := child.ECPubKey()
		if err != nil {
			t.Fatal(err)
		}
		desc, err := p.scriptOf(pub, d.ScriptType)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, desc)
	}
	return out
}

// The fast path (one parsed parent, points kept, ranges split between
// goroutines) derives what hdkeychain derives, at every split: ranges
// below and above the parallel threshold, odd lengths, offsets.
func TestDeriveRangeMatchesHdkeychain(t *testing.T) {
	p := mainnetXpubParser()
	for _, key := range deriveKeys {
		d, err := p.ParseXpub(key)
		if err != nil {
			t.Fatal(err)
		}
		for _, change := range []uint32{0, 1} {
			want := referenceDescs(t, p, d, change, 0, 150)
			for _, r := range [][2]uint32{{0, 1}, {0, minParallelDerive - 1}, {0, minParallelDerive}, {3, 24}, {17, 150}, {0, 150}} {
				got, err := p.DeriveAddrDescs(d, change, r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != int(r[1]-r[0]) {
					t.Fatalf("%.20s %d [%d,%d): %d descs", key, change, r[0], r[1], len(got))
				}
				for i, g := range got {
					if !bytes.Equal(g, want[r[0]+uint32(i)]) {
						t.Fatalf("%.20s %d/%d: %x, hdkeychain %x", key, change, r[0]+uint32(i), g, want[r[0]+uint32(i)])
					}
				}
			}
		}
	}
}

// BenchmarkDerive compares the derivation of 1,000 addresses of a chain
// with hdkeychain child by child (the bound it improves on) and with
// DeriveAddrDescs. go test -bench Derive ./bchain/coins/btc
func BenchmarkDerive(b *testing.B) {
	p := mainnetXpubParser()
	d, err := p.ParseXpub(deriveKeys[2])
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hdkeychain", func(b *testing.B) {
		for b.Loop() {
			referenceDescs(b, p, d, 0, 0, 1000)
		}
	})
	b.Run("DeriveAddrDescs", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.DeriveAddrDescs(d, 0, 0, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DeriveAddrDescs-batches-of-21", func(b *testing.B) {
		for b.Loop() {
			for from := uint32(0); from < 1000; from += 21 {
				if _, err := p.DeriveAddrDescs(d, 0, from, min(from+21, 1000)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
