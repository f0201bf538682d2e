package listen

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// MaxEcho is the most bytes of client input an error message may repeat:
// a path or a parameter is quoted to help the caller, never whole.
const MaxEcho = 128

// Bound cuts s to at most n bytes (on a rune boundary), marking the cut.
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// SafeHeaders sets what every answer of every listener carries: the type,
// CORS for browser wallets, and nosniff, since error texts quote input and
// a browser must never take them for HTML.
func SafeHeaders(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("X-Content-Type-Options", "nosniff")
}

// WriteJSONError answers {"error": msg} with status.
func WriteJSONError(w http.ResponseWriter, status int, msg string) {
	SafeHeaders(w, "application/json; charset=utf-8")
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg}) // a string always encodes
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n')) // the client went away: nothing to do
}
