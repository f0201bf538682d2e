// Package fourbyte keeps the index's function signatures (the
// functionSignatures column family, which decodes txs' input data into
// parsedData) current from the 4-byte directory's API, as Blockbook's
// fourbyte downloader does: with the coin config's fourByteSignatures URL,
// a walk over the directory's pages, newest first, down to the signatures
// an earlier walk stored, at start and then once a day.
//
// Unlike Blockbook's, which stores a walk's signatures at its end, every
// page is stored with the walk's place in one atomic write, so a walk cut
// short (a crash, a restart, a server gone down for longer than the
// retries) goes on at the page it stopped at instead of starting over.
package fourbyte

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/openexplorer/blockbook/db"
)

// Config is the downloader's configuration; zero fields take the defaults.
type Config struct {
	// URL is the directory's signatures endpoint (the coin config's
	// fourByteSignatures, https://www.4byte.directory/api/v1/signatures/).
	URL string
	// Period is the time between walks (24 h, as Blockbook).
	Period time.Duration
	// RetryAfter is the wait before a failed walk goes on (10 min).
	RetryAfter time.Duration
	// PageDelay is the pause between pages (100 ms, as Blockbook).
	PageDelay time.Duration
	// Attempts per page (4), the first retry RetryDelay (1 s) after the
	// first failure and each next one twice as long.
	Attempts   int
	RetryDelay time.Duration
	// Timeout of one request (15 s, as Blockbook) and MaxPageBytes the
	// largest answer read (8 MiB).
	Timeout      time.Duration
	MaxPageBytes int64
	// MaxPages bounds one walk (a server whose next links never end).
	MaxPages int
	Log      *slog.Logger
	Client   *http.Client
}

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.Period, 24*time.Hour)
	set(&c.RetryAfter, 10*time.Minute)
	set(&c.PageDelay, 100*time.Millisecond)
	set(&c.RetryDelay, time.Second)
	set(&c.Timeout, 15*time.Second)
	if c.Attempts <= 0 {
		c.Attempts = 4
	}
	if c.MaxPageBytes <= 0 {
		c.MaxPageBytes = 8 << 20
	}
	if c.MaxPages <= 0 {
		c.MaxPages = 200_000
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: c.Timeout}
	}
}

// Downloader walks the directory into the index.
type Downloader struct {
	db  *db.DB
	cfg Config
	log *slog.Logger
	// sleep waits d or until ctx ends (tests replace it).
	sleep func(ctx context.Context, d time.Duration) bool
}

// ErrConfig is a fourByteSignatures URL that cannot be used.
var ErrConfig = errors.New("fourByteSignatures")

// New checks the configuration and returns a downloader storing into d.
func New(d *db.DB, cfg Config) (*Downloader, error) {
	if _, err := pageURL(cfg.URL); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	cfg.defaults()
	return &Downloader{db: d, cfg: cfg, log: cfg.Log.With("subsystem", "fourbyte"), sleep: sleepCtx}, nil
}

// pageURL checks that s is an absolute http(s) URL.
func pageURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("URL %q: %v", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q is not an absolute http(s) URL", s)
	}
	return u, nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Run walks the directory at once and then every Period (a failed walk
// goes on after RetryAfter) until ctx ends; it returns nil then.
func (dl *Downloader) Run(ctx context.Context) error {
	dl.log.Info("4-byte signature downloader started", "url", dl.cfg.URL, "period", dl.cfg.Period.String())
	for {
		wait := dl.cfg.Period
		res, err := dl.Walk(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			wait = dl.cfg.RetryAfter
			dl.log.Warn("downloading 4-byte signatures failed; the walk goes on from where it stopped", "err", err,
				"stored", res.Stored, "retry_in", wait.String())
		default:
			dl.log.Info("4-byte signatures downloaded", "pages", res.Pages, "stored", res.Stored, "skipped", res.Skipped, "newest_id", res.Done)
		}
		if !dl.sleep(ctx, wait) {
			return nil
		}
	}
}
