package app

import (
	"flag"
	"fmt"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/ordapi"
	"github.com/openexplorer/blockbook/server"
)

// ordOptions are the flags of ord's JSON API listener.
type ordOptions struct {
	// Addr is -ord=<host:port>: where ord's rune routes are served ("":
	// off).
	Addr string
}

func (o *ordOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.Addr, "ord", "", "serve ord's JSON API for runes (/runes, /rune/:rune, /output/:outpoint, /address/:address) on this binding [address]:port (Bitcoin networks with -runesindex; default: off)")
}

// startOrd starts ord's listener when -ord is given, behind the public
// port's per-client limits as the Esplora listener is.
func startOrd(srvs *servers, o *Options, e stackEnv, svc api.Service, over *server.OverLimits) error {
	if o.Ord.Addr == "" {
		return nil
	}
	q, ok := svc.(api.OrdQueries)
	if !ok || e.backend.Type != bchain.ChainBitcoinType {
		return fmt.Errorf("%w: -ord serves Bitcoin networks only, not %s", bchain.ErrConfig, e.backend.Type)
	}
	return startFront(srvs, o, e, over, "ord", o.Ord.Addr, ordapi.New(q, e.log), ordapi.RequestCost, nil)
}
