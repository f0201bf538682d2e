package server

import (
	"math"
	"math/big"
	"strconv"

	"github.com/openexplorer/blockbook/api"
)

// The tx page's flow picture: inputs on the left, outputs and the fee on
// the right, each band as high as its value, joined through the tx in the
// middle by ribbons of the same widths.

const (
	flowW       = 600
	flowH       = 180 // the bands' total height, gaps left out
	flowGap     = 3
	flowBandW   = 14
	flowMaxSide = 24 // bands per side; the rest merge into one
)

type flowPlot struct {
	W, H  float64
	Mid   flowBand // the tx
	Bands []flowBand
	Links []flowLink
	Label string
}

type flowBand struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type flowLink struct {
	D, Class string
}

// flowItem is one band's value and title before layout.
type flowItem struct {
	v     float64
	title string
	class string
}

// newFlow lays out tx's flow; nil when the values are unknown (an input
// not resolved) or there is nothing to draw.
func newFlow(tx *api.Tx, coin coinInfo) *flowPlot {
	if tx.EthereumSpecific != nil || len(tx.Vout) == 0 {
		return nil
	}
	f := func(a *api.Amount) float64 { v, _ := new(big.Float).SetInt(amountInt(a)).Float64(); return v }
	money := func(a *api.Amount) string { return withUnit(formatAmount(amountInt(a), coin.Decimals), coin.Shortcut) }
	var ins, outs []flowItem
	if isCoinbase(tx) {
		ins = []flowItem{{v: f(tx.Value), title: "Coinbase: " + money(tx.Value), class: "in"}}
	} else {
		for i := range tx.Vin {
			in := &tx.Vin[i]
			if in.Value == nil {
				return nil
			}
			ins = append(ins, flowItem{v: f(in.Value), title: "Input " + strconv.Itoa(i) + ": " + who(in.Addresses) + money(in.Value), class: "in"})
		}
	}
	for i := range tx.Vout {
		o := &tx.Vout[i]
		outs = append(outs, flowItem{v: f(o.Value), title: "Output " + strconv.Itoa(i) + ": " + who(o.Addresses) + money(o.Value), class: "out"})
	}
	if tx.Fees != nil && amountInt(tx.Fees).Sign() > 0 && !isCoinbase(tx) {
		outs = append(outs, flowItem{v: f(tx.Fees), title: "Fee: " + money(tx.Fees), class: "fee"})
	}
	ins, outs = capItems(ins, "inputs", "in"), capItems(outs, "outputs", "out")
	total := 0.0
	for _, it := range ins {
		total += it.v
	}
	if total <= 0 {
		return nil
	}
	// Bands keep a unit of height even when tiny, so a side may be a
	// little taller than the tx in the middle.
	scale := flowH / total
	sideH := func(items []flowItem) float64 { return sumH(items, scale) + float64(len(items)-1)*flowGap }
	p := &flowPlot{W: flowW, H: math.Ceil(max(sideH(ins), sideH(outs), flowH))}
	midH := float64(flowH)
	p.Mid = flowBand{X: flowW/2 - flowBandW/2, Y: round1((p.H - midH) / 2), W: flowBandW, H: midH, Class: "mid", Title: "This transaction"}
	side := func(items []flowItem, x float64, left bool) {
		y, my := (p.H-sideH(items))/2, p.Mid.Y
		for _, it := range items {
			h := math.Max(it.v*scale, 1)
			b := flowBand{X: x, Y: round1(y), W: flowBandW, H: round1(h), Class: it.class, Title: it.title}
			p.Bands = append(p.Bands, b)
			mh := it.v * float64(midH) / total
			var d string
			if left {
				d = ribbon(x+flowBandW, y, h, p.Mid.X, my, mh)
			} else {
				d = ribbon(p.Mid.X+flowBandW, my, mh, x, y, h)
			}
			p.Links = append(p.Links, flowLink{D: d, Class: it.class})
			y += h + flowGap
			my += mh
		}
	}
	side(ins, 0, true)
	side(outs, flowW-flowBandW, false)
	p.Label = "Flow of " + money(tx.Value) + " from " + strconv.Itoa(len(tx.Vin)) + " inputs to " + strconv.Itoa(len(tx.Vout)) + " outputs"
	return p
}

func sumH(items []flowItem, scale float64) float64 {
	s := 0.0
	for _, it := range items {
		s += math.Max(it.v*scale, 1)
	}
	return s
}

// capItems keeps the largest-index order but merges what is past
// flowMaxSide into one band.
func capItems(items []flowItem, what, class string) []flowItem {
	if len(items) <= flowMaxSide {
		return items
	}
	rest := flowItem{class: class}
	for _, it := range items[flowMaxSide-1:] {
		rest.v += it.v
	}
	rest.title = strconv.Itoa(len(items)-flowMaxSide+1) + " more " + what
	return append(items[:flowMaxSide-1:flowMaxSide-1], rest)
}

// ribbon is a band from (x0, y0..y0+h0) to (x1, y1..y1+h1) with curved
// edges.
func ribbon(x0, y0, h0, x1, y1, h1 float64) string {
	c := (x0 + x1) / 2
	n := func(v float64) string { return fmtF(round1(v)) }
	return "M" + n(x0) + " " + n(y0) + "C" + n(c) + " " + n(y0) + " " + n(c) + " " + n(y1) + " " + n(x1) + " " + n(y1) +
		"V" + n(y1+h1) + "C" + n(c) + " " + n(y1+h1) + " " + n(c) + " " + n(y0+h0) + " " + n(x0) + " " + n(y0+h0) + "Z"
}

func who(addrs []string) string {
	if len(addrs) == 0 {
		return ""
	}
	return addrs[0] + " "
}
