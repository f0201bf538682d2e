package deb

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

var templates = template.Must(template.New("").Option("missingkey=error").ParseFS(templateFiles, "templates/*.tmpl"))

// Meta is what the package's control files say besides the coin.
type Meta struct {
	Version    string // Debian version
	Arch       string // Debian architecture
	Maintainer string
	Depends    string // comma-separated
}

// view is the data the templates render.
type view struct {
	Meta
	Coin        Coin
	CoinName    string
	EnvFile     string
	DataParent  string
	InstalledKB int64
}

// CoinName reads coin_name from a runtime config, checking it is one.
func CoinName(config []byte) (string, error) {
	var c struct {
		CoinName string `json:"coin_name"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return "", fmt.Errorf("runtime config: %w", err)
	}
	if c.CoinName == "" {
		return "", fmt.Errorf("runtime config: no coin_name")
	}
	return c.CoinName, nil
}

// Render renders one of the templates (control, conffiles, service,
// postinst, prerm, postrm) for a coin.
func Render(name string, c Coin, coinName string, m Meta, installedKB int64) ([]byte, error) {
	v := view{Meta: m, Coin: c, CoinName: coinName, EnvFile: EnvFile, DataParent: path.Dir(c.DataDir()), InstalledKB: installedKB}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name+".tmpl", v); err != nil {
		return nil, fmt.Errorf("render %s for %s: %w", name, c.Alias, err)
	}
	return b.Bytes(), nil
}

// versionOK is a version that starts as a release number does (1.2...).
var versionOK = regexp.MustCompile(`^[0-9]+\.[0-9][A-Za-z0-9.+~]*$`)

// DebVersion turns a build version (a tag such as v0.6.0, or git describe
// output such as v0.6.0-3-gabc1234, or a bare commit) into a Debian version.
func DebVersion(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	v = strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '.', r == '+', r == '~':
			return r
		}
		return '.'
	}, v)
	v = strings.Trim(v, ".")
	if v == "" {
		return "0.0.0"
	}
	if !versionOK.MatchString(v) {
		v = "0.0.0~" + v
	}
	return v
}

// DebArch maps a Go architecture to Debian's name.
func DebArch(goarch string) (string, error) {
	switch goarch {
	case "amd64", "arm64", "riscv64", "ppc64el", "s390x":
		return goarch, nil
	case "386":
		return "i386", nil
	case "arm":
		return "armhf", nil
	case "ppc64le":
		return "ppc64el", nil
	}
	return "", fmt.Errorf("no Debian architecture for GOARCH %q", goarch)
}
