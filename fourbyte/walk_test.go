package fourbyte

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/calldata"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/tools/fourbytedir"
)

func newDirectory(t *testing.T, pageSize int) *fourbytedir.Directory {
	d := fourbytedir.New(pageSize)
	t.Cleanup(d.Close)
	return d
}

func openDB(t *testing.T, dir string) *db.DB {
	t.Helper()
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainEthereumType, Coin: "Ethereum Regtest", Network: "regtest"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newTestDownloader(t *testing.T, d *db.DB, u string) *Downloader {
	t.Helper()
	dl, err := New(d, Config{URL: u, Attempts: 2, RetryDelay: time.Millisecond, PageDelay: time.Millisecond, Timeout: 5 * time.Second,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return dl
}

// sigTexts are n distinct signatures.
func sigTexts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d(uint256,address)", prefix, i)
	}
	return out
}

// stored lists the texts the index holds for the given signatures, in the
// order ReadSignatures gives them per selector.
func stored(t *testing.T, d *db.DB, texts []string) []string {
	t.Helper()
	var out []string
	seen := map[uint32]bool{}
	for _, text := range texts {
		sel := calldata.Selector(text)
		if seen[sel] {
			continue
		}
		seen[sel] = true
		sigs, err := db.ReadSignatures(d, sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sigs {
			out = append(out, s.Text())
		}
	}
	return out
}

func cursor(t *testing.T, d *db.DB) db.FourByteCursor {
	t.Helper()
	c, err := db.ReadFourByteCursor(d)
	if err != nil {
		t.Fatal(err)
	}
	return *c
}

// A walk reads every page, newest first, and stores every signature; the
// next walk reads only the pages down to what the first stored.
func TestWalkAllThenNew(t *testing.T) {
	dir := newDirectory(t, 4)
	first := sigTexts("old", 10)
	dir.Add(first...)
	d := openDB(t, t.TempDir())
	defer d.Close()
	dl := newTestDownloader(t, d, dir.URL())
	res, err := dl.Walk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 3 || res.Stored != 10 || res.Done != 10 || !slices.Equal(dir.Served(), []int{1, 2, 3}) {
		t.Fatalf("first walk %+v, pages %v", res, dir.Served())
	}
	if got := stored(t, d, first); !slices.Equal(got, first) {
		t.Fatalf("stored %v", got)
	}
	if c := cursor(t, d); c != (db.FourByteCursor{Done: 10}) {
		t.Fatalf("cursor %+v", c)
	}
	dir.ResetServed()
	added := sigTexts("new", 5)
	dir.Add(added...)
	res, err = dl.Walk(context.Background())
	if err != nil || res.Stored != 5 || res.Done != 15 || !slices.Equal(dir.Served(), []int{1, 2}) {
		t.Fatalf("second walk %+v %v, pages %v", res, err, dir.Served())
	}
	if got := stored(t, d, append(first, added...)); len(got) != 15 {
		t.Fatalf("stored %d: %v", len(got), got)
	}
	// Nothing new: one page.
	dir.ResetServed()
	if res, err = dl.Walk(context.Background()); err != nil || res.Stored != 0 || !slices.Equal(dir.Served(), []int{1}) {
		t.Fatalf("third walk %+v %v, pages %v", res, err, dir.Served())
	}
}

// Signatures sharing a selector are all kept, the standard ABI's first and
// then the directory's by id, whatever order the pages brought them in.
func TestWalkSharedSelector(t *testing.T) {
	// Two texts with transfer(address,uint256)'s selector, found by brute
	// force once (see the 4-byte directory's collisions of 0xa9059cbb).
	const a, b = "transfer(address,uint256)", "many_msg_babbage(bytes1)"
	if calldata.Selector(b) != calldata.Selector(a) {
		t.Fatalf("%s and %s do not share a selector", a, b)
	}
	dir := newDirectory(t, 1)
	dir.Add(b, "filler()", a)
	d := openDB(t, t.TempDir())
	defer d.Close()
	if _, err := d.WriteStandardSignatures(); err != nil {
		t.Fatal(err)
	}
	if _, err := newTestDownloader(t, d, dir.URL()).Walk(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, d, []string{a}); !slices.Equal(got, []string{a, b, a}) {
		t.Fatalf("transfer's selector holds %v", got)
	}
}

// A server down for longer than the retries stops the walk with the error;
// the pages stored stay, and the next walk goes on at the failed page,
// losing nothing even when new signatures arrived meanwhile.
func TestWalkResumesAfterOutage(t *testing.T) {
	dir := newDirectory(t, 3)
	texts := sigTexts("sig", 10)
	dir.Add(texts...)
	d := openDB(t, t.TempDir())
	dl := newTestDownloader(t, d, dir.URL())
	stop := 0
	dl.sleep = func(ctx context.Context, _ time.Duration) bool {
		if stop++; stop == 2 { // after page 2 is stored
			dir.SetDown(true)
		}
		return ctx.Err() == nil
	}
	res, err := dl.Walk(context.Background())
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "after 2 attempts") || res.Stored != 6 {
		t.Fatalf("walk during the outage: %+v %v", res, err)
	}
	if c := cursor(t, d); c.Next != dir.PageLink(3) || c.Done != 0 || c.Top != 10 {
		t.Fatalf("cursor %+v", c)
	}
	// A restart in between: the place is in the index.
	d.Close()
	d = openDB(t, d.Path())
	defer d.Close()
	dl = newTestDownloader(t, d, dir.URL())
	dir.SetDown(false)
	dir.ResetServed()
	more := sigTexts("late", 2)
	dir.Add(more...) // shifts every row two places down the pages
	res, err = dl.Walk(context.Background())
	if err != nil || res.Done != 10 || dir.Served()[0] != 3 {
		t.Fatalf("resumed walk %+v %v, pages %v", res, err, dir.Served())
	}
	if got := stored(t, d, texts); !slices.Equal(got, texts) {
		t.Fatalf("after the outage %d stored: %v", len(got), got)
	}
	// The signatures that arrived during the walk come with the next one.
	if res, err = dl.Walk(context.Background()); err != nil || res.Done != 12 || res.Stored != 2 {
		t.Fatalf("next walk %+v %v", res, err)
	}
}

// Answers that are not pages of signatures fail the walk with a clear
// error and store nothing of theirs; rows that are not valid signatures
// are skipped and the valid ones of the same page kept.
func TestWalkGarbage(t *testing.T) {
	for name, body := range map[string]string{
		"html":               "<html><body>Bad gateway</body></html>",
		"throttled":          `{"detail":"Request was throttled."}`,
		"results not a list": `{"count":1,"next":null,"previous":null,"results":{"id":1}}`,
		"truncated":          `{"count":5,"next":null,"results":[{"id":3,`,
		"next is itself":     fmt.Sprintf(`{"count":9,"next":%q,"previous":null,"results":[{"id":1,"text_signature":"a()","hex_signature":"0x0dbe671f"}]}`, "PLACEHOLDER"),
	} {
		t.Run(name, func(t *testing.T) {
			dir := newDirectory(t, 2)
			dir.Add(sigTexts("g", 5)...)
			dir.SetGarbage(2, strings.Replace(body, "PLACEHOLDER", dir.PageLink(2), 1))
			d := openDB(t, t.TempDir())
			defer d.Close()
			res, err := newTestDownloader(t, d, dir.URL()).Walk(context.Background())
			if !errors.Is(err, ErrBadPage) || !strings.Contains(err.Error(), "signatures page") {
				t.Fatalf("walk: %+v %v", res, err)
			}
			if c := cursor(t, d); c.Next != dir.PageLink(2) || res.Stored != 2 {
				t.Fatalf("cursor %+v after %+v", c, res)
			}
		})
	}
	dir := newDirectory(t, 10)
	good := "good(uint256)"
	dir.Add(good)
	dir.AddRow(fourbytedir.Row{ID: 2, Text: "wrong(uint256)", Hex: "0x12345678"}) // not its selector
	dir.AddRow(fourbytedir.Row{ID: 3, Text: "<script>(uint256)", Hex: fmt.Sprintf("0x%08x", calldata.Selector("<script>(uint256)"))})
	dir.AddRow(fourbytedir.Row{ID: 4, Text: "short(uint256)", Hex: "0x1234"})
	d := openDB(t, t.TempDir())
	defer d.Close()
	res, err := newTestDownloader(t, d, dir.URL()).Walk(context.Background())
	if err != nil || res.Stored != 1 || res.Skipped != 3 || res.Done != 4 {
		t.Fatalf("walk with bad rows: %+v %v", res, err)
	}
	if got := stored(t, d, []string{good, "wrong(uint256)"}); !slices.Equal(got, []string{good}) {
		t.Fatalf("stored %v", got)
	}
}

// A server that is not there: a clear error, nothing written, and the
// configuration's URL checked up front.
func TestWalkServerDown(t *testing.T) {
	dir := newDirectory(t, 2)
	u := dir.URL()
	dir.Close()
	d := openDB(t, t.TempDir())
	defer d.Close()
	_, err := newTestDownloader(t, d, u).Walk(context.Background())
	if err == nil || !strings.Contains(err.Error(), "connect") || !strings.Contains(err.Error(), u) {
		t.Fatalf("walk: %v", err)
	}
	if c := cursor(t, d); c != (db.FourByteCursor{}) {
		t.Fatalf("cursor %+v", c)
	}
	for _, bad := range []string{"", "4byte.directory/api", "ftp://x/", "http://"} {
		if _, err := New(d, Config{URL: bad}); !errors.Is(err, ErrConfig) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Run walks at once, then every Period; a failed walk is retried after
// RetryAfter.
func TestRunPeriods(t *testing.T) {
	dir := newDirectory(t, 5)
	dir.Add(sigTexts("r", 3)...)
	d := openDB(t, t.TempDir())
	defer d.Close()
	dl := newTestDownloader(t, d, dir.URL())
	dl.cfg.Period, dl.cfg.RetryAfter = time.Hour, time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	var waits []time.Duration
	dl.sleep = func(ctx context.Context, w time.Duration) bool {
		if w == dl.cfg.PageDelay || w == dl.cfg.RetryDelay {
			return true
		}
		waits = append(waits, w)
		dir.SetDown(len(waits) == 1) // the second walk fails
		if len(waits) == 3 {
			cancel()
		}
		return ctx.Err() == nil
	}
	if err := dl.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(waits, []time.Duration{time.Hour, time.Minute, time.Hour}) {
		t.Fatalf("waits %v", waits)
	}
}
