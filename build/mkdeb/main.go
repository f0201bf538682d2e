// Command mkdeb builds blockbook's Debian packages, one per coin (see
// build/deb): `go run ./build/mkdeb -coins=bitcoin,bitcoin_regtest`
// (default: every coin). `make deb` runs it on bin/blockbook.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/openexplorer/blockbook/build/deb"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkdeb:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("mkdeb", flag.ContinueOnError)
	coins := fs.String("coins", "all", "comma-separated coin aliases (configs/coins/<alias>.json), or all")
	binary := fs.String("binary", "bin/blockbook", "the blockbook binary to package")
	configs := fs.String("configs", "configs/coins", "directory of the runtime configs")
	out := fs.String("out", "bin/deb", "output directory")
	version := fs.String("version", "", "package version (a tag or git describe output is turned into a Debian version)")
	maintainer := fs.String("maintainer", "blockbook maintainers <blockbook@localhost>", "Maintainer field")
	certFile := fs.String("cert", "", "PEM certificate to ship instead of a new self-signed one (with -key)")
	keyFile := fs.String("key", "", "PEM key of -cert")
	unit := fs.String("unit", "", "print the systemd unit of this alias and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *unit != "" {
		return printUnit(*unit, *configs)
	}
	if *version == "" {
		return fmt.Errorf("-version is required")
	}
	arch, err := deb.DebArch(runtime.GOARCH)
	if err != nil {
		return err
	}
	libs, err := deb.ShlibDepends(*binary)
	if err != nil {
		return err
	}
	meta := deb.Meta{Version: deb.DebVersion(*version), Arch: arch, Maintainer: *maintainer, Depends: deb.JoinDepends(deb.BaseDepends, libs)}
	list, err := selected(*coins)
	if err != nil {
		return err
	}
	for _, c := range list {
		path, err := deb.Build(deb.Input{
			Coin: c, Binary: *binary, Config: filepath.Join(*configs, c.Alias+".json"),
			CertFile: *certFile, KeyFile: *keyFile, Meta: meta, OutDir: *out,
		})
		if err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}

func selected(spec string) ([]deb.Coin, error) {
	if spec == "all" {
		return deb.Coins, nil
	}
	var list []deb.Coin
	for _, a := range strings.Split(spec, ",") {
		c, err := deb.Find(strings.TrimSpace(a))
		if err != nil {
			return nil, err
		}
		list = append(list, c)
	}
	return list, nil
}

func printUnit(alias, configs string) error {
	c, err := deb.Find(alias)
	if err != nil {
		return err
	}
	cfg, err := os.ReadFile(filepath.Join(configs, alias+".json"))
	if err != nil {
		return fmt.Errorf("runtime config: %w", err)
	}
	name, err := deb.CoinName(cfg)
	if err != nil {
		return err
	}
	u, err := deb.Render("service", c, name, deb.Meta{}, 0)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(u)
	return err
}
