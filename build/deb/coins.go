// Package deb builds Debian packages of blockbook, one per supported coin,
// with the layout of Blockbook's own packages: the binary, the runtime config
// and a certificate under /opt/coins/blockbook/<alias>, the index under
// /opt/coins/data/<alias>/blockbook/db, and a systemd unit
// blockbook-<alias>.service whose command line uses Blockbook's flags.
package deb

import (
	"fmt"
	"strings"
)

// Install and data roots of Blockbook's packages.
const (
	InstallRoot = "/opt/coins/blockbook"
	DataRoot    = "/opt/coins/data"
	UnitDir     = "/lib/systemd/system"
	// EnvFile is the optional operator environment file every unit reads.
	EnvFile = "/etc/blockbook/blockbook.env"
)

// Coin is the package definition of one coin config. Alias, ports, system
// user and extra flags are those of Blockbook's coin definition of the same
// name, so that a unit, a firewall rule or a monitoring target written for
// Blockbook's package fits this one.
type Coin struct {
	// Alias names the package, its directories and the runtime config
	// configs/coins/<Alias>.json.
	Alias string
	// User is the system user the service runs as (Blockbook shares one per
	// coin family).
	User string
	// Public and Internal are the server ports.
	Public, Internal int
	// Params are the coin's additional flags on the unit's command line.
	Params string
}

// Coins are the package definitions, one per runtime config. The registry
// test in this package checks that every coin the binary registers has one
// and that the ports are the registry's defaults.
var Coins = []Coin{
	{Alias: "bitcoin", User: "blockbook-bitcoin", Public: 9130, Internal: 9030, Params: "-dbcache=1073741824 -enablesubnewtx -extendedindex"},
	{Alias: "bitcoin_testnet", User: "blockbook-bitcoin", Public: 19130, Internal: 19030, Params: "-enablesubnewtx -extendedindex"},
	{Alias: "bitcoin_testnet4", User: "blockbook-bitcoin", Public: 19129, Internal: 19029, Params: "-enablesubnewtx -extendedindex"},
	{Alias: "bitcoin_signet", User: "blockbook-bitcoin", Public: 19120, Internal: 19020},
	{Alias: "bitcoin_regtest", User: "blockbook-bitcoin", Public: 19121, Internal: 19021},
	{Alias: "litecoin", User: "blockbook-litecoin", Public: 9134, Internal: 9034},
	{Alias: "litecoin_testnet", User: "blockbook-litecoin", Public: 19134, Internal: 19034},
	{Alias: "litecoin_regtest", User: "blockbook-litecoin", Public: 19184, Internal: 19084},
	{Alias: "bcash", User: "blockbook-bcash", Public: 9131, Internal: 9031},
	{Alias: "bcash_testnet", User: "blockbook-bcash", Public: 19131, Internal: 19031},
	{Alias: "ecash", User: "blockbook-ecash", Public: 9197, Internal: 9097},
	{Alias: "dogecoin", User: "blockbook-dogecoin", Public: 9138, Internal: 9038, Params: "-resyncindexperiod=30011 -resyncmempoolperiod=2011"},
	{Alias: "dogecoin_testnet", User: "blockbook-dogecoin", Public: 19138, Internal: 19038, Params: "-resyncindexperiod=30011 -resyncmempoolperiod=2011"},
	{Alias: "namecoin", User: "blockbook-namecoin", Public: 9139, Internal: 9039},
	{Alias: "dash", User: "blockbook-dash", Public: 9133, Internal: 9033},
	{Alias: "dash_testnet", User: "blockbook-dash", Public: 19133, Internal: 19033},
	{Alias: "digibyte", User: "blockbook-digibyte", Public: 9142, Internal: 9042},
	{Alias: "digibyte_testnet", User: "blockbook-digibyte-testnet", Public: 19142, Internal: 19042},
	{Alias: "vertcoin", User: "blockbook-vertcoin", Public: 9140, Internal: 9040},
	{Alias: "vertcoin_testnet", User: "blockbook-vertcoin", Public: 19140, Internal: 19040},
	{Alias: "groestlcoin", User: "blockbook-groestlcoin", Public: 9145, Internal: 9045, Params: "-enablesubnewtx -extendedindex"},
	{Alias: "groestlcoin_testnet", User: "blockbook-groestlcoin", Public: 19145, Internal: 19045, Params: "-enablesubnewtx -extendedindex"},
	{Alias: "groestlcoin_regtest", User: "blockbook-groestlcoin", Public: 19146, Internal: 19046},
	{Alias: "groestlcoin_signet", User: "blockbook-groestlcoin", Public: 19147, Internal: 19047},
	{Alias: "zcash", User: "blockbook-zcash", Public: 9132, Internal: 9032, Params: "-resyncindexperiod=50000 -resyncmempoolperiod=3000"},
	{Alias: "zcash_testnet", User: "blockbook-zcash", Public: 19132, Internal: 19032, Params: "-resyncindexperiod=50000 -resyncmempoolperiod=3000"},
	{Alias: "ethereum", User: "blockbook-ethereum", Public: 9136, Internal: 9036},
	{Alias: "ethereum_archive", User: "blockbook-ethereum", Public: 9116, Internal: 9016, Params: "-workers=16"},
	{Alias: "ethereum_testnet_sepolia", User: "blockbook-ethereum", Public: 19176, Internal: 19076},
	{Alias: "ethereum_testnet_sepolia_archive", User: "blockbook-ethereum", Public: 19186, Internal: 19086, Params: "-workers=16"},
	{Alias: "ethereum_testnet_hoodi", User: "blockbook-ethereum", Public: 19106, Internal: 19006},
	{Alias: "ethereum_testnet_hoodi_archive", User: "blockbook-ethereum", Public: 19126, Internal: 19026, Params: "-workers=16"},
	{Alias: "ethereum-classic", User: "blockbook-ethereum-classic", Public: 9137, Internal: 9037},
	{Alias: "polygon", User: "blockbook-polygon", Public: 9170, Internal: 9070},
	{Alias: "polygon_archive", User: "blockbook-polygon", Public: 9172, Internal: 9072, Params: "-workers=16 -resyncindexdebounce=1509"},
	{Alias: "bsc", User: "blockbook-bsc", Public: 9164, Internal: 9064, Params: "-workers=16"},
	{Alias: "bsc_archive", User: "blockbook-bsc", Public: 9165, Internal: 9065, Params: "-workers=16 -resyncindexdebounce=1509"},
	{Alias: "arbitrum", User: "blockbook-arbitrum", Public: 9305, Internal: 9205},
	{Alias: "arbitrum_archive", User: "blockbook-arbitrum", Public: 9306, Internal: 9206, Params: "-workers=16 -resyncindexdebounce=1509"},
	{Alias: "arbitrum_nova", User: "blockbook-arbitrum", Public: 9307, Internal: 9207},
	{Alias: "arbitrum_nova_archive", User: "blockbook-arbitrum", Public: 9308, Internal: 9208, Params: "-workers=16 -resyncindexdebounce=1509"},
	{Alias: "base", User: "blockbook-base", Public: 9309, Internal: 9209},
	{Alias: "base_archive", User: "blockbook-base", Public: 9311, Internal: 9211, Params: "-workers=16 -resyncindexdebounce=1509"},
	{Alias: "optimism", User: "blockbook-optimism", Public: 9300, Internal: 9200},
	{Alias: "optimism_archive", User: "blockbook-optimism", Public: 9302, Internal: 9202, Params: "-workers=16 -resyncindexdebounce=1509"},
	{Alias: "avalanche", User: "blockbook-avalanche", Public: 9198, Internal: 9098},
	{Alias: "avalanche_archive", User: "blockbook-avalanche", Public: 9199, Internal: 9099, Params: "-workers=16 -resyncindexdebounce=1509"},
	{Alias: "robinhood_archive", User: "blockbook-robinhood", Public: 9313, Internal: 9213, Params: "-workers=16 -resyncindexdebounce=509"},
	{Alias: "robinhood_testnet", User: "blockbook-robinhood", Public: 19177, Internal: 19077, Params: "-workers=16 -resyncindexdebounce=509"},
	{Alias: "tron", User: "blockbook-tron", Public: 9312, Internal: 9212},
	{Alias: "tron_testnet_nile", User: "blockbook-tron", Public: 19190, Internal: 19090},
	// Not one of Blockbook's: a local dev chain (tools/gethdev, geth --dev).
	{Alias: "ethereum_regtest", User: "blockbook-ethereum", Public: 19136, Internal: 19036},
}

// Find returns the definition of an alias.
func Find(alias string) (Coin, error) {
	for _, c := range Coins {
		if c.Alias == alias {
			return c, nil
		}
	}
	names := make([]string, len(Coins))
	for i, c := range Coins {
		names[i] = c.Alias
	}
	return Coin{}, fmt.Errorf("no package definition for %q (known: %s)", alias, strings.Join(names, ", "))
}

// Package is the Debian package name, as Blockbook names it.
func (c Coin) Package() string { return "blockbook-" + strings.ReplaceAll(c.Alias, "_", "-") }

// Unit is the systemd unit's file name.
func (c Coin) Unit() string { return c.Package() + ".service" }

// Dir is the install directory.
func (c Coin) Dir() string { return InstallRoot + "/" + c.Alias }

// ConfigPath is the installed runtime config (a conffile).
func (c Coin) ConfigPath() string { return c.Dir() + "/config/blockchaincfg.json" }

// CertPrefix is the -certfile value: the server reads <prefix>.crt and
// <prefix>.key.
func (c Coin) CertPrefix() string { return c.Dir() + "/cert/blockbook" }

// LogDir is the -log_dir value.
func (c Coin) LogDir() string { return c.Dir() + "/logs" }

// DataDir is the -datadir value.
func (c Coin) DataDir() string { return DataRoot + "/" + c.Alias + "/blockbook/db" }

// ExecStart is the unit's command line: Blockbook's flags in Blockbook's
// order, then the coin's additional ones.
func (c Coin) ExecStart() string {
	args := []string{
		c.Dir() + "/bin/blockbook",
		"-blockchaincfg=" + c.ConfigPath(),
		"-datadir=" + c.DataDir(),
		"-sync",
		fmt.Sprintf("-internal=:%d", c.Internal),
		fmt.Sprintf("-public=:%d", c.Public),
		"-certfile=" + c.CertPrefix(),
		"-explorer=",
		"-log_dir=" + c.LogDir(),
	}
	if c.Params != "" {
		args = append(args, strings.Fields(c.Params)...)
	}
	return strings.Join(args, " ")
}
