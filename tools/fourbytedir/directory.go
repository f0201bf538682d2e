// Package fourbytedir is a double of the 4-byte directory's signatures
// endpoint (/api/v1/signatures/?page=N) for tests of the signature
// downloader: it speaks the directory's wire format, Django REST
// framework pages {"count", "next", "previous", "results"} with absolute
// next/previous links (null at the ends), newest signature first, each
// {"id", "created_at", "text_signature", "hex_signature",
// "bytes_signature"}, and can go down or answer garbage.
package fourbytedir

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain/calldata"
)

// Directory is the double; Close stops it.
type Directory struct {
	srv *httptest.Server

	mu       sync.Mutex
	rows     []Row // by id, ascending
	pageSize int
	down     bool           // every request fails with 503
	garbage  map[int]string // page number → body answered with status 200
	served   []int          // page numbers answered, in order
}

// Row is one signature of the directory.
type Row struct {
	ID   int64
	Text string
	Hex  string // the hex_signature served (normally the text's selector)
}

// New starts a directory serving pageSize signatures a page.
func New(pageSize int) *Directory {
	d := &Directory{pageSize: pageSize, garbage: map[int]string{}}
	d.srv = httptest.NewServer(d)
	return d
}

// Close stops the server.
func (d *Directory) Close() { d.srv.Close() }

// URL is the signatures endpoint (the fourByteSignatures setting).
func (d *Directory) URL() string { return d.srv.URL + "/api/v1/signatures/" }

// Add registers signatures with the next ids.
func (d *Directory) Add(texts ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, text := range texts {
		id := int64(len(d.rows)) + 1
		if len(d.rows) > 0 {
			id = d.rows[len(d.rows)-1].ID + 1
		}
		d.rows = append(d.rows, Row{ID: id, Text: text, Hex: fmt.Sprintf("0x%08x", calldata.Selector(text))})
	}
}

// AddRow registers a row as given (ids must grow).
func (d *Directory) AddRow(r Row) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rows = append(d.rows, r)
}

// Served lists the page numbers answered since the last ResetServed.
func (d *Directory) Served() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.served)
}

// ResetServed forgets the pages answered.
func (d *Directory) ResetServed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.served = nil
}

// SetDown makes every request fail with 503 (or not).
func (d *Directory) SetDown(down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = down
}

// SetGarbage makes page n answer body with status 200.
func (d *Directory) SetGarbage(n int, body string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.garbage[n] = body
}

// PageLink is page n's URL as next links give it.
func (d *Directory) PageLink(n int) string { return d.URL() + "?page=" + strconv.Itoa(n) }

func (d *Directory) link(n int) *string {
	s := d.PageLink(n)
	return &s
}

// ServeHTTP answers the signatures endpoint.
func (d *Directory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.URL.Path != "/api/v1/signatures/" {
		http.NotFound(w, r)
		return
	}
	n := 1
	if p := r.URL.Query().Get("page"); p != "" {
		var err error
		if n, err = strconv.Atoi(p); err != nil || n < 1 {
			http.Error(w, `{"detail":"Invalid page."}`, http.StatusNotFound)
			return
		}
	}
	if d.down {
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
		return
	}
	d.served = append(d.served, n)
	if g, ok := d.garbage[n]; ok {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, g)
		return
	}
	newest := slices.Clone(d.rows)
	slices.Reverse(newest)
	from := (n - 1) * d.pageSize
	if from > len(newest) || (from == len(newest) && n > 1) {
		http.Error(w, `{"detail":"Invalid page."}`, http.StatusNotFound)
		return
	}
	type result struct {
		ID             int64  `json:"id"`
		CreatedAt      string `json:"created_at"`
		TextSignature  string `json:"text_signature"`
		HexSignature   string `json:"hex_signature"`
		BytesSignature string `json:"bytes_signature"`
	}
	out := struct {
		Count    int      `json:"count"`
		Next     *string  `json:"next"`
		Previous *string  `json:"previous"`
		Results  []result `json:"results"`
	}{Count: len(newest), Results: []result{}}
	for _, row := range newest[from:min(from+d.pageSize, len(newest))] {
		var raw []rune // the 4 bytes, each as the character of that code point
		for i := 2; i+2 <= len(row.Hex) && len(raw) < 4; i += 2 {
			b, _ := strconv.ParseUint(row.Hex[i:i+2], 16, 8)
			raw = append(raw, rune(b))
		}
		out.Results = append(out.Results, result{ID: row.ID, TextSignature: row.Text, HexSignature: row.Hex, BytesSignature: string(raw),
			CreatedAt: time.Date(2016, 11, 30, 0, 0, int(row.ID), 0, time.UTC).Format("2006-01-02T15:04:05.000000Z")})
	}
	if from+d.pageSize < len(newest) {
		out.Next = d.link(n + 1)
	}
	if n > 1 {
		out.Previous = d.link(n - 1)
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		log.Printf("fourbytedir: %v", err)
	}
}
