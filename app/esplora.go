package app

import (
	"flag"
	"fmt"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/esplora"
	"github.com/openexplorer/blockbook/server"
)

// esploraOptions are the flags of the Esplora REST listener.
type esploraOptions struct {
	// Addr is -esplora=<host:port>: where Esplora's API is served under
	// /api ("" disables it).
	Addr string
	// AddressPrefix is -esploraaddressprefix: keep the address-prefix
	// index that /api/address-prefix searches.
	AddressPrefix bool
}

func (e *esploraOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&e.Addr, "esplora", "", "serve Blockstream's Esplora REST API under /api on this binding [address]:port (Bitcoin-type coins; default: off)")
	fs.BoolVar(&e.AddressPrefix, "esploraaddressprefix", false, "keep the address-prefix index that Esplora's /api/address-prefix/:prefix searches (default: off; the endpoint then answers \"address search disabled\")")
}

// startEsplora starts the Esplora listener when -esplora is given; a
// chain type without Esplora's queries is a configuration error.
func startEsplora(srvs *servers, o *Options, e stackEnv, svc api.Service, over *server.OverLimits) error {
	if o.Esplora.Addr == "" {
		return nil
	}
	if e.backend.Type != bchain.ChainBitcoinType {
		return fmt.Errorf("%w: -esplora serves Bitcoin-type coins only, not %s", bchain.ErrConfig, e.backend.Type)
	}
	scripts := svc.Capabilities().Scripts
	if scripts == nil {
		return fmt.Errorf("%w: -esplora: the %s service has no script queries", bchain.ErrConfig, e.backend.Type)
	}
	eq, ok := svc.(api.EsploraQueries)
	if !ok {
		return fmt.Errorf("%w: -esplora: the %s service has no Esplora queries", bchain.ErrConfig, e.backend.Type)
	}
	opts := esplora.Options{Log: e.log}
	if s, ok := svc.(esplora.AddressSearcher); ok && o.Esplora.AddressPrefix {
		opts.AddressSearch = s
	}
	// The public port's per-client budget, with its own buckets and
	// Esplora's costs: the same client identity rule and defaults.
	return startRESTListener(srvs, o, e, over, "esplora", o.Esplora.Addr, esplora.New(svc, scripts, eq, opts), esplora.RequestCost)
}

// enableAddressPrefix makes the index keep the address-prefix rows with
// -esploraaddressprefix (and always on an index built with them).
func enableAddressPrefix(e stackEnv, x *db.UtxoIndex) error {
	on, err := x.EnableAddressPrefix(e.o.Esplora.AddressPrefix, addressNamer{e.backend.Utxo})
	if err != nil {
		return fmt.Errorf("-esploraaddressprefix: %w", err)
	}
	if on && !e.o.Esplora.AddressPrefix {
		e.log.Info("the index keeps the address-prefix rows it was built with (-esploraaddressprefix)")
	}
	return nil
}

// addressNamer names a descriptor by its one address, for the
// address-prefix rows.
type addressNamer struct{ p bchain.UtxoParser }

func (n addressNamer) DescAddress(desc bchain.AddrDesc) (string, bool) {
	addrs, searchable, err := n.p.AddressesFromAddrDesc(desc)
	if err != nil || !searchable || len(addrs) != 1 {
		return "", false
	}
	return addrs[0], true
}
