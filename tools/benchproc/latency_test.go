package benchproc

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTimeGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"a":1}`))
		case "/text":
			_, _ = w.Write([]byte(`not json`))
		default:
			http.Error(w, "missing", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	var out struct{ A int }
	if d, n, err := TimeGet(srv.URL+"/ok", &out); err != nil || n != 7 || out.A != 1 || d <= 0 {
		t.Fatalf("ok: %v %d %+v %v", d, n, out, err)
	}
	if _, _, err := TimeGet(srv.URL+"/text", new(any)); err == nil {
		t.Fatal("a body that is not JSON was accepted")
	}
	if _, _, err := TimeGet(srv.URL+"/gone", new(any)); err == nil {
		t.Fatal("a 404 was accepted")
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if got := Percentile(ds, 50); got != "50ms" {
		t.Fatalf("p50 %s", got)
	}
	if got := Percentile(ds, 99); got != "99ms" {
		t.Fatalf("p99 %s", got)
	}
	if ds[0] != 100*time.Millisecond {
		t.Fatal("Percentile sorted its argument")
	}
}
