package server

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/api"
)

// SVG geometry of the explorer's charts, computed here so that templates
// only print numbers into presentation attributes: the CSP allows no
// inline style, and the stylesheet gives the colours by class.

// Balance chart and bar chart sizes in viewBox units; the stylesheet scales
// them to the page's width.
const (
	plotW, plotH = 720, 200
	barsH        = 120
	plotTop      = 8
	plotBottom   = 22 // room for the time labels
)

type tick struct {
	X, Y  float64
	Label string
	End   bool // text-anchor end (the right-hand label)
}

type bar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// chartPlot is a balance chart and its received/sent bars.
type chartPlot struct {
	W, H, BarsH  int
	Line, Area   string
	YTicks       []tick
	XTicks       []tick
	Bars         []bar
	Mid, BarsTop float64
	BarsMax      string
	Fiat         *fiatLine // the balance's value in fiat, nil without rates
}

// plotHistory draws the balance as a step line over [from, end) and each
// period's received (up) and sent (down) as bars.
func plotHistory(c *balanceChart, from, end int64, coin coinInfo) *chartPlot {
	if len(c.Rows) == 0 && amountInt(c.Opening).Sign() == 0 {
		return nil
	}
	p := &chartPlot{W: plotW, H: plotH, BarsH: barsH}
	fv := func(v *api.Amount) float64 { f, _ := new(big.Float).SetInt(amountInt(v)).Float64(); return f }
	maxBal := fv(c.Opening)
	maxBar := 0.0
	for _, r := range c.Rows {
		maxBal = max(maxBal, fv(r.Balance))
		maxBar = max(maxBar, fv(r.Received), fv(r.Sent))
	}
	if maxBal <= 0 {
		maxBal = 1
	}
	bottom := float64(plotH - plotBottom)
	x := func(t int64) float64 { return round1(float64(t-from) / float64(end-from) * plotW) }
	y := func(v *api.Amount) float64 {
		return round1(bottom - math.Max(fv(v), 0)/maxBal*(bottom-plotTop))
	}
	var b strings.Builder
	b.WriteString("M0 " + fmtF(y(c.Opening)))
	for _, r := range c.Rows {
		b.WriteString("H" + fmtF(x(r.Time)) + "V" + fmtF(y(r.Balance)))
	}
	b.WriteString("H" + fmtF(plotW))
	p.Line = b.String()
	p.Area = p.Line + "V" + fmtF(bottom) + "H0Z"
	scale := math.Pow(10, float64(coin.Decimals))
	for _, k := range []float64{0, .5, 1} {
		p.YTicks = append(p.YTicks, tick{X: 4, Y: round1(bottom - k*(bottom-plotTop)), Label: compactNum(maxBal*k/scale) + " " + coin.Shortcut})
	}
	p.XTicks = []tick{{X: 0, Y: plotH - 6, Label: chartDate(from, end-from)}, {X: plotW, Y: plotH - 6, Label: chartDate(end, end-from), End: true}}
	p.Fiat = plotFiat(c, x, bottom) // explorer_chartfiat.go
	// Bars: received above the middle line, sent below it.
	p.Mid, p.BarsTop = barsH/2, 4
	half := float64(barsH)/2 - p.BarsTop
	w := math.Max(float64(c.GroupBy)/float64(end-from)*plotW-1, 1)
	if maxBar > 0 {
		p.BarsMax = compactNum(maxBar/scale) + " " + coin.Shortcut
		for _, r := range c.Rows {
			title := chartDate(r.Time, c.GroupBy)
			if h := fv(r.Received) / maxBar * half; h > 0 {
				p.Bars = append(p.Bars, bar{X: x(r.Time), Y: round1(p.Mid - math.Max(h, 1)), W: round1(w), H: round1(math.Max(h, 1)),
					Class: "recv", Title: title + ": received " + withUnit(formatAmount(amountInt(r.Received), coin.Decimals), coin.Shortcut)})
			}
			if h := fv(r.Sent) / maxBar * half; h > 0 {
				p.Bars = append(p.Bars, bar{X: x(r.Time), Y: p.Mid, W: round1(w), H: round1(math.Max(h, 1)),
					Class: "sent", Title: title + ": sent " + withUnit(formatAmount(amountInt(r.Sent), coin.Decimals), coin.Shortcut)})
			}
		}
	}
	return p
}

// chartDate labels a time: with the hour when the chart spans less than a
// few days.
func chartDate(t, span int64) string {
	if span < 3*86400 {
		return time.Unix(t, 0).UTC().Format("2006-01-02 15:04")
	}
	return time.Unix(t, 0).UTC().Format("2006-01-02")
}

// compactNum renders an axis value with at most 4 significant digits.
func compactNum(f float64) string {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 4, 64), 64)
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// periodName names a bucket width: "hour", "6 hours", "day", "week"...
func periodName(sec int64) string {
	switch {
	case sec%(7*86400) == 0 && sec > 7*86400:
		return strconv.FormatInt(sec/(7*86400), 10) + " weeks"
	case sec == 7*86400:
		return "week"
	case sec%86400 == 0 && sec > 86400:
		return strconv.FormatInt(sec/86400, 10) + " days"
	case sec == 86400:
		return "day"
	case sec%3600 == 0 && sec > 3600:
		return strconv.FormatInt(sec/3600, 10) + " hours"
	}
	return "hour"
}
