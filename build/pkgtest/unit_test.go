package pkgtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/build/deb"
)

// The unit reader understands the packaged units (rendered here, so this
// runs without the package installed) and continued lines.
func TestParseUnit(t *testing.T) {
	c, err := deb.Find("bitcoin")
	if err != nil {
		t.Fatal(err)
	}
	unit, err := deb.Render("service", c, "Bitcoin", deb.Meta{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, c.Unit())
	if err := os.WriteFile(path, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := ParseUnit(path)
	if err != nil {
		t.Fatal(err)
	}
	if u.User != "blockbook-bitcoin" || u.WorkingDir != c.Dir() || !slices.Equal(u.EnvFiles, []string{"-" + deb.EnvFile}) {
		t.Errorf("unit: %+v", u)
	}
	if v, _ := u.Flag("certfile"); v != c.CertPrefix() {
		t.Errorf("-certfile=%s", v)
	}
	if !slices.Contains(u.ExecStart, "-extendedindex") || !slices.Contains(u.ExecStart, "-dbcache=1073741824") {
		t.Errorf("additional params missing: %v", u.ExecStart)
	}
	args := u.WithFlags(map[string]string{"datadir": "/tmp/x", "public": "127.0.0.1:1", "new": "v"})
	if !slices.Contains(args, "-datadir=/tmp/x") || !slices.Contains(args, "-public=127.0.0.1:1") ||
		!slices.Contains(args, "-new=v") || !slices.Contains(args, "-sync") || len(args) != len(u.ExecStart)+1 {
		t.Errorf("WithFlags: %v", args)
	}

	cont := "[Service]\nUser=u\nExecStart=/bin/blockbook \\\n    -sync \\\n    -public=:1\nEnvironment=A=1 B=2\n"
	if err := os.WriteFile(path, []byte(cont), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, err = ParseUnit(path); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(u.ExecStart, []string{"/bin/blockbook", "-sync", "-public=:1"}) || !slices.Equal(u.Environment, []string{"A=1", "B=2"}) {
		t.Errorf("continued lines: %+v", u)
	}
}

func TestReadEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blockbook.env")
	text := "# comment\n\nBTC_WS_ALLOWED_ORIGINS=\"https://a.example,https://b.example\"\n ; other\nINFURA_API_KEY='k'\nPLAIN = v\nnot a pair\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := ReadEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BTC_WS_ALLOWED_ORIGINS=https://a.example,https://b.example", "INFURA_API_KEY=k", "PLAIN=v"}
	if !slices.Equal(env, want) {
		t.Errorf("env %q, want %q", env, want)
	}
}
