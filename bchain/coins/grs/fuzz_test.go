package grs

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Decoding never panics on any input: blocks, txs and addresses. A block
// or tx that decodes has txids and a block id, and an address that decodes
// renders back to the same address.
func FuzzParseGroestlcoin(f *testing.F) {
	for _, name := range []string{"electrumx_mainnet_2000000.json", "electrumx_testnet_600000.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, `"block": "`) + len(`"block": "`)
		raw, _ := hex.DecodeString(s[i : i+strings.IndexByte(s[i:], '"')])
		f.Add(raw, "FtM4zAn9aVYgHgxmamWBgWPyZsb6RhvkA9")
		f.Add(raw[80+1:], "grs1qrm2uggqj846nljryvmuga56vtwfey0dtnc4z55")
	}
	f.Add([]byte{}, "3299Qf2x9BnzLaZu4HCLvm26RbBB3ZRf4u")
	p := NewParser(MainNetParams)
	f.Fuzz(func(t *testing.T, raw []byte, addr string) {
		if blk, err := p.ParseBlock(raw); err == nil && len(blk.Txs) == 0 {
			t.Fatal("a block without txs decoded")
		}
		if tx, err := p.ParseTx(raw); err == nil {
			for _, out := range tx.Vout {
				p.OutputAddresses(out.Script)
			}
		}
		desc, err := p.AddrDescFromAddress(addr)
		if err != nil {
			return
		}
		addrs, _, err := p.AddressesFromAddrDesc(desc)
		if err != nil || len(addrs) != 1 {
			t.Fatalf("%q decodes to %x, which renders as %v (%v)", addr, desc, addrs, err)
		}
		if addrs[0] != addr && addrs[0] != strings.ToLower(addr) && len(addr) != 66 && len(addr) != 130 {
			t.Fatalf("%q renders back as %q", addr, addrs[0])
		}
	})
}
