package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// severity is glog's -stderrthreshold: a name (any case) or its number.
type severity int

const (
	sevInfo severity = iota
	sevWarning
	sevError
	sevFatal
)

var severityNames = []string{"INFO", "WARNING", "ERROR", "FATAL"}

func (s *severity) String() string {
	if s == nil || *s < 0 || int(*s) >= len(severityNames) {
		return "ERROR"
	}
	return severityNames[*s]
}

func (s *severity) Set(v string) error {
	v = strings.TrimSpace(v)
	for i, n := range severityNames {
		if strings.EqualFold(v, n) {
			*s = severity(i)
			return nil
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= len(severityNames) {
		return fmt.Errorf("want INFO, WARNING, ERROR, FATAL or 0-3, not %q", v)
	}
	*s = severity(n)
	return nil
}

// level maps the severity onto slog's levels (FATAL: above ERROR).
func (s severity) level() slog.Level {
	switch s {
	case sevInfo:
		return slog.LevelInfo
	case sevWarning:
		return slog.LevelWarn
	case sevError:
		return slog.LevelError
	}
	return slog.LevelError + 4
}

// parseBoolFlag and parseIntFlag check the values of flags that are only
// accepted, with the flag package's own syntax.
func parseBoolFlag(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("parse error")
	}
	return b, nil
}

func parseIntFlag(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, errors.New("parse error")
	}
	return n, nil
}

// NewLogger builds the program's logger from the logging flags. Without
// -log_dir (or with -logtostderr) every record goes to w. With -log_dir,
// records go to a new file there, named as glog names its files, with a
// blockbook.INFO link to it (in -log_link if given); w then gets the
// records at or above -stderrthreshold, or all of them with
// -alsologtostderr. The closer closes the file.
func NewLogger(o *Options, w io.Writer) (*slog.Logger, io.Closer, error) {
	level := slog.LevelInfo
	if o.Verbosity > 0 {
		level = slog.LevelDebug
	}
	newHandler := func(w io.Writer, l slog.Level) slog.Handler {
		hopts := &slog.HandlerOptions{Level: l}
		if o.LogFormat == "json" {
			return slog.NewJSONHandler(w, hopts)
		}
		return slog.NewTextHandler(w, hopts)
	}
	if o.LogDir == "" || o.LogToStderr {
		return slog.New(newHandler(w, level)), io.NopCloser(nil), nil
	}
	f, err := openLogFile(o.LogDir, o.LogLink, time.Now())
	if err != nil {
		return nil, nil, err
	}
	stderrLevel := max(o.StderrThreshold.level(), level)
	if o.AlsoLogToStderr {
		stderrLevel = level
	}
	return slog.New(fanout{newHandler(f, level), newHandler(w, stderrLevel)}), f, nil
}

// openLogFile creates the log file in dir and points the blockbook.INFO
// link (in linkDir, or dir) at it.
func openLogFile(dir, linkDir string, now time.Time) (*os.File, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknownhost"
	}
	host, _, _ = strings.Cut(host, ".")
	name := "unknownuser"
	if u, err := user.Current(); err == nil {
		name = strings.ReplaceAll(u.Username, `\`, "_")
	}
	file := fmt.Sprintf("blockbook.%s.%s.log.INFO.%s.%d", host, name, now.Format("20060102-150405"), os.Getpid())
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-log_dir: cannot create the log file: %w", err)
	}
	if linkDir == "" {
		linkDir = dir
	}
	link := filepath.Join(linkDir, "blockbook.INFO")
	_ = os.Remove(link) // a stale link from the previous run
	target := filepath.Join(dir, file)
	if linkDir == dir {
		target = file // relative, so the directory can move
	}
	// The link is a convenience, as in glog: failing to make it is no reason
	// not to log.
	_ = os.Symlink(target, link)
	return f, nil
}

// fanout passes each record to every handler that takes its level.
type fanout []slog.Handler

func (h fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, x := range h {
		if x.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (h fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, x := range h {
		if x.Enabled(ctx, r.Level) {
			errs = append(errs, x.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (h fanout) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make(fanout, len(h))
	for i, x := range h {
		out[i] = x.WithAttrs(attrs)
	}
	return out
}

func (h fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(h))
	for i, x := range h {
		out[i] = x.WithGroup(name)
	}
	return out
}

// warnNoEffect logs, once each, the flags that were set but do nothing
// here.
func (o *Options) warnNoEffect(log *slog.Logger) {
	for _, f := range o.noEffect {
		log.Warn("flag has no effect in this version", "flag", "-"+f.name, "value", f.value, "reason", f.why)
	}
	if o.DryRun {
		log.Warn("-dryrun checks the configuration, the index and the node and exits; unlike Blockbook's it downloads no blocks")
	}
}
