package app

import (
	"context"
	"log/slog"
	"os"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/esplora"
	"github.com/openexplorer/blockbook/fiat"
	"github.com/openexplorer/blockbook/server"
)

// fiatConfig reads the fiat_rates keys (nil: no fiat rates), so that a
// mistake in them stops the program at start, -dryrun included.
func fiatConfig(cfg *bchain.Config, log *slog.Logger) (*fiat.Config, error) {
	fc, err := fiat.FromChainConfig(cfg, os.Getenv)
	if err != nil || fc == nil {
		return nil, err
	}
	for _, w := range fc.Warnings {
		log.Warn(w, "subsystem", "fiat")
	}
	return fc, nil
}

// rateSinks are who hears of new current rates: the Blockbook websocket's
// subscribers and, with -esplora, mempool.space's websocket clients.
func rateSinks(ws *server.Websocket, mp *esplora.Server) []func(*api.FiatTicker) {
	out := []func(*api.FiatTicker){ws.OnFiatRates}
	if mp != nil {
		out = append(out, func(*api.FiatTicker) { mp.OnFiatRates() })
	}
	return out
}

// startFiat runs the rates downloader until ctx ends, pushing each new
// current ticker to onRates (the websocket's subscribeFiatRates
// subscribers, mempool.space's conversions). It runs
// only with -sync, in the process that writes the index, as in Blockbook;
// without it the API serves the rates the index holds.
func startFiat(ctx context.Context, wg *sync.WaitGroup, o *Options, fc *fiat.Config, chain bchain.ChainType, d *db.DB,
	onRates []func(*api.FiatTicker), log *slog.Logger, reg prometheus.Registerer) {
	if fc == nil {
		return
	}
	if !o.Sync {
		log.Info("fiat rates are served from the index but not downloaded (run with -sync to download them)", "subsystem", "fiat")
		return
	}
	c := *fc
	c.Log, c.Metrics = log, reg
	if chain != bchain.ChainEthereumType {
		if w := c.DropTokenRates(); w != "" {
			log.Warn(w, "subsystem", "fiat")
		}
	}
	if o.FiatConfig != nil {
		o.FiatConfig(&c)
	}
	dl := fiat.New(d, c)
	dl.OnCurrent(func(t *db.FiatTicker) {
		ticker := &api.FiatTicker{Timestamp: t.Time, Rates: t.Rates, TokenRates: t.TokenRates}
		for _, f := range onRates {
			f(ticker)
		}
	})
	if o.OnFiat != nil {
		o.OnFiat(dl)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = dl.Run(ctx)
	}()
}
