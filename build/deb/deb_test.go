package deb

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/btc" // registers the Bitcoin-type coins
	_ "github.com/openexplorer/blockbook/bchain/coins/eth" // registers the Ethereum-type coins
)

const configs = "../../configs/coins"

// Every coin the binary registers has a package, built from a runtime config
// of that coin, on the ports the binary defaults to; a coin added to the
// registry without one fails here.
func TestEveryRegisteredCoinHasAPackage(t *testing.T) {
	byCoin := map[string]Coin{}
	ports := map[int]string{}
	for _, c := range Coins {
		cfg, err := bchain.LoadConfig(filepath.Join(configs, c.Alias+".json"))
		if err != nil {
			t.Errorf("package %s: %v", c.Package(), err)
			continue
		}
		if prev, dup := byCoin[cfg.CoinName]; dup {
			t.Errorf("coin %q has two packages: %s and %s", cfg.CoinName, prev.Alias, c.Alias)
		}
		byCoin[cfg.CoinName] = c
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Errorf("package %s: %v", c.Package(), err)
			continue
		}
		if b.Params.PublicPort != c.Public || b.Params.InternalPort != c.Internal {
			t.Errorf("package %s: ports %d/%d, the binary's defaults for %q are %d/%d",
				c.Package(), c.Public, c.Internal, cfg.CoinName, b.Params.PublicPort, b.Params.InternalPort)
		}
		for _, p := range []int{c.Public, c.Internal} {
			if other, dup := ports[p]; dup {
				t.Errorf("port %d used by %s and %s", p, other, c.Alias)
			}
			ports[p] = c.Alias
		}
	}
	names := bchain.CoinNames()
	if len(names) < 10 {
		t.Fatalf("registry lists only %v", names)
	}
	for _, name := range names {
		if _, ok := byCoin[name]; !ok {
			t.Errorf("coin %q is registered but has no package: add configs/coins/<alias>.json and an entry in deb.Coins", name)
		}
	}
	files, err := filepath.Glob(filepath.Join(configs, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := Find(strings.TrimSuffix(filepath.Base(f), ".json")); err != nil {
			t.Errorf("%s: a runtime config without a package: %v", f, err)
		}
	}
}

// The unit runs the binary with Blockbook's flags on the package's paths,
// and the binary's own flag parser accepts that command line.
func TestUnitCommandLine(t *testing.T) {
	for _, c := range Coins {
		u, err := Render("service", c, "X", Meta{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		unit := string(u)
		var exec []string
		for _, line := range strings.Split(unit, "\n") {
			if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
				exec = strings.Fields(v)
			}
		}
		if len(exec) == 0 || exec[0] != c.Dir()+"/bin/blockbook" {
			t.Fatalf("%s: ExecStart %v", c.Unit(), exec)
		}
		for _, want := range []string{
			"-blockchaincfg=/opt/coins/blockbook/" + c.Alias + "/config/blockchaincfg.json",
			"-datadir=/opt/coins/data/" + c.Alias + "/blockbook/db",
			"-sync", "-certfile=/opt/coins/blockbook/" + c.Alias + "/cert/blockbook",
			"-log_dir=/opt/coins/blockbook/" + c.Alias + "/logs", "-explorer=",
		} {
			if !contains(exec, want) {
				t.Errorf("%s: ExecStart lacks %s: %v", c.Unit(), want, exec)
			}
		}
		for _, want := range []string{"User=" + c.User, "EnvironmentFile=-/etc/blockbook/blockbook.env", "WorkingDirectory=" + c.Dir()} {
			if !strings.Contains(unit, "\n"+want+"\n") {
				t.Errorf("%s: no line %s", c.Unit(), want)
			}
		}
		if _, err := app.ParseFlags(exec[1:], io.Discard); err != nil {
			t.Errorf("%s: the binary refuses the unit's flags: %v", c.Unit(), err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDebVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v0.6.0": "0.6.0", "v0.6.0-3-gabc1234": "0.6.0.3.gabc1234", "abc1234": "0.0.0~abc1234", "4fc0ae9": "0.0.0~4fc0ae9",
		"abc1234-dirty": "0.0.0~abc1234.dirty", "": "0.0.0", "1.2.3+git5": "1.2.3+git5",
	} {
		if got := DebVersion(in); got != want {
			t.Errorf("DebVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// Build makes a .deb whose files, modes, links, conffiles and scripts are
// the layout above (dpkg-deb reads it back).
func TestBuildPackage(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb not installed")
	}
	c, err := Find("bitcoin_regtest")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable() // any ELF file stands in for the binary
	if err != nil {
		t.Fatal(err)
	}
	meta := Meta{Version: "1.0.0", Arch: "amd64", Maintainer: "test <test@localhost>", Depends: BaseDepends}
	out, err := Build(Input{Coin: c, Binary: exe, Config: filepath.Join(configs, c.Alias+".json"), Meta: meta, OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(out) != "blockbook-bitcoin-regtest_1.0.0_amd64.deb" {
		t.Errorf("file name %s", out)
	}
	contents := dpkgDeb(t, "-c", out)
	for _, want := range []string{
		"-rwxr-xr-x root/root .* ./opt/coins/blockbook/bitcoin_regtest/bin/blockbook\n",
		"-rw-r--r-- root/root .* ./opt/coins/blockbook/bitcoin_regtest/config/blockchaincfg.json\n",
		"-rw-r--r-- root/root .* ./opt/coins/blockbook/bitcoin_regtest/cert/testcert.crt\n",
		"-rw------- root/root .* ./opt/coins/blockbook/bitcoin_regtest/cert/testcert.key\n",
		"lrwxrwxrwx root/root .* ./opt/coins/blockbook/bitcoin_regtest/cert/blockbook.crt -> testcert.crt\n",
		"lrwxrwxrwx root/root .* ./opt/coins/blockbook/bitcoin_regtest/cert/blockbook.key -> testcert.key\n",
		"drwxr-xr-x root/root .* ./opt/coins/blockbook/bitcoin_regtest/logs/\n",
		"drwxr-xr-x root/root .* ./opt/coins/data/bitcoin_regtest/blockbook/\n",
		"-rw-r--r-- root/root .* ./lib/systemd/system/blockbook-bitcoin-regtest.service\n",
	} {
		if !matches(want, contents) {
			t.Errorf("package lacks %q:\n%s", want, contents)
		}
	}
	info := dpkgDeb(t, "-I", out)
	for _, want := range []string{"Package: blockbook-bitcoin-regtest", "Version: 1.0.0", "Architecture: amd64", "Depends: passwd, coreutils", "postinst", "prerm", "postrm", "conffiles"} {
		if !strings.Contains(info, want) {
			t.Errorf("control lacks %q:\n%s", want, info)
		}
	}
	if conf := dpkgDeb(t, "-I", out, "conffiles"); strings.TrimSpace(conf) != c.ConfigPath() {
		t.Errorf("conffiles %q", conf)
	}
	if post := dpkgDeb(t, "-I", out, "postinst"); !strings.Contains(post, "useradd --system") || !strings.Contains(post, "chown root:blockbook-bitcoin") {
		t.Errorf("postinst:\n%s", post)
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		for _, s := range []string{"postinst", "prerm", "postrm"} {
			f := filepath.Join(t.TempDir(), s)
			if err := os.WriteFile(f, []byte(dpkgDeb(t, "-I", out, s)), 0o644); err != nil {
				t.Fatal(err)
			}
			if msg, err := exec.Command(sh, "-n", f).CombinedOutput(); err != nil {
				t.Errorf("%s: %v %s", s, err, msg)
			}
		}
	}
}

func dpkgDeb(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("dpkg-deb", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb %v: %v %s", args, err, out)
	}
	return string(out)
}

func matches(pattern, s string) bool {
	for _, line := range strings.SplitAfter(s, "\n") {
		if ok, _ := filepathMatchLine(pattern, line); ok {
			return true
		}
	}
	return false
}

// filepathMatchLine matches a `dpkg-deb -c` line against a pattern whose
// " .* " stands for the size, date and time columns.
func filepathMatchLine(pattern, line string) (bool, error) {
	head, tail, ok := strings.Cut(pattern, " .* ")
	if !ok {
		return pattern == line, nil
	}
	return strings.HasPrefix(line, head+" ") && strings.HasSuffix(line, " "+tail), nil
}
