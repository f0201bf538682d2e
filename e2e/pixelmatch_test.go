package e2e

// The comparison of screenshots with their references: pixelmatch's
// (npm) definition of a differing pixel, in Go, so that the test needs no
// Node process. A pixel differs when the YIQ distance of its two colours
// (Kotsarenko and Ramos) is over 35215·threshold², unless it is
// anti-aliasing in either image (pixelmatch's default, includeAA false).
// Screenshots are opaque; a translucent pixel is blended with white first,
// as pixelmatch 5 does.

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// pixelDiff counts the pixels that differ between a and b (the same size)
// and, when out is not nil (a's size), draws pixelmatch's diff picture
// there: the first image faded to grey, differing pixels red,
// anti-aliasing yellow.
func pixelDiff(a, b *image.NRGBA, threshold float64, out *image.NRGBA) int {
	if out == nil && bytes.Equal(a.Pix, b.Pix) {
		return 0
	}
	w, h := a.Rect.Dx(), a.Rect.Dy()
	maxDelta := 35215 * threshold * threshold
	p1, p2 := a.Pix, b.Pix
	diff := 0
	for y := range h {
		for x := range w {
			pos := (y*w + x) * 4
			delta := colorDelta(p1, p2, pos, pos, false)
			switch {
			case math.Abs(delta) <= maxDelta:
				if out != nil {
					v := blendWhite(rgb2y(float64(p1[pos]), float64(p1[pos+1]), float64(p1[pos+2])), 0.1*float64(p1[pos+3])/255)
					setPix(out, pos, v, v, v)
				}
			case antialiased(p1, x, y, w, h, p2) || antialiased(p2, x, y, w, h, p1):
				if out != nil {
					setPix(out, pos, 255, 255, 0)
				}
			default:
				if out != nil {
					setPix(out, pos, 255, 0, 0)
				}
				diff++
			}
		}
	}
	return diff
}

func setPix(img *image.NRGBA, pos int, r, g, b float64) {
	img.Pix[pos], img.Pix[pos+1], img.Pix[pos+2], img.Pix[pos+3] = uint8(r), uint8(g), uint8(b), 255
}

// antialiased tells whether the pixel (x1, y1) of img looks like
// anti-aliasing: at most two neighbours of its colour, both a darker and
// a brighter neighbour, and the darkest or the brightest of them inside a
// flat area (3+ equal neighbours) in both images.
func antialiased(img []uint8, x1, y1, w, h int, img2 []uint8) bool {
	x0, y0, x2, y2 := max(x1-1, 0), max(y1-1, 0), min(x1+1, w-1), min(y1+1, h-1)
	pos := (y1*w + x1) * 4
	zeroes := 0
	if x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 {
		zeroes = 1
	}
	var lo, hi float64
	var loX, loY, hiX, hiY int
	for x := x0; x <= x2; x++ {
		for y := y0; y <= y2; y++ {
			if x == x1 && y == y1 {
				continue
			}
			delta := colorDelta(img, img, pos, (y*w+x)*4, true)
			switch {
			case delta == 0:
				if zeroes++; zeroes > 2 {
					return false
				}
			case delta < lo:
				lo, loX, loY = delta, x, y
			case delta > hi:
				hi, hiX, hiY = delta, x, y
			}
		}
	}
	if lo == 0 || hi == 0 {
		return false
	}
	return manySiblings(img, loX, loY, w, h) && manySiblings(img2, loX, loY, w, h) ||
		manySiblings(img, hiX, hiY, w, h) && manySiblings(img2, hiX, hiY, w, h)
}

// manySiblings tells whether a pixel has 3+ neighbours of exactly its
// colour (the image's edge counting as one).
func manySiblings(img []uint8, x1, y1, w, h int) bool {
	x0, y0, x2, y2 := max(x1-1, 0), max(y1-1, 0), min(x1+1, w-1), min(y1+1, h-1)
	pos := (y1*w + x1) * 4
	zeroes := 0
	if x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 {
		zeroes = 1
	}
	for x := x0; x <= x2; x++ {
		for y := y0; y <= y2; y++ {
			if x == x1 && y == y1 {
				continue
			}
			pos2 := (y*w + x) * 4
			if img[pos] == img[pos2] && img[pos+1] == img[pos2+1] && img[pos+2] == img[pos2+2] && img[pos+3] == img[pos2+3] {
				zeroes++
			}
			if zeroes > 2 {
				return true
			}
		}
	}
	return false
}

// colorDelta is the squared YIQ distance of pixel k of img1 and pixel m of
// img2, negative when the first is brighter; yOnly gives the brightness
// difference alone (first minus second).
func colorDelta(img1, img2 []uint8, k, m int, yOnly bool) float64 {
	r1, g1, b1, a1 := float64(img1[k]), float64(img1[k+1]), float64(img1[k+2]), float64(img1[k+3])
	r2, g2, b2, a2 := float64(img2[m]), float64(img2[m+1]), float64(img2[m+2]), float64(img2[m+3])
	if a1 == a2 && r1 == r2 && g1 == g2 && b1 == b2 {
		return 0
	}
	if a1 < 255 {
		a1 /= 255
		r1, g1, b1 = blendWhite(r1, a1), blendWhite(g1, a1), blendWhite(b1, a1)
	}
	if a2 < 255 {
		a2 /= 255
		r2, g2, b2 = blendWhite(r2, a2), blendWhite(g2, a2), blendWhite(b2, a2)
	}
	y1, y2 := rgb2y(r1, g1, b1), rgb2y(r2, g2, b2)
	y := y1 - y2
	if yOnly {
		return y
	}
	i := rgb2i(r1, g1, b1) - rgb2i(r2, g2, b2)
	q := rgb2q(r1, g1, b1) - rgb2q(r2, g2, b2)
	delta := 0.5053*y*y + 0.299*i*i + 0.1957*q*q
	if y1 > y2 {
		return -delta
	}
	return delta
}

func rgb2y(r, g, b float64) float64 { return r*0.29889531 + g*0.58662247 + b*0.11448223 }
func rgb2i(r, g, b float64) float64 { return r*0.59597799 - g*0.27417610 - b*0.32180189 }
func rgb2q(r, g, b float64) float64 { return r*0.21147017 - g*0.52261711 + b*0.31114694 }
func blendWhite(c, a float64) float64 {
	return 255 + (c-255)*a
}

// toNRGBA converts a decoded image to non-premultiplied RGBA at (0, 0).
func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Rect, img, b.Min, draw.Src)
	return n
}

// TestPixelDiff checks the comparison on pictures whose answer is known:
// equal images, a changed block of flat colour, a faint change under the
// threshold, and a glyph's soft edge moved by one pixel (anti-aliasing,
// not counted).
func TestPixelDiff(t *testing.T) {
	flat := func(c color.NRGBA) *image.NRGBA {
		img := image.NewNRGBA(image.Rect(0, 0, 20, 20))
		draw.Draw(img, img.Rect, image.NewUniform(c), image.Point{}, draw.Src)
		return img
	}
	white := color.NRGBA{255, 255, 255, 255}
	a := flat(white)
	if n := pixelDiff(a, flat(white), 0.1, nil); n != 0 {
		t.Errorf("equal images: %d pixels differ", n)
	}
	b := flat(white)
	draw.Draw(b, image.Rect(5, 5, 9, 8), image.NewUniform(color.NRGBA{0, 0, 0, 255}), image.Point{}, draw.Src)
	d := image.NewNRGBA(a.Rect)
	if n := pixelDiff(a, b, 0.1, d); n != 12 {
		t.Errorf("a black 4×3 block on white: %d pixels differ, want 12", n)
	}
	if c := d.NRGBAAt(6, 6); c != (color.NRGBA{255, 0, 0, 255}) {
		t.Errorf("diff picture at a differing pixel: %v, want red", c)
	}
	if c := d.NRGBAAt(0, 0); c.R != c.G || c.G != c.B || c.R < 240 {
		t.Errorf("diff picture at an equal pixel: %v, want a light grey", c)
	}
	// 255 → 250 in every channel: a squared YIQ distance of about 12.6,
	// under 35215·0.1² = 352; 255 → 200 (about 1,528) is over it.
	if n := pixelDiff(a, flat(color.NRGBA{250, 250, 250, 255}), 0.1, nil); n != 0 {
		t.Errorf("a faint change: %d pixels differ, want 0", n)
	}
	if n := pixelDiff(a, flat(color.NRGBA{200, 200, 200, 255}), 0.1, nil); n != 400 {
		t.Errorf("a grey change: %d pixels differ, want 400", n)
	}
	// A black bar (x 5–9) with a grey soft edge at x 10, against the same
	// bar one pixel wider: the edge pixel of the first image sits between
	// black and white flat areas in both, so column 10 is anti-aliasing.
	bar := func(edge color.NRGBA) *image.NRGBA {
		img := flat(white)
		draw.Draw(img, image.Rect(5, 0, 10, 20), image.NewUniform(color.NRGBA{0, 0, 0, 255}), image.Point{}, draw.Src)
		draw.Draw(img, image.Rect(10, 0, 11, 20), image.NewUniform(edge), image.Point{}, draw.Src)
		return img
	}
	if n := pixelDiff(bar(color.NRGBA{128, 128, 128, 255}), bar(color.NRGBA{0, 0, 0, 255}), 0.1, d); n != 0 {
		t.Errorf("a soft edge turned hard: %d pixels differ, want 0 (anti-aliasing)", n)
	}
	if c := d.NRGBAAt(10, 10); c != (color.NRGBA{255, 255, 0, 255}) {
		t.Errorf("diff picture at the soft edge: %v, want yellow", c)
	}
}

// TestCompareShot checks the screenshot comparison's budget and its
// failure report: 10 of 10,000 pixels (0.1%) may differ, 11 may not, and
// a failure leaves the actual image and the diff picture where it says.
func TestCompareShot(t *testing.T) {
	dir := t.TempDir()
	ref := image.NewNRGBA(image.Rect(0, 0, 100, 100))
	draw.Draw(ref, ref.Rect, image.NewUniform(color.NRGBA{255, 255, 255, 255}), image.Point{}, draw.Src)
	file := filepath.Join(dir, "ref.png")
	if err := writePNG(file, ref); err != nil {
		t.Fatal(err)
	}
	fails := filepath.Join(dir, "fails")
	failDir := func() string { return fails }
	dots := func(n int) *image.NRGBA {
		img := image.NewNRGBA(ref.Rect)
		copy(img.Pix, ref.Pix)
		for i := range n {
			img.SetNRGBA(10*(i%10), 10*(i/10), color.NRGBA{0, 0, 0, 255}) // isolated: not anti-aliasing
		}
		return img
	}
	if err := compareShot(file, "ref", dots(10), failDir); err != nil {
		t.Errorf("10 of 10,000 pixels differ: %v", err)
	}
	err := compareShot(file, "ref", dots(11), failDir)
	if err == nil || !strings.Contains(err.Error(), "11 of 10000 pixels differ") {
		t.Fatalf("11 of 10,000 pixels differ: %v", err)
	}
	for _, f := range []string{"ref.actual.png", "ref.diff.png"} {
		path := filepath.Join(fails, f)
		if !strings.Contains(err.Error(), path) {
			t.Errorf("the failure does not name %s: %v", path, err)
		}
		if _, err := readPNG(path); err != nil {
			t.Error(err)
		}
	}
	if err := compareShot(file, "ref", image.NewNRGBA(image.Rect(0, 0, 100, 90)), failDir); err == nil {
		t.Error("an image of another size passes")
	}
}
