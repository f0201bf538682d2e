package listen

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestJSONFront(t *testing.T) {
	errBad := errors.New("bad input")
	f := JSONFront{Name: "test", Timeout: time.Second, ContentType: "application/json", Newline: true,
		Classify: func(_ *http.Request, err error) (int, string) {
			if errors.Is(err, errBad) {
				return http.StatusBadRequest, "bad input"
			}
			return http.StatusInternalServerError, "ours"
		}, Log: slog.New(slog.DiscardHandler)}
	mux := http.NewServeMux()
	mux.Handle("/ok", f.Handler(WriteJSONError, func(ctx context.Context, _ *http.Request) (any, error) {
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("no deadline")
		}
		return map[string]int{"a": 1}, nil
	}))
	mux.Handle("/bad", f.Handler(WriteJSONError, func(context.Context, *http.Request) (any, error) { return nil, errBad }))
	mux.Handle("/unencodable", f.Handler(WriteJSONError, func(context.Context, *http.Request) (any, error) { return func() {}, nil }))
	mux.Handle("/panic", f.Handler(WriteJSONError, func(context.Context, *http.Request) (any, error) { panic("boom") }))
	h := f.Recover(mux)
	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/ok", 200, "{\"a\":1}\n"},
		{"/bad", 400, "bad input"},
		{"/unencodable", 500, "ours"},
		{"/panic", 500, "Internal server error"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.body) {
			t.Errorf("%s: %d %q, want %d with %q", c.path, w.Code, w.Body.String(), c.status, c.body)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", c.path)
		}
	}
}
