package fourbyte

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/bchain/calldata"
	"github.com/openexplorer/blockbook/db"
)

// page is one answer of the directory's signatures endpoint:
// {"count", "next", "previous", "results": [{"id", "created_at",
// "text_signature", "hex_signature", "bytes_signature"}]}, newest first.
type page struct {
	Count   *int64          `json:"count"`
	Next    *string         `json:"next"`
	Results json.RawMessage `json:"results"`
}

type row struct {
	ID            int64  `json:"id"`
	TextSignature string `json:"text_signature"`
	HexSignature  string `json:"hex_signature"`
}

// ErrBadPage is an answer that is not a page of signatures.
var ErrBadPage = errors.New("not a 4-byte directory signatures page")

// Result tells what a walk did.
type Result struct {
	Pages   int    // pages read
	Stored  int    // signatures written
	Skipped int    // rows that were not valid signatures
	Done    uint32 // the highest id stored by a completed walk (the cursor's done)
}

// Walk goes on with the current walk, or starts one at the configured
// URL, until it reaches the signatures an earlier walk stored or the last
// page. Each page is stored with the place after it: an error leaves the
// index at the last page stored, where the next Walk goes on.
func (dl *Downloader) Walk(ctx context.Context) (Result, error) {
	var res Result
	cur, err := db.ReadFourByteCursor(dl.db)
	if err != nil {
		return res, err
	}
	next := cur.Next
	if next != "" && !sameSite(next, dl.cfg.URL) {
		// The setting names another host since the walk began: the walk
		// begins again there.
		next = ""
	}
	if next == "" {
		next, cur.Top = dl.cfg.URL, cur.Done
	}
	lastLog := time.Now()
	// moved is where the configured site redirected this walk (e.g. to its
	// www. host): the walk reads on there, and stores its place on the
	// configured site, so that a later walk still goes on from it.
	moved := ""
	for {
		if res.Pages >= dl.cfg.MaxPages {
			return res, fmt.Errorf("%w: more than %d pages in one walk", ErrBadPage, dl.cfg.MaxPages)
		}
		p, at, err := dl.fetch(ctx, next)
		if err != nil {
			return res, err
		}
		if sameSite(next, dl.cfg.URL) && !sameSite(at, next) {
			moved = at
		}
		res.Pages++
		rows, seen, reached, err := dl.rows(p, cur.Done)
		if err != nil {
			return res, fmt.Errorf("%s: %w", next, err)
		}
		res.Skipped += seen.skipped
		cur.Top = max(cur.Top, seen.top)
		following := ""
		if p.Next != nil && *p.Next != "" && !reached {
			if following, err = resolveNext(at, *p.Next); err != nil {
				return res, err
			}
		}
		if following == "" {
			cur = &db.FourByteCursor{Done: max(cur.Top, cur.Done)}
		} else {
			cur.Next = following
			if moved != "" && sameSite(following, moved) {
				cur.Next = onSite(following, dl.cfg.URL)
			}
		}
		if err := dl.db.WriteSignatures(rows, cur); err != nil {
			return res, fmt.Errorf("storing 4-byte signatures: %w", err)
		}
		res.Stored += len(rows)
		if following == "" {
			res.Done = cur.Done
			return res, nil
		}
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			dl.log.Info("downloading 4-byte signatures", "pages", res.Pages, "stored", res.Stored, "directory_count", *p.Count)
		}
		if !dl.sleep(ctx, dl.cfg.PageDelay) {
			return res, ctx.Err()
		}
		next = following
	}
}

// sameSite reports whether two URLs have the same scheme and host.
func sameSite(a, b string) bool {
	ua, err := url.Parse(a)
	if err != nil {
		return false
	}
	ub, err := url.Parse(b)
	return err == nil && ua.Scheme == ub.Scheme && ua.Host == ub.Host
}

// onSite returns u with the scheme and host of site (both valid URLs).
func onSite(u, site string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	ps, err := url.Parse(site)
	if err != nil {
		return u
	}
	pu.Scheme, pu.Host = ps.Scheme, ps.Host
	return pu.String()
}

// resolveNext reads a page's next link (absolute, or relative to the page)
// and refuses one that leads back to the same page.
func resolveNext(current, next string) (string, error) {
	base, err := pageURL(current)
	if err != nil {
		return "", err
	}
	ref, err := base.Parse(next)
	if err != nil {
		return "", fmt.Errorf("%w: next %q: %v", ErrBadPage, next, err)
	}
	if _, err := pageURL(ref.String()); err != nil {
		return "", fmt.Errorf("%w: next: %v", ErrBadPage, err)
	}
	if ref.String() == base.String() {
		return "", fmt.Errorf("%w: next %q is the page itself", ErrBadPage, next)
	}
	return ref.String(), nil
}

// pageRows tells what a page's rows were besides the valid ones: how many
// were skipped, and the highest id of the rows read (skipped ones too, so
// that the next walk does not read them again).
type pageRows struct {
	skipped int
	top     uint32
}

// rows checks a page's results: valid rows newer than done become index
// rows, others are skipped (counted); reached tells that the page got to
// done, where the walk ends.
func (dl *Downloader) rows(p *page, done uint32) (out []db.SignatureRow, seen pageRows, reached bool, err error) {
	var results []json.RawMessage
	if err := json.Unmarshal(p.Results, &results); err != nil || results == nil || p.Count == nil {
		return nil, seen, false, fmt.Errorf("%w: no count and results list", ErrBadPage)
	}
	var sample string
	for _, raw := range results {
		var r row
		if err := json.Unmarshal(raw, &r); err != nil || r.ID <= 0 || r.ID > 1<<32-1 {
			seen.skipped++
			sample = string(raw)
			continue
		}
		if uint32(r.ID) <= done {
			reached = true
			continue
		}
		seen.top = max(seen.top, uint32(r.ID))
		sel, ok := selectorOf(r)
		if !ok {
			seen.skipped++
			sample = string(raw)
			continue
		}
		out = append(out, db.SignatureRow{Selector: sel, ID: uint32(r.ID), Text: r.TextSignature})
	}
	if seen.skipped > 0 {
		if len(sample) > 200 {
			sample = sample[:200]
		}
		dl.log.Warn("4-byte directory rows skipped", "rows", seen.skipped, "example", sample)
	}
	return out, seen, reached, nil
}

// selectorOf checks a row: its text a signature whose hash is its
// hex_signature.
func selectorOf(r row) (uint32, bool) {
	h, ok := strings.CutPrefix(r.HexSignature, "0x")
	if !ok || len(h) != 8 {
		return 0, false
	}
	sel, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return 0, false
	}
	if _, err := calldata.ParseSignature(r.TextSignature); err != nil || calldata.Selector(r.TextSignature) != uint32(sel) {
		return 0, false
	}
	return uint32(sel), true
}

// fetch reads a page, retrying Attempts times with doubling waits; at is
// the URL it was read from, after redirects.
func (dl *Downloader) fetch(ctx context.Context, u string) (p *page, at string, err error) {
	wait := dl.cfg.RetryDelay
	for attempt := 1; ; attempt++ {
		if p, at, err = dl.get(ctx, u); err == nil {
			return p, at, nil
		}
		if attempt >= dl.cfg.Attempts || ctx.Err() != nil {
			break
		}
		dl.log.Debug("4-byte directory page failed, retrying", "url", u, "attempt", attempt, "err", err)
		if !dl.sleep(ctx, wait) {
			return nil, "", ctx.Err()
		}
		wait *= 2
	}
	return nil, "", fmt.Errorf("4-byte directory %s: %w (after %d attempts)", u, err, dl.cfg.Attempts)
}

func (dl *Downloader) get(ctx context.Context, u string) (*page, string, error) {
	ctx, cancel := context.WithTimeout(ctx, dl.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := dl.cfg.Client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("HTTP status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, dl.cfg.MaxPageBytes+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(body)) > dl.cfg.MaxPageBytes {
		return nil, "", fmt.Errorf("%w: answer over %d bytes", ErrBadPage, dl.cfg.MaxPageBytes)
	}
	var p page
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrBadPage, err)
	}
	if p.Count == nil || len(p.Results) == 0 {
		return nil, "", fmt.Errorf("%w: no count and results", ErrBadPage)
	}
	return &p, resp.Request.URL.String(), nil
}
