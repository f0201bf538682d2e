package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func adminServer(user, pass string) http.Handler {
	i := NewInternal("127.0.0.1:0", prometheus.NewRegistry(), nil, nil, 1, slog.New(slog.DiscardHandler))
	i.Admin(AdminConfig{User: user, Password: pass, Over: NewOverLimits(0)})
	return i.srv.Handler
}

func TestAdminAuth(t *testing.T) {
	for _, tc := range []struct {
		user, pass string // configured
		u, p       string // sent ("" sends none)
		want       int
	}{
		{"", "", "a", "b", http.StatusServiceUnavailable},
		{"admin", "", "admin", "", http.StatusServiceUnavailable},
		{"admin", "pw", "", "", http.StatusUnauthorized},
		{"admin", "pw", "admin", "nope", http.StatusUnauthorized},
		{"admin", "pw", "admin", "pw", http.StatusOK},
		{" admin ", "pw\n", "admin", "pw", http.StatusOK}, // stray space in an env file
	} {
		r := httptest.NewRequest("GET", "/admin/ws-limit-exceeding-ips", nil)
		if tc.u != "" {
			r.SetBasicAuth(tc.u, tc.p)
		}
		w := httptest.NewRecorder()
		adminServer(tc.user, tc.pass).ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%+v: %d %s", tc, w.Code, w.Body.String())
		}
	}
	// Every /admin path is guarded, known or not.
	w := httptest.NewRecorder()
	adminServer("", "").ServeHTTP(w, httptest.NewRequest("POST", "/admin/anything", nil))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("unknown admin path: %d", w.Code)
	}
}
