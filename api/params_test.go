package api

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseAddressQuery(t *testing.T) {
	q := ParseAddressQuery(url.Values{"page": {"3"}, "pageSize": {"25"}, "from": {"10"}, "to": {"20"}, "details": {"txs"}, "filter": {"inputs"}})
	if q.Page != 3 || q.PageSize != 25 || q.FromHeight != 10 || q.ToHeight != 20 || q.Details != DetailsTxs || !q.Filter.Inputs {
		t.Fatalf("parsed %+v", q)
	}
	// Blockbook is lenient: garbage numbers are absent, unknown details is txids.
	q = ParseAddressQuery(url.Values{"page": {"x"}, "pageSize": {"-5"}, "from": {"1e9"}, "details": {"everything"}, "filter": {"7"}})
	if q.Page != 0 || q.PageSize != -5 || q.FromHeight != 0 || q.Details != DetailsTxids || q.Filter.Vout != 7 {
		t.Fatalf("parsed %+v", q)
	}
}

func TestClampPaging(t *testing.T) {
	for _, c := range []struct{ page, size, total, max, wantPage, wantSize, wantPages int }{
		{0, 0, 0, 1000, 1, 1000, 1}, // an empty list is one page, as Blockbook counts
		{5, 10, 25, 1000, 3, 10, 3},
		{-1, 5000, 2500, 1000, 1, 1000, 3},
		{2, 1, 2, 1000, 2, 1, 2},
	} {
		p, s, n := clampPaging(c.page, c.size, c.total, c.max)
		if p != c.wantPage || s != c.wantSize || n != c.wantPages {
			t.Errorf("clampPaging(%d,%d,%d,%d) = %d,%d,%d", c.page, c.size, c.total, c.max, p, s, n)
		}
	}
}

func TestFilterMatches(t *testing.T) {
	in, out2 := []int32{^int32(0)}, []int32{2}
	for _, c := range []struct {
		f       Filter
		idx     []int32
		matches bool
	}{
		{NoFilter, in, true}, {ParseFilter("inputs"), in, true}, {ParseFilter("inputs"), out2, false},
		{ParseFilter("outputs"), out2, true}, {ParseFilter("2"), out2, true}, {ParseFilter("1"), out2, false},
		{ParseFilter("0"), in, false},
	} {
		if got := c.f.matches(c.idx); got != c.matches {
			t.Errorf("%+v matches %v = %v", c.f, c.idx, got)
		}
	}
}

func FuzzParseAddressQuery(f *testing.F) {
	f.Add("page=2&pageSize=50&from=1&to=9&details=txs&filter=outputs")
	f.Add("page=-1&pageSize=99999999999&filter=4294967296")
	f.Fuzz(func(t *testing.T, raw string) {
		vals, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q := ParseAddressQuery(vals)
		page, size, pages := clampPaging(q.Page, q.PageSize, 12345, 1000)
		if page < 1 || size < 1 || size > 1000 || (pages > 0 && page > pages) {
			t.Fatalf("clamped paging out of range: %d %d %d", page, size, pages)
		}
		if q.Filter.Vout < -1 {
			t.Fatalf("filter vout %d", q.Filter.Vout)
		}
	})
}

func FuzzParseBlockID(f *testing.F) {
	f.Add("0")
	f.Add("4294967295")
	f.Add("4294967296")
	f.Add(strings.Repeat("ab", 32))
	f.Add(strings.Repeat("AB", 32))
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseBlockID(s)
		if err != nil {
			if _, ok := AsUserError(err); !ok {
				t.Fatalf("error for %q is not a user error: %v", s, err)
			}
			return
		}
		if !id.IsHeight && !strings.EqualFold(id.Hash.String(), s) {
			t.Fatalf("hash %q parsed as %s", s, id.Hash)
		}
	})
}

func TestDecimalString(t *testing.T) {
	for v, want := range map[int64]string{0: "0", 1: "0.00000001", 1000: "0.00001", 123456789: "1.23456789", 100000000: "1", -5: "-0.00000005"} {
		if got := decimalString(v, 8); got != want {
			t.Errorf("decimalString(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestDifficulty(t *testing.T) {
	for bits, want := range map[uint32]string{0x207fffff: "4.656542373906925e-10", 0x1d00ffff: "1", 0x1b04864c: "14484.1623612254"} {
		if got := difficulty(bits); got != want {
			t.Errorf("difficulty(%08x) = %s, want %s", bits, got, want)
		}
	}
}

// Blockbook's protocols parameter: repeated or comma-separated, blanks
// dropped; an unknown name, or any on a Bitcoin-type chain, refused with
// its texts.
func TestProtocols(t *testing.T) {
	q := ParseAddressQuery(url.Values{"protocols": {" erc4626, ,ERC4626", "x"}})
	if strings.Join(q.Protocols, "|") != "erc4626|ERC4626|x" {
		t.Fatalf("parsed %q", q.Protocols)
	}
	if ParseProtocols(nil) != nil || ParseProtocols([]string{" , "}) != nil {
		t.Fatal("no names should parse to nil")
	}
	for _, c := range []struct {
		protocols []string
		eth       bool
		want      string
	}{
		{nil, false, ""},
		{[]string{"erc4626", " ERC4626 "}, true, ""},
		{[]string{"erc4626", "erc20"}, true, "Unknown protocol: erc20"},
		{[]string{"erc4626"}, false, "protocols parameter is not supported on this coin"},
	} {
		got := ""
		if err := CheckProtocols(c.protocols, c.eth); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%q on eth=%v: error %q, want %q", c.protocols, c.eth, got, c.want)
		}
	}
	if !wantsErc4626([]string{"x", " Erc4626"}) || wantsErc4626([]string{"erc20"}) {
		t.Error("wantsErc4626")
	}
}
