package app

import (
	"flag"
	"fmt"
	"slices"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/silentpayments"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/sphttp"
)

// silentPaymentsOptions are the Silent Payments flags.
type silentPaymentsOptions struct {
	// Index is -silentpaymentsindex (or the config's
	// silent_payments_index): keep the tweak index.
	Index bool
	// Addr is -silentpayments=<host:port>: where the tweak routes are
	// served ("" disables them).
	Addr string
}

func (s *silentPaymentsOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.Index, "silentpaymentsindex", false, "keep the Silent Payments (BIP352) tweak index that -silentpayments serves (Bitcoin and its test networks; also the config key silent_payments_index; an empty datadir only; default: off)")
	fs.StringVar(&s.Addr, "silentpayments", "", "serve the Silent Payments tweak routes (BlindBit Oracle v1 at the root, the BIP352 index-server routes under /bip352/) on this binding [address]:port (needs the tweak index; default: off)")
}

// silentPaymentsCoins are the coins whose chain BIP352 is defined for.
var silentPaymentsCoins = []string{"Bitcoin", "Testnet", "Testnet4", "Signet", "Regtest"}

// enableSilentPayments switches the tweak index on with
// -silentpaymentsindex or the config key (and keeps it on an index built
// with it); other coins refuse the switch.
func enableSilentPayments(e stackEnv, x *db.UtxoIndex) error {
	want := e.o.SilentPayments.Index || e.cfg.SilentPaymentsIndex
	if want && !slices.Contains(silentPaymentsCoins, e.cfg.CoinName) {
		return fmt.Errorf("%w: -silentpaymentsindex (silent_payments_index): BIP352 is defined for Bitcoin and its test networks, not %s", bchain.ErrConfig, e.cfg.CoinName)
	}
	on, err := x.EnableOptional(silentpayments.Index{}, want)
	if err != nil {
		return fmt.Errorf("-silentpaymentsindex (silent_payments_index): %w", err)
	}
	if on && !want {
		e.log.Info("the index keeps the Silent Payments tweaks it was built with (-silentpaymentsindex)")
	}
	return nil
}

// startSilentPayments starts the tweak listener when -silentpayments is
// given, with the public port's protections: the listener kit's timeouts
// and connection caps, and the per-client budget with its own buckets.
// An index without the tweaks answers every route that they are off.
func startSilentPayments(srvs *servers, o *Options, e stackEnv, svc api.Service, over *server.OverLimits) error {
	if o.SilentPayments.Addr == "" {
		return nil
	}
	q, ok := svc.(sphttp.Queries)
	if !ok || e.backend.Type != bchain.ChainBitcoinType {
		return fmt.Errorf("%w: -silentpayments serves Bitcoin and its test networks only, not %s", bchain.ErrConfig, e.cfg.CoinName)
	}
	return startFront(srvs, o, e, over, "silentpayments", o.SilentPayments.Addr, sphttp.New(q, sphttp.Options{Log: e.log}), sphttp.RequestCost, nil)
}
