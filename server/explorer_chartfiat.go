package server

import (
	"net/http"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// The balance chart's fiat values: the balance after each period valued at
// the rate at the period's end, the moment it is the closing balance, and
// the opening balance at the rate at the range's start. A rate at a time
// is the API's (tickers?timestamp=; balancehistory gives each bucket the
// rates at its start time, as Blockbook does), so a row's rate is the one
// balancehistory gives the bucket starting where the period ends, and a
// period not ended yet gets the current rate. The chart draws the values
// as a line on a scale of its own.

// fiatLine is the fiat line of a balance chart: the table's values joined.
type fiatLine struct {
	D   string // the path
	Max string // the largest value, formatted (the top of its scale)
}

// chartFiat fills the chart's fiat values (nothing without rates), with one
// rate lookup for all the times.
func (e *explorer) chartFiat(r *http.Request, c *balanceChart) {
	f := fiatFrom(r)
	if f == nil || len(c.Rows) == 0 && amountInt(c.Opening).Sign() == 0 {
		return
	}
	times := make([]int64, 0, len(c.Rows)+1)
	times = append(times, c.From)
	for i := range c.Rows {
		c.Rows[i].RateTime = c.Rows[i].Time + c.GroupBy
		times = append(times, c.Rows[i].RateTime)
	}
	f.ratesAt(times)
	c.FiatCode = f.Code
	value := func(a *api.Amount, t int64) (float64, string, bool) {
		rate := f.at[t].rate
		if rate <= 0 {
			return 0, "", false
		}
		v := f.coinValue(a) * rate
		return v, f.format(v, false), true
	}
	top, valued := 0.0, false
	if v, s, ok := value(c.Opening, c.From); ok {
		c.openingFiat, c.OpeningFiat, top, valued = v, s, v, true
	}
	for i := range c.Rows {
		row := &c.Rows[i]
		if v, s, ok := value(row.Balance, row.RateTime); ok {
			row.fiat, row.Fiat, top, valued = v, s, max(top, v), true
		}
	}
	if valued {
		c.fiatMax = f.format(top, false)
	}
}

// plotFiat draws the fiat values of the chart's table at the times they
// are valued (the opening at the left edge), the largest at the top; nil
// without values. Between two values the line holds the earlier one until
// the later one's period starts (the balance does not change before it),
// then rises or falls to it over the period.
func plotFiat(c *balanceChart, x func(int64) float64, bottom float64) *fiatLine {
	if c.fiatMax == "" {
		return nil
	}
	type point struct{ from, x, v float64 }
	var pts []point
	if c.OpeningFiat != "" {
		pts = append(pts, point{0, 0, c.openingFiat})
	}
	top := c.openingFiat
	for _, r := range c.Rows {
		if r.Fiat != "" {
			pts = append(pts, point{min(x(r.Time), plotW), min(x(r.RateTime), plotW), r.fiat})
			top = max(top, r.fiat)
		}
	}
	if top <= 0 {
		top = 1 // all zero: the line lies on the axis
	}
	var d strings.Builder
	at := 0.0
	for i, p := range pts {
		y := fmtF(round1(bottom - max(p.v, 0)/top*(bottom-plotTop)))
		switch {
		case i == 0:
			d.WriteString("M" + fmtF(p.x) + " " + y)
		case p.from > at:
			d.WriteString("H" + fmtF(p.from) + "L" + fmtF(p.x) + " " + y)
		default:
			d.WriteString("L" + fmtF(p.x) + " " + y)
		}
		at = p.x
	}
	if at < plotW {
		d.WriteString("H" + fmtF(plotW)) // the last value holds to the end
	}
	return &fiatLine{D: d.String(), Max: c.fiatMax}
}
