package app

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
)

func apiLimits() api.Limits { return api.Limits{} }

// -stderrthreshold takes glog's severity names in any case, or numbers.
func TestStderrThreshold(t *testing.T) {
	for v, want := range map[string]severity{"INFO": sevInfo, "warning": sevWarning, "Error": sevError, "FATAL": sevFatal, "0": sevInfo, "3": sevFatal} {
		o, err := ParseFlags([]string{"-blockchaincfg=x", "-stderrthreshold=" + v}, io.Discard)
		if err != nil || o.StderrThreshold != want {
			t.Errorf("%s: %v %v", v, o, err)
		}
	}
	for _, v := range []string{"4", "-1", "LOUD", ""} {
		if _, err := ParseFlags([]string{"-blockchaincfg=x", "-stderrthreshold=" + v}, io.Discard); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
	if o, _ := ParseFlags([]string{"-blockchaincfg=x"}, io.Discard); o.StderrThreshold != sevError {
		t.Fatalf("default threshold %v, want ERROR as glog's", o.StderrThreshold)
	}
}

// With -log_dir the log goes to a file (and its blockbook.INFO link);
// stderr gets what -stderrthreshold or -alsologtostderr lets through.
func TestLogDir(t *testing.T) {
	dir := t.TempDir()
	o, err := ParseFlags([]string{"-blockchaincfg=x", "-log_dir=" + dir, "-stderrthreshold=WARNING"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	log, closer, err := NewLogger(o, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("an info line")
	log.Warn("a warning line")
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "blockbook.INFO"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "an info line") || !strings.Contains(string(data), "a warning line") {
		t.Fatalf("log file: %s", data)
	}
	if strings.Contains(stderr.String(), "an info line") || !strings.Contains(stderr.String(), "a warning line") {
		t.Fatalf("stderr with -stderrthreshold=WARNING: %s", stderr.String())
	}
	o, _ = ParseFlags([]string{"-blockchaincfg=x", "-log_dir=" + t.TempDir(), "-alsologtostderr"}, io.Discard)
	stderr.Reset()
	log, closer, err = NewLogger(o, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	log.Info("an info line")
	if !strings.Contains(stderr.String(), "an info line") {
		t.Fatal("-alsologtostderr: info not on stderr")
	}
	o, _ = ParseFlags([]string{"-blockchaincfg=x", "-log_dir=" + filepath.Join(dir, "missing", "dir")}, io.Discard)
	if _, _, err := NewLogger(o, &stderr); err == nil || !strings.Contains(err.Error(), "-log_dir") {
		t.Fatalf("unwritable -log_dir: %v", err)
	}
}

// Flags that do nothing here warn once each, only when set to something
// other than their default.
func TestNoEffectWarnings(t *testing.T) {
	o, err := ParseFlags([]string{"-blockchaincfg=x", "-debug", "-dbstatsperiod=24", "-vmodule=x=2", "-resyncindexdebounce=5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	o.warnNoEffect(slog.New(slog.NewTextHandler(&logs, nil)))
	for _, f := range []string{"-debug", "-vmodule", "-resyncindexdebounce"} {
		if strings.Count(logs.String(), "flag="+f+" ") != 1 {
			t.Errorf("want one warning for %s:\n%s", f, logs.String())
		}
	}
	if strings.Contains(logs.String(), "dbstatsperiod") {
		t.Errorf("-dbstatsperiod at its default warned:\n%s", logs.String())
	}
}

// -public/-internal take Blockbook's [address]:port[/path].
func TestBinding(t *testing.T) {
	for _, c := range []struct{ in, addr, prefix string }{
		{"", "127.0.0.1:9030", "/"},
		{"none", "", "/"},
		{":9130", ":9130", "/"},
		{":9130/", ":9130", "/"},
		{"127.0.0.1:9130/bb", "127.0.0.1:9130", "/bb/"},
		{":9130/a/b/", ":9130", "/a/b/"},
	} {
		if addr, prefix := binding(c.in, "127.0.0.1", 9030); addr != c.addr || prefix != c.prefix {
			t.Errorf("%q: %q %q, want %q %q", c.in, addr, prefix, c.addr, c.prefix)
		}
	}
}
