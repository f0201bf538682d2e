package app

import (
	"context"

	"github.com/openexplorer/blockbook/fees"
	"github.com/openexplorer/blockbook/mempool"
)

// newAltFees builds Blockbook's alternative fee provider from the config's
// alternative_estimate_fee (package fees), or nil: when it is unset, when
// its params are invalid (logged; the node answers, as Blockbook does),
// or without the mempool (no -sync), which runs it.
func newAltFees(e stackEnv, proj *mempool.Projection) *fees.Provider {
	kind := e.cfg.AlternativeEstimateFee
	if kind == "" {
		return nil
	}
	log := e.log.With("subsystem", "fees")
	params, err := fees.ParseParams(kind, e.cfg.AlternativeEstimateFeeParams)
	if err != nil {
		log.Error("alternative fee provider disabled; the node estimates fees", "err", err)
		return nil
	}
	if proj == nil {
		log.Warn("alternative fee provider disabled: it runs with the mempool (-sync)", "provider", kind)
		return nil
	}
	var src fees.Source
	switch {
	case params.Source == "remote":
		src = fees.RemoteSource{URL: params.URL}
	case e.backend.MinFee == nil && kind == fees.MempoolSpace:
		log.Warn("alternative fee provider disabled: the node gives no minimum fee", "provider", kind)
		return nil
	default:
		minFee := e.backend.MinFee
		src = fees.LocalSource{Projection: proj, MinFee: func(ctx context.Context) (float64, error) {
			perKvB, err := minFee.MempoolMinFee(ctx)
			return float64(perKvB) / 1000, err
		}}
	}
	return fees.NewProvider(kind, params, src, e.log)
}
