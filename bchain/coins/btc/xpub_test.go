package btc

import (
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// Parsers configured like configs/coins/bitcoin.json and
// bitcoin_testnet.json (xpub_magic* and slip44).
func mainnetXpubParser() *XpubParser {
	return NewXpubParser(&chaincfg.MainNetParams, Magics{P2PKH: 76067358, P2SHP2WPKH: 77429938, P2WPKH: 78792518}, 0)
}

func testnetXpubParser() *XpubParser {
	return NewXpubParser(&chaincfg.TestNet3Params, Magics{P2PKH: 70617039, P2SHP2WPKH: 71979618, P2WPKH: 73342198}, 1)
}

// BIP380's checksum vectors.
func TestDescriptorChecksumBIP380(t *testing.T) {
	got, err := DescriptorChecksum("raw(deadbeef)")
	if err != nil || got != "89f8spxm" {
		t.Fatalf("checksum of raw(deadbeef) = %q, %v; BIP380 says 89f8spxm", got, err)
	}
	// "Error in payload" vector: a changed descriptor has another checksum.
	if got, _ := DescriptorChecksum("raw(deedbeef)"); got == "89f8spxm" {
		t.Fatal("raw(deedbeef) has the checksum of raw(deadbeef)")
	}
	if _, err := DescriptorChecksum("raw(dead\u00e9beef)"); err == nil {
		t.Fatal("a character outside the descriptor set was accepted")
	}
}

// Descriptors Trezor firmware exports for the "all all … all" seed
// (trezor-firmware tests/device_tests/bitcoin/test_descriptors.py), with
// the checksums the device computes.
var trezorTestnetDescriptors = []struct {
	desc string
	st   bchain.XpubScriptType
	base string
}{
	{"pkh([5c9e228d/44'/1'/0']tpubDDKn3FtHc74CaRrRbi1WFdJNaaenZkDWqq9NsEhcafnDZ4VuKeuLG2aKHm5SuwuLgAhRkkfHqcCxpnVNSrs5kJYZXwa6Ud431VnevzzzK3U/<0;1>/*)#jlq3k5tw", bchain.XpubP2PKH, "m/44'/1'/0'"},
	{"sh(wpkh([5c9e228d/49'/1'/0']tpubDCHRnuvE95JrpEVTUmr36sK3K9ADf3s3aztpXzL8coBeCTE8cHV8PjxS6SjWJM3GfPn798gyEa3dRPgjoUDSuNfuC9xz4PHznwKEk2XL7X1/<0;1>/*))#egxlxhl0", bchain.XpubP2SHP2WPKH, "m/49'/1'/0'"},
	{"wpkh([5c9e228d/84'/1'/1']tpubDCZB6sR48s4T6xoXqaYxScvf23kmQvg5QpyFkYnDBjsmviKHLSG9s6cp593Exg87tuMjXXMWDvBRXnJtzppcQf8Z8HdJP1rothfxm4qnPXo/<0;1>/*)#skg78rzf", bchain.XpubP2WPKH, "m/84'/1'/1'"},
	{"tr([5c9e228d/86'/1'/0']tpubDC88gkaZi5HvJGxGDNLADkvtdpni3mLmx6vr2KnXmWMG8zfkBRggsxHVBkUpgcwPe2KKpkyvTJCdXHb1UHEWE64vczyyPQfHr1skBcsRedN/<0;1>/*)#rlla6vx8", bchain.XpubP2TR, "m/86'/1'/0'"},
	{"tr([5c9e228d/10025'/1'/0'/1']tpubDEMKm4M3S2Grx5DHTfbX9et5HQb9KhdjDCkUYdH9gvVofvPTE6yb2MH52P9uc4mx6eFohUmfN1f4hhHNK28GaZnWRXr3b8KkfFcySo1SmXU/<0;1>/*)#4lsrfvjs", bchain.XpubP2TR, "m/10025'/1'/0'/1'"},
}

const trezorMainnetTaproot = "tr([5c9e228d/86'/0'/1']xpub6Bw885JisRbcLp1379q64fdNPGTnHKYGcA9wcWqGcUgkKZkYCwXSCb9Qfw8DGDgYMmcDM8QwQGooqCM3Ym4yq8kS5dBjzZSXUdVUdhyfirD/<0;1>/*)#qpx5cf45"

func TestParseTrezorDescriptors(t *testing.T) {
	p := testnetXpubParser()
	for _, c := range trezorTestnetDescriptors {
		d, err := p.ParseXpub(c.desc)
		if err != nil {
			t.Fatalf("%s: %v", c.desc, err)
		}
		if d.ScriptType != c.st || d.BasePath != c.base || d.Descriptor != c.desc || len(d.Changes) != 2 || d.Changes[0] != 0 || d.Changes[1] != 1 {
			t.Errorf("%s: got %+v", c.desc, d)
		}
		if !strings.HasPrefix(c.desc[strings.Index(c.desc, "]")+1:], d.Xpub) || !strings.HasPrefix(d.Xpub, "tpub") {
			t.Errorf("%s: xpub %q", c.desc, d.Xpub)
		}
		// Without the checksum the descriptor is accepted too.
		if _, err := p.ParseXpub(c.desc[:strings.IndexByte(c.desc, '#')]); err != nil {
			t.Errorf("%s without checksum: %v", c.desc, err)
		}
	}
	if _, err := mainnetXpubParser().ParseXpub(trezorMainnetTaproot); err != nil {
		t.Fatalf("mainnet: %v", err)
	}
}

// Every single-character change of the checksum, and a change of the key
// that keeps the checksum, is refused.
func TestDescriptorChecksumCorrupted(t *testing.T) {
	p := testnetXpubParser()
	for _, c := range trezorTestnetDescriptors {
		hash := strings.IndexByte(c.desc, '#')
		for i := hash + 1; i < len(c.desc); i++ {
			for _, r := range descChecksumCharset {
				if byte(r) == c.desc[i] {
					continue
				}
				bad := c.desc[:i] + string(r) + c.desc[i+1:]
				if _, err := p.ParseXpub(bad); !errors.Is(err, bchain.ErrInvalidXpub) || !strings.Contains(err.Error(), "checksum") {
					t.Fatalf("%s: %v", bad, err)
				}
			}
		}
		// The fingerprint is not part of the key: only the checksum notices.
		bad := strings.Replace(c.desc, "5c9e228d", "5c9e228e", 1)
		if _, err := p.ParseXpub(bad); err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Fatalf("%s: %v", bad, err)
		}
		for _, bad := range []string{c.desc + "x", c.desc[:len(c.desc)-1], c.desc[:hash+1], strings.Replace(c.desc, "#", "##", 1)} {
			if _, err := p.ParseXpub(bad); !errors.Is(err, bchain.ErrInvalidXpub) || !strings.Contains(err.Error(), "checksum") {
				t.Fatalf("%s: %v", bad, err)
			}
		}
	}
}

// Addresses derived from published vectors: BIP44/49/84/86 test vectors of
// the "abandon … about" seed (mainnet), and what Blockbook answers for
// testnet keys in its own tests.
func TestDeriveAddresses(t *testing.T) {
	type want struct {
		change, index uint32
		addr          string
	}
	cases := []struct {
		p     *XpubParser
		key   string
		st    bchain.XpubScriptType
		base  string
		wants []want
	}{
		{mainnetXpubParser(), "xpub6BosfCnifzxcFwrSzQiqu2DBVTshkCXacvNsWGYJVVhhawA7d4R5WSWGFNbi8Aw6ZRc1brxMyWMzG3DSSSSoekkudhUd9yLb6qx39T9nMdj",
			bchain.XpubP2PKH, "m/44'/0'/0'", []want{{0, 0, "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA"}, {0, 1, "1Ak8PffB2meyfYnbXZR9EGfLfFZVpzJvQP"}, {1, 0, "1J3J6EvPrv8q6AC3VCjWV45Uf3nssNMRtH"}}},
		{mainnetXpubParser(), "ypub6Ww3ibxVfGzLrAH1PNcjyAWenMTbbAosGNB6VvmSEgytSER9azLDWCxoJwW7Ke7icmizBMXrzBx9979FfaHxHcrArf3zbeJJJUZPf663zsP",
			bchain.XpubP2SHP2WPKH, "m/49'/0'/0'", []want{{0, 0, "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf"}, {0, 1, "3LtMnn87fqUeHBUG414p9CWwnoV6E2pNKS"}, {1, 0, "34K56kSjgUCUSD8GTtuF7c9Zzwokbs6uZ7"}}},
		{mainnetXpubParser(), "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
			bchain.XpubP2WPKH, "m/84'/0'/0'", []want{{0, 0, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"}, {0, 1, "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"}, {1, 0, "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el"}}},
		{mainnetXpubParser(), "tr(xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ/<0;1>/*)",
			bchain.XpubP2TR, "m/86'/0'/0'", []want{{0, 0, "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr"}, {0, 1, "bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh"}, {1, 0, "bc1p3qkhfews2uk44qtvauqyr2ttdsw7svhkl9nkm9s9c3x4ax5h60wqwruhk7"}}},
		{testnetXpubParser(), "upub5E1xjDmZ7Hhej6LPpS8duATdKXnRYui7bDYj6ehfFGzWDZtmCmQkZhc3Zb7kgRLtHWd16QFxyP86JKL3ShZEBFX88aciJ3xyocuyhZZ8g6q",
			bchain.XpubP2SHP2WPKH, "m/49'/1'/33'", []want{{0, 0, "2MzmAKayJmja784jyHvRUW1bXPget1csRRG"}, {0, 5, "2N1kvo97NFASPXiwephZUxE9PRXunjTxEc4"}, {1, 3, "2N6utyMZfPNUb1Bk8oz7p2JqJrXkq83gegu"}}},
		{testnetXpubParser(), "tr([5c9e228d/86'/1'/0']tpubDC88gkaZi5HvJGxGDNLADkvtdpni3mLmx6vr2KnXmWMG8zfkBRggsxHVBkUpgcwPe2KKpkyvTJCdXHb1UHEWE64vczyyPQfHr1skBcsRedN/{0,1}/*)",
			bchain.XpubP2TR, "m/86'/1'/0'", []want{{0, 0, "tb1pswrqtykue8r89t9u4rprjs0gt4qzkdfuursfnvqaa3f2yql07zmq8s8a5u"}, {0, 2, "tb1p537ddhyuydg5c2v75xxmn6ac64yz4xns2x0gpdcwj5vzzzgrywlqlqwk43"}, {1, 1, "tb1p0pnd6ue5vryymvd28aeq3kdz6rmsdjqrq6eespgtg8wdgnxjzjksujhq4u"}}},
	}
	for _, c := range cases {
		d, err := c.p.ParseXpub(c.key)
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		if d.ScriptType != c.st || d.BasePath != c.base {
			t.Errorf("%s: type %d path %s, want %d %s", c.key, d.ScriptType, d.BasePath, c.st, c.base)
		}
		addrParser := NewParser(c.p.params)
		for _, w := range c.wants {
			descs, err := c.p.DeriveAddrDescs(d, w.change, w.index, w.index+1)
			if err != nil || len(descs) != 1 {
				t.Fatalf("%s %d/%d: %v", c.key, w.change, w.index, err)
			}
			addrs, _, err := addrParser.AddressesFromAddrDesc(descs[0])
			if err != nil || len(addrs) != 1 || addrs[0] != w.addr {
				t.Errorf("%s %d/%d: %v %v, want %s", c.key[:20], w.change, w.index, addrs, err, w.addr)
			}
		}
	}
}

func TestParseXpubChains(t *testing.T) {
	p := testnetXpubParser()
	key := "tpubDC88gkaZi5HvJGxGDNLADkvtdpni3mLmx6vr2KnXmWMG8zfkBRggsxHVBkUpgcwPe2KKpkyvTJCdXHb1UHEWE64vczyyPQfHr1skBcsRedN"
	for in, want := range map[string][]uint32{
		"tr(" + key + ")":                               {0, 1},
		"tr(" + key + "/1/*)":                           {1},
		"tr(" + key + "/<0;1;2>/*)":                     {0, 1, 2},
		"tr(" + key + "/{0,1,2}/*)":                     {0, 1, 2},
		"wpkh([5c9e228d/84h/1h/0h]" + key + "/<0;1>/*)": {0, 1},
	} {
		d, err := p.ParseXpub(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if len(d.Changes) != len(want) {
			t.Fatalf("%s: chains %v, want %v", in, d.Changes, want)
		}
		for i := range want {
			if d.Changes[i] != want[i] {
				t.Fatalf("%s: chains %v, want %v", in, d.Changes, want)
			}
		}
	}
	d, _ := p.ParseXpub("wpkh([5c9e228d/84h/1h/0h]" + key + "/<0;1>/*)")
	if d.BasePath != "m/84'/1'/0'" {
		t.Errorf("origin with h: base path %s", d.BasePath)
	}
}

// Every bad input is a user error that says what is wrong; strings that are
// not shaped like accounts at all are ErrNotXpub (the API then tries them
// as addresses).
func TestParseXpubBadInput(t *testing.T) {
	p := testnetXpubParser()
	tpub := "tpubDC88gkaZi5HvJGxGDNLADkvtdpni3mLmx6vr2KnXmWMG8zfkBRggsxHVBkUpgcwPe2KKpkyvTJCdXHb1UHEWE64vczyyPQfHr1skBcsRedN"
	master, err := hdkeychain.NewMaster(make([]byte, 32), &chaincfg.TestNet3Params)
	if err != nil {
		t.Fatal(err)
	}
	tprv := master.String()
	mainMaster, _ := hdkeychain.NewMaster(make([]byte, 32), &chaincfg.MainNetParams)
	xprv := mainMaster.String()
	zpub := "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	typo := tpub[:50] + "X" + tpub[51:]
	for _, c := range []struct{ in, want string }{
		{tprv, "private key"},
		{xprv, "private key"},
		{"wpkh(" + tprv + "/<0;1>/*)", "private key"},
		{zpub, "is not for testnet3: this server accepts tpub, upub, vpub"},
		{trezorMainnetTaproot, "(xpub) is not for testnet3"},
		{typo, "bad checksum"},
		{"tpub" + strings.Repeat("0", 107), "not an extended public key"},
		{"wpkh(garbage)", "not an extended public key"},
		{"wpkh()", "not an extended public key"},
		{"wsh(multi(2," + tpub + "/0/*," + tpub + "/1/*))", "wsh() is not supported"},
		{"sh(wsh(pkh(" + tpub + ")))", "sh(wsh() is not supported"},
		{"pk(" + tpub + ")", "pk() is not supported"},
		{"addr(mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV)", "addr() is not supported"},
		{"combo(" + tpub + ")", "combo() is not supported"},
		{"tr(" + tpub + ",{pk(" + tpub + "),pk(" + tpub + ")})", "several keys or scripts"},
		{"tr(" + tpub + ",pk(" + tpub + "))", "several keys or scripts"},
		{"wpkh(" + tpub + "/0/*')", "hardened derivation"},
		{"wpkh(" + tpub + "/<0';1>/*)", "hardened chain"},
		{"wpkh(" + tpub + "/*)", "key path \"/*\" is not supported"},
		{"wpkh(" + tpub + "/0/1)", "is not supported"},
		{"wpkh(" + tpub + "/<0;0>/*)", "listed twice"},
		{"wpkh(" + tpub + "/<a;1>/*)", "chain \"a\" is not an index"},
		{"wpkh([5c9e22/84'/1'/0']" + tpub + ")", "fingerprint"},
		{"wpkh([5c9e228d/84'/x/0']" + tpub + ")", "origin step"},
		{"wpkh([5c9e228d/84'/1'/0'" + tpub + ")", "not closed"},
		{"wpkh(" + tpub, "not closed"},
		{"sh(wpkh(" + tpub + ")", "not closed"},
		{"wpkh(" + tpub + ")#abc", "must be 8 characters"},
		{"wpkh(" + tpub + "é)", "not allowed in a descriptor"},
		{"wpkh(" + strings.Repeat("a", 600) + ")", "longer than"},
	} {
		_, err := p.ParseXpub(c.in)
		if !errors.Is(err, bchain.ErrInvalidXpub) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s: error %v, want one containing %q", c.in, err, c.want)
		}
	}
	for _, in := range []string{"", "notanxpub", "mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV", "tb1pswrqtykue8r89t9u4rprjs0gt4qzkdfuursfnvqaa3f2yql07zmq8s8a5u",
		strings.Repeat("ab", 65)} {
		if _, err := p.ParseXpub(in); !errors.Is(err, bchain.ErrNotXpub) {
			t.Errorf("%q: %v, want ErrNotXpub", in, err)
		}
	}
}

// The key of a descriptor parsed by one parser cannot be derived by
// another chain type's code by accident.
func TestDeriveForeignDescriptor(t *testing.T) {
	if _, err := testnetXpubParser().DeriveAddrDescs(&bchain.XpubDescriptor{Descriptor: "x"}, 0, 0, 1); err == nil {
		t.Fatal("derived from a descriptor without a key")
	}
}

// Any input gives a descriptor or one of the two sentinel errors, never a
// panic or another error.
func FuzzParseXpub(f *testing.F) {
	for _, c := range trezorTestnetDescriptors {
		f.Add(c.desc)
	}
	f.Add("tpubDC88gkaZi5HvJGxGDNLADkvtdpni3mLmx6vr2KnXmWMG8zfkBRggsxHVBkUpgcwPe2KKpkyvTJCdXHb1UHEWE64vczyyPQfHr1skBcsRedN")
	f.Add("sh(wpkh([5c9e228d/49'/1'/0']x/{0,1}/*))#zzzzzzzz")
	p := testnetXpubParser()
	f.Fuzz(func(t *testing.T, s string) {
		d, err := p.ParseXpub(s)
		if err != nil {
			if !errors.Is(err, bchain.ErrNotXpub) && !errors.Is(err, bchain.ErrInvalidXpub) {
				t.Fatalf("%q: unexpected error %v", s, err)
			}
			return
		}
		if _, err := p.DeriveAddrDescs(d, d.Changes[0], 0, 2); err != nil {
			t.Fatalf("%q: derive: %v", s, err)
		}
	})
}
