package fourbyte

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// redirector answers every request with a permanent redirect to the same
// path and query on target (as 4byte.directory sends its bare host to
// www.), counting the requests.
func redirector(t *testing.T, target string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		u := *r.URL
		u.Scheme, u.Host = to.Scheme, to.Host
		http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
	}))
	t.Cleanup(srv.Close)
	return srv, n
}

// A configured URL that redirects to another host: the walk reads on at
// the host it was sent to, stores its place on the configured host, and
// a walk cut short goes on at the page it stopped at (not at page 1).
func TestWalkResumesThroughRedirect(t *testing.T) {
	dir := newDirectory(t, 3)
	texts := sigTexts("sig", 10)
	dir.Add(texts...)
	front, redirects := redirector(t, dir.URL())
	configured := front.URL + "/api/v1/signatures/"
	d := openDB(t, t.TempDir())
	defer d.Close()
	dl := newTestDownloader(t, d, configured)
	stop := 0
	dl.sleep = func(ctx context.Context, _ time.Duration) bool {
		if stop++; stop == 2 { // after page 2 is stored
			dir.SetDown(true)
		}
		return ctx.Err() == nil
	}
	if res, err := dl.Walk(context.Background()); err == nil || res.Stored != 6 {
		t.Fatalf("walk during the outage: %+v %v", res, err)
	}
	if redirects.Load() != 1 {
		t.Fatalf("%d requests to the configured host, want the first page's only", redirects.Load())
	}
	want := strings.Replace(dir.PageLink(3), strings.TrimSuffix(dir.URL(), "/api/v1/signatures/"), front.URL, 1)
	if c := cursor(t, d); c.Next != want {
		t.Fatalf("cursor's next %q, want %q (on the configured host)", c.Next, want)
	}
	dir.SetDown(false)
	dir.ResetServed()
	res, err := dl.Walk(context.Background())
	if err != nil || res.Done != 10 || len(dir.Served()) == 0 || dir.Served()[0] != 3 {
		t.Fatalf("resumed walk %+v %v, pages %v", res, err, dir.Served())
	}
	if redirects.Load() != 2 {
		t.Fatalf("%d requests to the configured host, want 2", redirects.Load())
	}
	if got := stored(t, d, texts); len(got) != len(texts) {
		t.Fatalf("stored %d of %d", len(got), len(texts))
	}
}
