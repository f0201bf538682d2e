package server

import (
	"fmt"
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
