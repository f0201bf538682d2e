package chaingen

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
)

// The BIP39 seed of "abandon … about" (no passphrase) and its published
// BIP44/49/84/86 account keys and first addresses.
const abandonSeed = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"

func TestHDAccountVectors(t *testing.T) {
	seed, _ := hex.DecodeString(abandonSeed)
	for _, c := range []struct {
		purpose     uint32
		xpub, addr0 string
	}{
		{BIP44, "xpub6BosfCnifzxcFwrSzQiqu2DBVTshkCXacvNsWGYJVVhhawA7d4R5WSWGFNbi8Aw6ZRc1brxMyWMzG3DSSSSoekkudhUd9yLb6qx39T9nMdj", "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA"},
		{BIP49, "xpub6C6nQwHaWbSrzs5tZ1q7m5R9cPK9eYpNMFesiXsYrgc1P8bvLLAet9JfHjYXKjToD8cBRswJXXbbFpXgwsswVPAZzKMa1jUp2kVkGVUaJa7", "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf"},
		{BIP84, "xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"},
		{BIP86, "xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ", "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr"},
	} {
		a, err := NewHDAccount(&chaincfg.MainNetParams, seed, c.purpose, 0)
		if err != nil {
			t.Fatal(err)
		}
		addr, err := a.Address(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.Xpub() != c.xpub || addr != c.addr0 {
			t.Errorf("BIP%d: xpub %s address %s", c.purpose, a.Xpub(), addr)
		}
		if d := a.Descriptor(false); !strings.Contains(d, "[73c5da0a/") || !strings.Contains(d, c.xpub+"/<0;1>/*") {
			t.Errorf("BIP%d descriptor %s", c.purpose, d)
		}
	}
}

func TestDescriptorChecksumVectors(t *testing.T) {
	// BIP380, and a descriptor Trezor firmware exports with its checksum.
	for body, want := range map[string]string{
		"raw(deadbeef)": "89f8spxm",
		"tr([5c9e228d/86'/1'/0']tpubDC88gkaZi5HvJGxGDNLADkvtdpni3mLmx6vr2KnXmWMG8zfkBRggsxHVBkUpgcwPe2KKpkyvTJCdXHb1UHEWE64vczyyPQfHr1skBcsRedN/<0;1>/*)": "rlla6vx8",
	} {
		if got := descriptorChecksum(body); got != want {
			t.Errorf("checksum of %s = %s, want %s", body, got, want)
		}
	}
}

// hdTestChain is a short chain with mature coinbases and the HD scenario
// of the four account types.
func hdTestChain(t *testing.T) (*Generator, []*HDAccount, []string) {
	t.Helper()
	g := New(params, "chaingen-hd-test")
	if err := g.Extend(125, 0); err != nil {
		t.Fatal(err)
	}
	var accts []*HDAccount
	for _, p := range []uint32{BIP44, BIP49, BIP84, BIP86} {
		a, err := NewHDAccount(params, HDSeed("test"), p, 0)
		if err != nil {
			t.Fatal(err)
		}
		accts = append(accts, a)
	}
	pending, err := g.HDScenario(accts)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tx := range pending {
		ids = append(ids, tx.TxHash().String())
	}
	return g, accts, ids
}

func TestHDScenarioLedger(t *testing.T) {
	g, accts, pendingIDs := hdTestChain(t)
	if len(pendingIDs) != 4 {
		t.Fatalf("%d pending txs", len(pendingIDs))
	}
	for _, a := range accts {
		l, err := g.AccountLedger(a, 20)
		if err != nil {
			t.Fatal(err)
		}
		// Receive addresses 0, 1, 3, 23 are found; 44 lies beyond 20 unused
		// ones. The change chain reaches the receive chain's last used index.
		used := func(c int) (idx []uint32) {
			for _, ad := range l.Chains[c] {
				if ad.Txs > 0 {
					idx = append(idx, ad.Index)
				}
			}
			return idx
		}
		if r, c := used(0), used(1); len(l.Chains[0]) != 44 || len(l.Chains[1]) != 23 ||
			fmt.Sprint(r) != "[0 1 3 23]" || fmt.Sprint(c) != "[0 1 2]" {
			t.Errorf("BIP%d: %d/%d addresses, used %v %v", a.Purpose, len(l.Chains[0]), len(l.Chains[1]), r, c)
		}
		var utxoSum int64
		for _, u := range l.Utxos {
			utxoSum += u.Value
		}
		if utxoSum != l.Balance || l.Received-l.Sent != l.Balance {
			t.Errorf("BIP%d: utxos %d, balance %d, received %d sent %d", a.Purpose, utxoSum, l.Balance, l.Received, l.Sent)
		}
		// 4 funding txs, 4 spends; the internal transfer touches two
		// addresses but is one tx.
		if len(l.Txids) != 8 || len(l.Txs) != 8 || l.AddrTxCount <= len(l.Txids) {
			t.Errorf("BIP%d: %d txids, %d tx count over addresses", a.Purpose, len(l.Txids), l.AddrTxCount)
		}
		var self int64
		for _, tx := range l.Txs {
			self += tx.SentToSelf
		}
		if self == 0 {
			t.Errorf("BIP%d: no internal transfer", a.Purpose)
		}
		wide, err := g.AccountLedger(a, 21)
		if err != nil {
			t.Fatal(err)
		}
		if len(wide.Chains[0]) != 66 || wide.Balance <= l.Balance {
			t.Errorf("BIP%d gap 21: %d receive addresses, balance %d", a.Purpose, len(wide.Chains[0]), wide.Balance)
		}
	}
}
