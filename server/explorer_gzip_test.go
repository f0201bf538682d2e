package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"":                        false,
		"gzip":                    true,
		"GZIP":                    true,
		"gzip, deflate, br, zstd": true,
		"br;q=1.0, gzip;q=0.8":    true,
		"x-gzip":                  true,
		"*":                       true,
		"gzip;q=0":                false,
		"gzip; q=0.000":           false,
		"gzip;q=bad":              false,
		"*;q=0":                   false,
		"*, gzip;q=0":             false,
		"*;q=0, gzip":             true,
		"deflate, br":             false,
		"identity":                false,
		"gzipx":                   false,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", h, got, want)
		}
	}
}

// rawGet sends a request without the client's own gzip handling and
// returns the answer with its body as sent.
func rawGet(t *testing.T, base, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Explorer pages and text assets are gzipped for a client that asks, with
// Vary and the sent length; a client that does not ask (or refuses with
// q=0) gets the same bytes uncompressed; HEAD has GET's length; the REST
// API is never compressed.
func TestExplorerGzip(t *testing.T) {
	s := newServed(t)
	base := s.srv.URL
	var fan string // the tx with the most outputs: a long page
	most := 0
	for _, b := range s.f.Gen.Blocks() {
		for _, tx := range b.Transactions {
			if len(tx.TxOut) > most {
				most, fan = len(tx.TxOut), tx.TxHash().String()
			}
		}
	}
	// Pages of confirmed data only: a pending tx's age may change between
	// the requests.
	for _, path := range []string{"/tx/" + fan, "/block/1", "/blocks", "/tx/" + strings.Repeat("ab", 32)} {
		plain, pb := rawGet(t, base, "GET", path)
		zipped, zb := rawGet(t, base, "GET", path, "Accept-Encoding", "gzip, deflate, br")
		refused, rb := rawGet(t, base, "GET", path, "Accept-Encoding", "gzip;q=0, br")
		head, hb := rawGet(t, base, "HEAD", path, "Accept-Encoding", "gzip")
		if plain.Header.Get("Content-Encoding") != "" || refused.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: compressed for a client that did not ask", path)
		}
		if zipped.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: not compressed for a gzip client (%d bytes)", path, len(pb))
		}
		for _, r := range []*http.Response{plain, zipped, refused, head} {
			if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("%s: Vary %q", path, r.Header.Get("Vary"))
			}
			if r.StatusCode != plain.StatusCode || r.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("%s: status %d (plain %d), CSP %q", path, r.StatusCode, plain.StatusCode, r.Header.Get("Content-Security-Policy"))
			}
		}
		if got := gunzip(t, zb); !bytes.Equal(got, pb) || !bytes.Equal(rb, pb) {
			t.Errorf("%s: gzip body (%d bytes unzipped) or refused (%d) differs from the plain page (%d)", path, len(got), len(rb), len(pb))
		}
		if zipped.ContentLength != int64(len(zb)) || plain.ContentLength != int64(len(pb)) || len(zb) >= len(pb)*3/4 {
			t.Errorf("%s: lengths %d (sent %d) and %d (sent %d)", path, zipped.ContentLength, len(zb), plain.ContentLength, len(pb))
		}
		if len(hb) != 0 || head.ContentLength != zipped.ContentLength || head.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: HEAD length %d, body %d bytes, GET's %d", path, head.ContentLength, len(hb), zipped.ContentLength)
		}
	}

	// The API stays byte for byte Blockbook's answer, gzip asked or not.
	for _, path := range []string{"/api/v2/tx/" + fan, "/api/v2/address/" + s.f.DemoAddress, "/api/v2/tx/" + strings.Repeat("ab", 32)} {
		plain, pb := rawGet(t, base, "GET", path)
		zipped, zb := rawGet(t, base, "GET", path, "Accept-Encoding", "gzip")
		if zipped.Header.Get("Content-Encoding") != "" || zipped.Header.Get("Vary") != plain.Header.Get("Vary") || !bytes.Equal(pb, zb) {
			t.Errorf("%s: the API answers a gzip client differently (%q, %d against %d bytes)", path, zipped.Header.Get("Content-Encoding"), len(zb), len(pb))
		}
	}

	// Assets: a validator per encoding, 304 on a match.
	_, body := rawGet(t, base, "GET", "/blocks")
	css := assetRef(t, string(body), "explorer.css")
	plain, pb := rawGet(t, base, "GET", css)
	zipped, zb := rawGet(t, base, "GET", css, "Accept-Encoding", "gzip")
	if zipped.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, zb), pb) || zipped.ContentLength != int64(len(zb)) {
		t.Fatalf("stylesheet: encoding %q, %d bytes zipped, %d plain", zipped.Header.Get("Content-Encoding"), len(zb), len(pb))
	}
	et, ez := plain.Header.Get("ETag"), zipped.Header.Get("ETag")
	if et == "" || ez == "" || et == ez || !strings.Contains(zipped.Header.Get("Vary"), "Accept-Encoding") ||
		zipped.Header.Get("Content-Type") != plain.Header.Get("Content-Type") || !strings.HasPrefix(plain.Header.Get("Content-Type"), "text/css") {
		t.Errorf("stylesheet: ETags %q and %q, Vary %q, types %q and %q", et, ez, zipped.Header.Get("Vary"), plain.Header.Get("Content-Type"), zipped.Header.Get("Content-Type"))
	}
	if r, b := rawGet(t, base, "GET", css, "Accept-Encoding", "gzip", "If-None-Match", ez); r.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Errorf("stylesheet revalidated with its gzip ETag: %d, %d bytes", r.StatusCode, len(b))
	}
	if r, _ := rawGet(t, base, "GET", css, "If-None-Match", ez); r.StatusCode != http.StatusOK {
		t.Errorf("the gzip ETag validated the plain stylesheet: %d", r.StatusCode)
	}
	// A failed precondition is a 412 without a body, and says so (a
	// stale length would leave the client waiting for bytes).
	if r, b := rawGet(t, base, "GET", css, "Accept-Encoding", "gzip", "If-Match", `"x"`); r.StatusCode != http.StatusPreconditionFailed || len(b) != 0 || r.Header.Get("Content-Encoding") != "" {
		t.Errorf("stylesheet with a failed If-Match: %d, %d bytes, encoding %q", r.StatusCode, len(b), r.Header.Get("Content-Encoding"))
	}
	icon, ib := rawGet(t, base, "GET", assetRef(t, string(body), "favicon.svg"), "Accept-Encoding", "gzip")
	if icon.Header.Get("Content-Encoding") != "" || icon.Header.Get("Vary") != "" || len(ib) == 0 {
		t.Errorf("the small icon: encoding %q, Vary %q", icon.Header.Get("Content-Encoding"), icon.Header.Get("Vary"))
	}
}

// assetRef is the versioned link of an asset in a page.
func assetRef(t *testing.T, page, name string) string {
	t.Helper()
	i := strings.Index(page, "/static/"+name+"?v=")
	if i < 0 {
		t.Fatalf("the page does not link %s", name)
	}
	end := strings.IndexByte(page[i:], '"')
	return page[i : i+end]
}

// A small answer is sent as it is, with Vary (it may differ for a larger
// one); a large one is compressed with pooled writers, each answer whole.
func TestSendPage(t *testing.T) {
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	small := []byte(strings.Repeat("x", gzipMinBytes-1))
	w := httptest.NewRecorder()
	sendPage(w, req, http.StatusNotFound, small)
	if w.Code != http.StatusNotFound || w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), small) ||
		w.Header().Get("Vary") != "Accept-Encoding" || w.Header().Get("Content-Length") != strconv.Itoa(len(small)) {
		t.Errorf("small answer: %d %v %d bytes", w.Code, w.Header(), w.Body.Len())
	}
	for i := range 3 {
		big := []byte(strings.Repeat("<li>input "+strconv.Itoa(i)+"</li>\n", 500))
		w := httptest.NewRecorder()
		sendPage(w, req, http.StatusOK, big)
		if w.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, w.Body.Bytes()), big) ||
			w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
			t.Errorf("answer %d: %v, %d bytes", i, w.Header(), w.Body.Len())
		}
	}
}
