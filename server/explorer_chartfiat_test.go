package server

import (
	"testing"
)

// The fiat line joins the table's values where they are valued (the
// opening at the left edge, a period's end clamped to the chart), holding
// a value until the next period with txs starts, the largest at the top;
// values never valued give no line.
func TestPlotFiat(t *testing.T) {
	x := func(ts int64) float64 { return float64(ts) } // 1 unit a second
	bottom := float64(plotH - plotBottom)
	c := &balanceChart{GroupBy: 100, OpeningFiat: "0.00 EUR", fiatMax: "10.00 EUR", Rows: []historyRow{
		{Time: 0, RateTime: 100, Fiat: "10.00 EUR", fiat: 10},
		{Time: 300, RateTime: 400, Fiat: "", fiat: 0}, // rate unknown: no point
		{Time: 700, RateTime: 800, Fiat: "5.00 EUR", fiat: 5},
	}}
	l := plotFiat(c, x, bottom)
	mid := fmtF(round1(bottom - 0.5*(bottom-plotTop)))
	if want := "M0 " + fmtF(bottom) + "L100 " + fmtF(plotTop) + "H700L" + fmtF(plotW) + " " + mid; l == nil || l.D != want || l.Max != "10.00 EUR" {
		t.Errorf("line %+v, want %q", l, want)
	}
	one := &balanceChart{fiatMax: "0.00 EUR", Rows: []historyRow{{RateTime: 50, Fiat: "0.00 EUR"}}}
	if l := plotFiat(one, x, bottom); l == nil || l.D != "M50 "+fmtF(bottom)+"H"+fmtF(plotW) {
		t.Errorf("one zero value: %+v", l)
	}
	if l := plotFiat(&balanceChart{Rows: []historyRow{{RateTime: 50}}}, x, bottom); l != nil {
		t.Errorf("no values: %+v", l)
	}
}
