package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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

// Wrong passwords are answered after a delay that grows with the failures
// in a row (one at a time, whatever the parallelism); the right password
// is never delayed.
func TestAdminWrongPasswordDelay(t *testing.T) {
	var slept []time.Duration
	a := &admin{cfg: AdminConfig{User: "u", Password: "p"}, sleep: func(d time.Duration) { slept = append(slept, d) }}
	h := a.guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	try := func(pass string) int {
		r := httptest.NewRequest("GET", "/admin", nil)
		r.SetBasicAuth("u", pass)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i := 0; i < 25; i++ {
		if c := try("wrong"); c != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", c)
		}
	}
	if c := try("p"); c != http.StatusOK {
		t.Fatalf("right password: %d", c)
	}
	if len(slept) != 25 || slept[0] != failDelay || slept[4] != 5*failDelay || slept[24] != maxFailDelay {
		t.Fatalf("delays %v", slept)
	}
}
