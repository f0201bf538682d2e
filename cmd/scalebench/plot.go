package main

import (
	"fmt"
	"math"
	"strings"
)

// panel is one chart of the SVG: a frame with axes, ticks and series.
type panel struct {
	b          *strings.Builder
	x0, y0     float64 // top-left corner of the plot area
	w, h       float64
	xMax, yMax float64
}

func (p panel) px(x float64) float64 { return p.x0 + x/p.xMax*p.w }
func (p panel) py(y float64) float64 { return p.y0 + p.h - y/p.yMax*p.h }

func (p panel) frame(title, xLabel, yLabel string) {
	fmt.Fprintf(p.b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", p.x0, p.y0, p.w, p.h)
	fmt.Fprintf(p.b, `<text x="%.0f" y="%.0f" font-size="15" font-weight="bold">%s</text>`+"\n", p.x0, p.y0-10, title)
	fmt.Fprintf(p.b, `<text x="%.0f" y="%.0f" font-size="12" text-anchor="middle">%s</text>`+"\n", p.x0+p.w/2, p.y0+p.h+36, xLabel)
	fmt.Fprintf(p.b, `<text x="%.0f" y="%.0f" font-size="12" text-anchor="middle" transform="rotate(-90 %.0f %.0f)">%s</text>`+"\n",
		p.x0-52, p.y0+p.h/2, p.x0-52, p.y0+p.h/2, yLabel)
	for i := 0; i <= 5; i++ {
		x, y := p.xMax*float64(i)/5, p.yMax*float64(i)/5
		fmt.Fprintf(p.b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle">%.3g</text>`+"\n", p.px(x), p.y0+p.h+16, x)
		fmt.Fprintf(p.b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="end">%.4g</text>`+"\n", p.x0-6, p.py(y)+4, y)
		fmt.Fprintf(p.b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", p.x0, p.x0+p.w, p.py(y), p.py(y))
	}
}

func (p panel) line(xs, ys []float64, color, dash, label string, legendRow int) {
	var pts []string
	for i := range xs {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.px(xs[i]), p.py(math.Min(ys[i], p.yMax))))
	}
	fmt.Fprintf(p.b, `<polyline fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s" points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
	ly := p.y0 + 14 + 16*float64(legendRow)
	fmt.Fprintf(p.b, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n", p.x0+p.w-190, p.x0+p.w-165, ly-4, ly-4, color, dash)
	fmt.Fprintf(p.b, `<text x="%.0f" y="%.0f" font-size="11">%s</text>`+"\n", p.x0+p.w-160, ly, label)
}

// plotSVG draws throughput per million txs and memory against chain size.
func plotSVG(samples []sample, r report, budgetMB int) string {
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="760" height="620" font-family="sans-serif">` + "\n")
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	last := samples[len(samples)-1]
	xMax := math.Max(1, math.Ceil(float64(last.txs)/1e6))

	var xs, ys []float64
	yMax := 1.0
	for _, row := range r.rows {
		xs = append(xs, float64(row.million)-0.5, float64(row.million)-0.5)
		ys = append(ys, row.txPerS, row.txPerS)
		yMax = math.Max(yMax, row.txPerS)
	}
	// Steps: each million's throughput drawn across its width.
	for i := 0; i < len(xs); i += 2 {
		xs[i] -= 0.5
		xs[i+1] += 0.5
	}
	top := panel{b: &b, x0: 80, y0: 40, w: 640, h: 220, xMax: xMax, yMax: yMax * 1.15}
	top.frame("blockbook initial sync: throughput per million txs", "chain size (million txs)", "tx/s")
	if len(xs) > 0 {
		top.line(xs, ys, "#1f77b4", "", "tx/s over each million", 0)
		if r.rows[0].txPerS > 0 {
			t := 0.7 * r.rows[0].txPerS
			top.line([]float64{0, xMax}, []float64{t, t}, "#d62728", "6,4", "70% of the first million", 1)
		}
	}

	var mx, rss, hwm []float64
	memMax := float64(budgetMB)
	for _, s := range samples {
		mx = append(mx, float64(s.txs)/1e6)
		rss = append(rss, mb(s.rss))
		hwm = append(hwm, mb(s.hwm))
		memMax = math.Max(memMax, mb(s.hwm))
	}
	bottom := panel{b: &b, x0: 80, y0: 340, w: 640, h: 220, xMax: xMax, yMax: memMax * 1.15}
	bottom.frame("memory (RSS) against chain size", "chain size (million txs)", "MB")
	bottom.line(mx, rss, "#2ca02c", "", "RSS", 0)
	bottom.line(mx, hwm, "#ff7f0e", "3,3", "peak RSS (VmHWM)", 1)
	bottom.line([]float64{0, xMax}, []float64{float64(budgetMB), float64(budgetMB)}, "#d62728", "6,4", fmt.Sprintf("-syncmemory=%d", budgetMB), 2)
	b.WriteString("</svg>\n")
	return b.String()
}
