package server

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
)

// Values fall in decades of the base unit from 10^(decimals-5) up, each
// edge in the band above it; empty bands are left out and the bars are
// sized against the largest row.
func TestBandsOf(t *testing.T) {
	var utxos []api.Utxo
	for _, v := range []uint64{0, 999, 1_000, 50_000, 50_000, 100_000_000, 20_000_000_000} {
		utxos = append(utxos, api.Utxo{Value: api.NewAmount(v)})
	}
	b := bandsOf(utxos, 8)
	var got []string
	for _, r := range b.Rows {
		to := "-"
		if r.To != nil {
			to = amountInt(r.To).String()
		}
		got = append(got, fmt.Sprintf("%s..%s n=%d v=%s %d%% %d%%", amountInt(r.From), to, r.Count, amountInt(r.Value), r.CountPct, r.ValuePct))
	}
	want := []string{
		"0..1000 n=2 v=999 100% 1%",
		"1000..10000 n=1 v=1000 50% 1%",
		"10000..100000 n=2 v=100000 100% 1%",
		"100000000..1000000000 n=1 v=100000000 50% 1%",
		"10000000000..- n=1 v=20000000000 50% 100%",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || b.Count != 7 || amountInt(b.Total).String() != "20100101999" {
		t.Errorf("bands %q count %d total %s\nwant %q", got, b.Count, amountInt(b.Total), want)
	}
	if e := bandsOf(nil, 8); len(e.Rows) != 0 || e.Count != 0 {
		t.Errorf("no UTXOs: %+v", e)
	}
}

// bandsText is a summary's rows as text, for comparing two summaries.
func bandsText(b *utxoBands) string {
	var s strings.Builder
	fmt.Fprintf(&s, "n=%d total=%s note=%q", b.Count, amountInt(b.Total), b.Note)
	for _, r := range b.Rows {
		to := "-"
		if r.To != nil {
			to = amountInt(r.To).String()
		}
		fmt.Fprintf(&s, "|%s..%s n=%d v=%s %d%% %d%%", amountInt(r.From), to, r.Count, amountInt(r.Value), r.CountPct, r.ValuePct)
	}
	return s.String()
}

// The summary reads UtxoValues; its bands equal those of the old
// computation (bandsOf of the listed UTXOs) for every address of the
// fixture, the one with the most UTXOs (its whale) and those with pending
// outputs included, and for each account, and the values are the listed
// ones.
func TestUtxoValuesBands(t *testing.T) {
	s := newServed(t)
	ctx := context.Background()
	descs := []string{s.f.DemoAddress, s.f.UnusedAddress}
	for a := range s.f.Ledger.Addresses {
		descs = append(descs, a)
	}
	for _, a := range s.f.Accounts {
		descs = append(descs, a.Xpub(), a.Descriptor(true))
	}
	whale, most := "", 0
	for _, d := range descs {
		us, err := s.svc.Utxos(ctx, d, false, 0)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		vs, err := s.svc.UtxoValues(ctx, d, 0)
		if err != nil {
			t.Fatalf("%s: values: %v", d, err)
		}
		var listed []uint64
		for _, u := range us {
			listed = append(listed, amountInt(u.Value).Uint64())
		}
		slices.Sort(listed)
		got := slices.Sorted(slices.Values(vs))
		if !slices.Equal(got, listed) {
			t.Errorf("%s: values %v, the listed UTXOs' %v", d, got, listed)
		}
		if old, now := bandsText(bandsOf(us, 8)), bandsText(bandsOfValues(len(vs), func(i int, z *big.Int) *big.Int { return z.SetUint64(vs[i]) }, 8)); old != now {
			t.Errorf("%s: bands\n%s\nwere\n%s", d, now, old)
		}
		if len(us) > most {
			whale, most = d, len(us)
		}
	}
	if most < 20 {
		t.Errorf("the fixture's largest UTXO set (%s) has %d outputs", whale, most)
	}
	if _, err := s.svc.UtxoValues(ctx, "not-an-address", 0); err == nil {
		t.Error("a bad address has values")
	}
}
