package server

import (
	"strconv"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// qrSVG is an address's QR code drawn as one SVG path: each dark module a
// unit square, in a viewBox of modules (the 4-module quiet zone included),
// so the picture scales without blur and needs no image or script.
type qrSVG struct {
	Size int    // modules per side, quiet zone included
	Path string // the dark modules
}

// newQR encodes text with medium error correction; nil when it does not fit
// a QR code (a descriptor of thousands of characters).
func newQR(text string) *qrSVG {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return nil
	}
	bm := q.Bitmap()
	var b strings.Builder
	for y, row := range bm {
		for x := 0; x < len(row); x++ {
			if !row[x] {
				continue
			}
			// A run of dark modules on a row is one rectangle.
			run := 1
			for x+run < len(row) && row[x+run] {
				run++
			}
			b.WriteString("M" + strconv.Itoa(x) + " " + strconv.Itoa(y) + "h" + strconv.Itoa(run) + "v1h-" + strconv.Itoa(run) + "z")
			x += run - 1
		}
	}
	return &qrSVG{Size: len(bm), Path: b.String()}
}
