package esplora_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/esplora"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// parserNamer names descriptors as the app does for the address-prefix rows.
type parserNamer struct{ f *apitest.Fixture }

func (n parserNamer) DescAddress(desc bchain.AddrDesc) (string, bool) {
	addrs, searchable, err := n.f.Parser.AddressesFromAddrDesc(desc)
	if err != nil || !searchable || len(addrs) != 1 {
		return "", false
	}
	return addrs[0], true
}

// TestAddressPrefix indexes the fixture's chain with the address-prefix
// rows and searches them: up to 10 addresses, sorted, each a prefix match
// of an address the chain paid.
func TestAddressPrefix(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	store := apitest.OpenStore(t, db.Options{})
	x, err := db.NewUtxoIndex(store, f.Parser, 300, f.BlockFilters)
	if err != nil {
		t.Fatal(err)
	}
	if on, err := x.EnableAddressPrefix(true, parserNamer{f}); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	for h, raw := range f.Raw {
		blk, err := f.Parser.ParseBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		blk.Height = uint32(h)
		if err := x.ConnectBlock(blk); err != nil {
			t.Fatal(err)
		}
	}
	svc := api.NewUtxoService(store, f.Backend, nil, api.Config{BlockFilters: f.BlockFilters, Log: apitest.Quiet()})
	fx := &fixture{Fixture: f, svc: svc, srv: esplora.New(svc, svc.Capabilities().Scripts, svc,
		esplora.Options{AddressSearch: svc, Log: apitest.Quiet()})}
	// Every address the chain paid, from the raw blocks.
	seen := map[string]bool{}
	for h, b := range f.Gen.Blocks() {
		for _, tx := range b.Transactions {
			for _, o := range tx.TxOut {
				if a, ok := (parserNamer{f}).DescAddress(f.Parser.OutputAddrDesc(o.PkScript)); ok && h > 0 {
					seen[a] = true
				}
			}
		}
	}
	var all []string
	for a := range seen {
		all = append(all, a)
	}
	slices.Sort(all)
	for _, prefix := range []string{"bcrt1q", "bcrt1p", "2", "m", f.DemoAddress[:12], f.DemoAddress, "zzz"} {
		var got []string
		fx.getJSON(t, "/api/address-prefix/"+prefix, &got)
		var want []string
		for _, a := range all {
			if strings.HasPrefix(a, prefix) && len(want) < 10 {
				want = append(want, a)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("address-prefix %q: %v, want %v", prefix, got, want)
		}
	}
}
