package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Compression of the explorer's pages and text assets. Only the explorer
// is compressed: the REST and websocket APIs answer exactly as Blockbook
// does (uncompressed, byte for byte the goldens), and their clients (Suite,
// wallets) do not need it; an operator wanting compressed API answers puts
// a proxy in front. Explorer pages carry no secret (no session, no token),
// so compressing them beside reflected input (the search box) gives a
// BREACH-style attack nothing to learn.

// gzipMinBytes: smaller answers are sent as they are (a gzip header and
// the CPU would outweigh the bytes saved).
const gzipMinBytes = 1024

// gzipPageLevel is the level of rendered pages: BestSpeed compresses a
// 50 KB page in well under a millisecond, at some 10% more bytes than the
// default level (assets, compressed once at start, take the best).
const gzipPageLevel = gzip.BestSpeed

var (
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, gzipPageLevel)
		return w
	}}
	gzipBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// acceptsGzip reports whether an Accept-Encoding header allows gzip: gzip
// (or x-gzip, or *) listed without q=0.
func acceptsGzip(header string) bool {
	star := false
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		ok := qNonZero(params)
		if coding == "*" {
			star = ok
			continue
		}
		return ok // an explicit gzip entry overrides *
	}
	return star
}

// qNonZero reports whether a coding's parameters leave its q above 0 (no
// q is 1; a malformed q counts as 0, refusing rather than guessing).
func qNonZero(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.ToLower(strings.TrimSpace(k)) != "q" {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return err == nil && q > 0
	}
	return true
}

// sendPage writes a rendered page's status and body, gzip-compressed when
// the client accepts it and the body is worth it. Headers set before stay;
// Content-Length is the bytes sent, for HEAD too (the body is compressed
// to know it, then not sent).
func sendPage(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	if len(body) >= gzipMinBytes && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		buf := gzipBufs.Get().(*bytes.Buffer)
		defer putGzipBuf(buf)
		buf.Reset()
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(buf)
		_, _ = zw.Write(body) // a bytes.Buffer does not fail
		_ = zw.Close()
		zw.Reset(io.Discard) // drop the buffer before pooling the writer
		gzipWriters.Put(zw)
		body = buf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// putGzipBuf pools a buffer unless a huge page grew it.
func putGzipBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledAnswer {
		gzipBufs.Put(b)
	}
}

// gzipAsset is an asset's gzip form, compressed once at start: nil when
// the type is not text or compression saves too little.
func gzipAsset(name string, data []byte) []byte {
	if len(data) < gzipMinBytes || !textAsset(name) {
		return nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(data)
	_ = zw.Close()
	if buf.Len() > len(data)*9/10 {
		return nil
	}
	return buf.Bytes()
}

func textAsset(name string) bool {
	for _, ext := range []string{".css", ".js", ".svg", ".html", ".json", ".txt"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}
