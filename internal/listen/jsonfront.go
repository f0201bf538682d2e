package listen

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// JSONFront is what the small JSON fronts (ord's API, Silent Payments)
// share: each request bounded in time, a route's value encoded as JSON,
// its error mapped once to a status and message and written in the
// front's error shape, and a panic answered 500 instead of a dropped
// connection.
type JSONFront struct {
	Name    string // in log lines ("ord", "silent payments")
	Timeout time.Duration
	// ContentType of answers; Newline ends each with '\n' (as the wire
	// the front copies does or does not).
	ContentType string
	Newline     bool
	// Classify maps a route's error to a status and the message a client
	// sees (it logs what the client must not see).
	Classify func(*http.Request, error) (int, string)
	Log      *slog.Logger
}

// ErrorShape writes an error in one wire's shape.
type ErrorShape func(w http.ResponseWriter, status int, msg string)

// Route is a route's work: the value to answer, or an error.
type Route func(ctx context.Context, r *http.Request) (any, error)

// Handler serves fn, errors in shape.
func (f JSONFront) Handler(shape ErrorShape, fn Route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), f.Timeout)
		defer cancel()
		v, err := fn(ctx, r)
		var b []byte
		if err == nil {
			b, err = json.Marshal(v)
		}
		if err != nil {
			status, msg := f.classify(r, err)
			shape(w, status, msg)
			return
		}
		if f.Newline {
			b = append(b, '\n')
		}
		SafeHeaders(w, f.ContentType)
		_, _ = w.Write(b) // the client went away: nothing to do
	}
}

func (f JSONFront) classify(r *http.Request, err error) (int, string) {
	if f.Classify != nil {
		return f.Classify(r, err)
	}
	f.Log.Error(f.Name+" request failed", "path", Bound(r.URL.Path, 200), "err", err)
	return http.StatusInternalServerError, "Internal server error"
}

// Recover answers a panic in h with a JSON 500 and logs it.
func (f JSONFront) Recover(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				f.Log.Error("panic in "+f.Name+" handler", "path", Bound(r.URL.Path, 200), "panic", p, "stack", string(debug.Stack()))
				WriteJSONError(w, http.StatusInternalServerError, "Internal server error")
			}
		}()
		h.ServeHTTP(w, r)
	})
}
