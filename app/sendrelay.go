package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/eth"
)

// relayEnv is Blockbook's private sending setup of a chain.
type relayEnv struct {
	URLs        []string
	Only, Fetch bool
	// Var names the URLs variable as it was found (for the logs).
	Var string
}

// readRelayEnv reads _ALTERNATIVE_SENDTX_URLS (comma-separated),
// _ALTERNATIVE_SENDTX_ONLY and _ALTERNATIVE_FETCH_MEMPOOL_TX ("TRUE" in
// any case turns them on, as in Blockbook).
func readRelayEnv(get envGetter) relayEnv {
	var r relayEnv
	if name, v, ok := get("ALTERNATIVE_SENDTX_URLS"); ok {
		r.Var, r.URLs = name, splitList(v)
	}
	isTrue := func(suffix string) bool {
		_, v, _ := get(suffix)
		return strings.EqualFold(strings.TrimSpace(v), "true")
	}
	r.Only, r.Fetch = isTrue("ALTERNATIVE_SENDTX_ONLY"), isTrue("ALTERNATIVE_FETCH_MEMPOOL_TX")
	return r
}

// newRelay builds private sending for an Ethereum-type chain when its
// providers are configured (nil otherwise), and puts it in front of the
// backend's sending and nonce queries.
func newRelay(e stackEnv) (*eth.Relay, error) {
	r := e.env.Relay
	if len(r.URLs) == 0 {
		return nil, nil
	}
	if e.backend.Type != bchain.ChainEthereumType {
		e.log.Warn("environment variable has no effect on this chain type", "variable", r.Var)
		return nil, nil
	}
	keep, err := e.cfg.AlternativeMempoolTimeout()
	if err != nil {
		return nil, err
	}
	if _, err := e.cfg.MempoolTimeout(true); err != nil {
		return nil, err
	}
	relay := eth.NewRelay(eth.RelayConfig{
		URLs: r.URLs, Only: r.Only, FetchMempoolTx: r.Fetch, CacheTimeout: keep,
		RPCTimeout: e.cfg.Timeout(), Log: e.log.With("subsystem", "sendrelay"), Metrics: e.reg,
	})
	// The URLs may carry keys: only their number is logged.
	e.log.Info("transactions are sent through alternative providers", "variable", r.Var, "providers", len(r.URLs),
		"only", r.Only, "fetch_mempool_tx", r.Fetch, "alternativeMempoolTxTimeout", keep.String())
	b := e.backend
	if b.Broadcast == nil {
		return nil, fmt.Errorf("%w: the backend cannot send transactions", bchain.ErrConfig)
	}
	b.Broadcast = eth.RelayBroadcast{Next: b.Broadcast, Relay: relay}
	b.Eth = eth.RelayEth{EthereumChain: b.Eth, Relay: relay}
	return relay, nil
}

// relayRun reconciles the relay's pending-tx cache while ctx lives.
func relayRun(ctx context.Context, relay *eth.Relay) {
	if relay != nil && relay.FetchesMempool() {
		relay.Run(ctx)
	}
}
