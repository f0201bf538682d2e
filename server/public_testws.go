package server

import (
	"bytes"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/static"
)

// testWebsocketHTML is the embedded page, read once.
var testWebsocketHTML = sync.OnceValues(func() ([]byte, error) {
	return fs.ReadFile(static.Assets, "test-websocket.html")
})

// testWebsocketPage serves /test-websocket.html, as Blockbook does: a page
// to try the websocket API by hand. Its script is the asset
// test-websocket.js; the policy lets it reach only this server (the
// websocket included).
func testWebsocketPage(w http.ResponseWriter, r *http.Request) {
	page, err := testWebsocketHTML()
	if err != nil {
		http.Error(w, "page not available", http.StatusInternalServerError) // the page is embedded
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
	http.ServeContent(w, r, "test-websocket.html", time.Time{}, bytes.NewReader(page))
}
