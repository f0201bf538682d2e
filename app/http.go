package app

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// binding resolves a -public/-internal value, [address]:port[/path] as in
// Blockbook: empty means the coin's default port on defaultHost, "none"
// disables the server. The path, if any, is returned as "/path/" (what
// Blockbook's routes need the operator to write); "/" means none.
func binding(flagValue, defaultHost string, port int) (addr, prefix string) {
	switch flagValue {
	case "none":
		return "", "/"
	case "":
		return net.JoinHostPort(defaultHost, strconv.Itoa(port)), "/"
	}
	addr, path, ok := strings.Cut(flagValue, "/")
	if !ok || strings.Trim(path, "/") == "" {
		return addr, "/"
	}
	return addr, "/" + strings.Trim(path, "/") + "/"
}

// loadTLS reads the -certfile pair, <path>.crt and <path>.key (nil: plain
// HTTP). HTTP/1.1 only: the websocket upgrade needs it.
func loadTLS(path string) (*tls.Config, error) {
	if path == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(path+".crt", path+".key")
	if err != nil {
		return nil, fmt.Errorf("%w: -certfile=%s: cannot load %s.crt and %s.key: %v", bchain.ErrConfig, path, path, path, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}, nil
}

// withPrefix serves h under prefix ("/path/"): the prefix is stripped
// from requests, and anything outside it is not found. With rewrite, the
// root-relative links of HTML pages, the explorer script's API path and
// redirects get the prefix put in front, so that the explorer works under
// it unchanged (the API and the websocket answer JSON and need nothing).
func withPrefix(prefix string, rewrite bool, h http.Handler) http.Handler {
	if prefix == "/" {
		return h
	}
	bare := strings.TrimSuffix(prefix, "/")
	strip := http.StripPrefix(bare, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == bare:
			http.Redirect(w, r, prefix, http.StatusMovedPermanently)
			return
		case !strings.HasPrefix(r.URL.Path, prefix):
			http.NotFound(w, r)
			return
		}
		rest := r.URL.Path[len(bare):]
		if !rewrite || rest == "/websocket" || strings.HasPrefix(rest, "/api/") || rest == "/api" {
			strip.ServeHTTP(w, r)
			return
		}
		// The links are rewritten in the plain body: the explorer must not
		// compress it (a proxy in front may compress the result).
		r = r.Clone(r.Context())
		r.Header.Del("Accept-Encoding")
		rw := &rewriteWriter{ResponseWriter: w, prefix: prefix}
		strip.ServeHTTP(rw, r)
		rw.finish()
	})
}

// rootLink matches a root-relative link in an HTML attribute (not a
// protocol-relative "//host" one).
var rootLink = regexp.MustCompile(`((?:href|src|action)=")/([^/])`)

// rewriteWriter holds an explorer response to put the prefix into it.
type rewriteWriter struct {
	http.ResponseWriter
	prefix string
	code   int
	buf    bytes.Buffer
}

func (w *rewriteWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *rewriteWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.buf.Write(b)
}

func (w *rewriteWriter) finish() {
	hdr := w.Header()
	if loc := hdr.Get("Location"); strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		hdr.Set("Location", w.prefix+loc[1:])
	}
	body := w.buf.Bytes()
	switch ct := hdr.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/html"):
		body = rootLink.ReplaceAll(body, []byte("${1}"+w.prefix+"${2}"))
	case strings.Contains(ct, "javascript"):
		body = bytes.ReplaceAll(body, []byte("'/api/"), []byte("'"+w.prefix+"api/"))
	}
	if hdr.Get("Content-Length") != "" {
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(w.code)
	_, _ = w.ResponseWriter.Write(body) // the client went away: nothing to do
}
