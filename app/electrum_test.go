package app

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// The Electrum flags parse into their options; their defaults are the
// server's.
func TestElectrumFlags(t *testing.T) {
	o, err := ParseFlags(strings.Fields(`-blockchaincfg=x -electrum=:50001 -electrumtls=127.0.0.1:50002 -electrumws=:50003
		-electrummaxconns=7 -electrummaxconnsperip=3 -electrummaxsubs=9 -electrummaxhistory=25000 -electrummaxrequest=4096
		-electrumidletimeout=1m -electrumbanner=hi -electrumdonationaddress=bc1qx -electrumrelayfee=100`), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e := o.Electrum
	if e.TCP != ":50001" || e.TLS != "127.0.0.1:50002" || e.WS != ":50003" || e.MaxConns != 7 || e.MaxConnsPerIP != 3 || e.MaxSubs != 9 ||
		e.MaxHistory != 25000 || e.MaxRequestBytes != 4096 || e.IdleTimeout != time.Minute || e.Banner != "hi" ||
		e.DonationAddress != "bc1qx" || e.RelayFeeSat != 100 || !e.on() {
		t.Fatalf("parsed %+v", e)
	}
	hosts := electrumHosts(&e)
	if hp, ok := hosts["127.0.0.1"]; len(hosts) != 1 || !ok || hp.SSLPort == nil || *hp.SSLPort != 50002 || hp.TCPPort != nil {
		t.Errorf("hosts %+v", hosts)
	}
	o, err = ParseFlags([]string{"-blockchaincfg=x"}, io.Discard)
	if err != nil || o.Electrum.on() || o.Electrum.MaxHistory < 25_000 {
		t.Fatalf("defaults %+v %v", o.Electrum, err)
	}
}

// The Electrum flags are a startup error on an Ethereum-type coin, and
// -electrumtls without -certfile.
func TestElectrumStartupErrors(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	eth := stackEnv{o: &Options{Electrum: electrumOptions{TCP: "127.0.0.1:0"}}, backend: &bchain.Backend{Type: bchain.ChainEthereumType}, log: log}
	if _, err := startElectrum(eth, nil, nil, tipSource{}, nil); !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), "Bitcoin-type") {
		t.Errorf("Ethereum-type coin: %v", err)
	}
	noCert := stackEnv{o: &Options{Electrum: electrumOptions{TLS: "127.0.0.1:0"}}, backend: &bchain.Backend{Type: bchain.ChainBitcoinType}, log: log}
	if _, err := startElectrum(noCert, nil, nil, tipSource{}, nil); !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), "-certfile") {
		t.Errorf("-electrumtls without -certfile: %v", err)
	}
	none := stackEnv{o: &Options{}, backend: &bchain.Backend{Type: bchain.ChainEthereumType}, log: log}
	if srv, err := startElectrum(none, nil, nil, tipSource{}, nil); srv != nil || err != nil {
		t.Errorf("without the flags: %v %v", srv, err)
	}
}
