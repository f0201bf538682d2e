package bch

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// TestTokenPrefixVectors runs Bitcoin Cash Node's token prefix vectors:
// valid prefixes decode to the recorded token, invalid ones are refused.
func TestTokenPrefixVectors(t *testing.T) {
	var valid []struct {
		Prefix string    `json:"prefix"`
		Data   TokenData `json:"data"`
	}
	btctest.ReadJSON(t, "token_tests_prefix_valid.json", &valid)
	var invalid []struct {
		Prefix string `json:"prefix"`
	}
	btctest.ReadJSON(t, "token_tests_prefix_invalid.json", &invalid)
	if len(valid) < 40 || len(invalid) < 40 {
		t.Fatalf("%d valid, %d invalid vectors", len(valid), len(invalid))
	}
	locking, _ := hex.DecodeString("76a9144fa927fd3bcf57d4e3c582c3d2eb2bd3df8df47c88ac")
	p := testParser(t, "Bcash Testnet", "")
	for _, v := range valid {
		prefix, _ := hex.DecodeString(v.Prefix)
		script := append(append([]byte{}, prefix...), locking...)
		tok, rest, ok, err := splitToken(script)
		if !ok || err != nil || !bytes.Equal(rest, locking) {
			t.Errorf("%s: ok %v err %v rest %x", v.Prefix, ok, err, rest)
			continue
		}
		got, _ := json.Marshal(tok)
		want, _ := json.Marshal(v.Data)
		if string(got) != string(want) {
			t.Errorf("%s: %s, want %s", v.Prefix, got, want)
		}
		// Indexed and shown under the holder's address.
		if !bytes.Equal(p.OutputAddrDesc(script), locking) {
			t.Errorf("%s: indexed under %x", v.Prefix, p.OutputAddrDesc(script))
		}
		if addrs, _ := p.OutputAddresses(script); len(addrs) != 1 || addrs[0] != "bchtest:qp86jfla8084048rckpv85ht90falr050s03ejaesm" {
			t.Errorf("%s: shown as %v", v.Prefix, addrs)
		}
	}
	checked := 0
	for _, v := range invalid {
		prefix, _ := hex.DecodeString(v.Prefix)
		script := append(append([]byte{}, prefix...), locking...)
		if _, _, ok, err := splitToken(prefix); !ok || err == nil {
			t.Errorf("%s accepted", v.Prefix)
		}
		// A malformed prefix leaves the whole script non-standard (truncated
		// prefixes may become valid once bytecode follows them).
		if _, _, _, err := splitToken(script); err == nil {
			continue
		}
		checked++
		if !bytes.Equal(p.OutputAddrDesc(script), script) {
			t.Errorf("%s: indexed under %x", v.Prefix, p.OutputAddrDesc(script))
		}
		if addrs, searchable := p.OutputAddresses(script); len(addrs) != 0 || searchable {
			t.Errorf("%s: shown as %v", v.Prefix, addrs)
		}
	}
	if checked < 20 {
		t.Errorf("only %d malformed scripts checked", checked)
	}
}

// FuzzTokenPrefix: any script decodes without panicking, and a decoded
// token's locking bytecode is the script's tail.
func FuzzTokenPrefix(f *testing.F) {
	for _, s := range []string{
		"efbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb7001ccfe00000100",
		"ef0000000000000000000000000000000000000000000000000000000000000000006060ffffffffffffffffff",
		"ef", "76a91400000000000000000000000000000000000000000088ac",
	} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	p := NewParserMust(f)
	f.Fuzz(func(t *testing.T, script []byte) {
		tok, rest, ok, err := splitToken(script)
		if ok && err == nil {
			if tok == nil || !bytes.HasSuffix(script, rest) {
				t.Fatalf("token %v rest %x", tok, rest)
			}
		}
		p.OutputAddrDesc(script)
		p.OutputAddresses(script)
		if _, _, err := p.AddressesFromAddrDesc(script); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzCashAddr: decoding never panics, and what decodes re-encodes to the
// same address (in lower case).
func FuzzCashAddr(f *testing.F) {
	for _, s := range []string{
		"bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a",
		"bitcoincash:pvtgwvmtp4hy5k9alcwc5yt69k4jnshevdwapq43w7hp8m7hwj60ss0qjrjyz",
		"qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "ecash:", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu",
	} {
		f.Add(s)
	}
	p := NewParserMust(f)
	f.Fuzz(func(t *testing.T, s string) {
		if prefix, typ, hash, err := decodeCashAddr(s, "bitcoincash"); err == nil {
			enc := encodeCashAddr(prefix, typ, hash)
			if _, _, _, err := decodeCashAddr(enc, ""); err != nil {
				t.Fatalf("%q re-encoded as %q: %v", s, enc, err)
			}
		}
		if d, err := p.AddrDescFromAddress(s); err == nil {
			if addrs, ok, err := p.AddressesFromAddrDesc(d); err != nil || !ok || len(addrs) != 1 {
				t.Fatalf("%q -> %x -> %v %v", s, d, addrs, err)
			}
		}
	})
}

func NewParserMust(f *testing.F) *Parser {
	p, err := NewParser(MainNetParams, prefixBCH, "")
	if err != nil {
		f.Fatal(err)
	}
	return p
}
