// Package fees serves Blockbook's alternative fee providers, the
// alternative_estimate_fee settings of blockchaincfg.json: with
// "mempoolspaceblock" a target of N blocks gets the fee level of projected
// mempool block N, with "mempoolspace" the five levels of mempool.space's
// recommendation. Blockbook downloads both from mempool.space; here they
// come by default from our own projected blocks (LocalSource), and from
// the configured URL only with "source": "remote" (RemoteSource). The
// mapping of levels to targets, the rounding, the fallbacks and the
// staleness rule are Blockbook's (bchain/coins/btc/mempoolspaceblock.go,
// mempoolspace.go and alternativefeeprovider.go).
package fees

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/mempool/projected"
)

// The provider names of alternative_estimate_fee.
const (
	MempoolSpaceBlock = "mempoolspaceblock"
	MempoolSpace      = "mempoolspace"
)

// maxAge is how old the levels may be before estimates go to the node
// again (Blockbook's 10 minutes).
const maxAge = 10 * time.Minute

// ErrNoLevels is returned while the provider has no recent levels: the
// caller then asks the node, as Blockbook does.
var ErrNoLevels = errors.New("alternative fee provider: no recent fee levels")

// Params are alternative_estimate_fee_params: Blockbook's keys, plus
// Source, ours ("local", the default, or "remote").
type Params struct {
	URL           string `json:"url"`
	PeriodSeconds int    `json:"periodSeconds"`
	// FeeRangeIndex picks feeRange[i] of each projected block
	// (mempoolspaceblock); nil takes the block's median.
	FeeRangeIndex *int `json:"feeRangeIndex,omitempty"`
	// FallbackFeePerKB answers targets beyond the last level; 0 answers
	// them with the last level.
	FallbackFeePerKB int64  `json:"fallbackFeePerKB,omitempty"`
	Source           string `json:"source,omitempty"`
}

// ParseParams validates the params of provider kind as Blockbook does (a
// URL and a period are required, feeRangeIndex is 0 to 6) and ours
// (source). A local source needs no URL: it is only logged.
func ParseParams(kind, raw string) (Params, error) {
	var p Params
	if kind != MempoolSpaceBlock && kind != MempoolSpace {
		return p, fmt.Errorf("alternative_estimate_fee %q is not supported (mempoolspaceblock or mempoolspace)", kind)
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return p, fmt.Errorf("alternative_estimate_fee_params: %w", err)
	}
	switch p.Source {
	case "":
		p.Source = "local"
	case "local", "remote":
	default:
		return p, fmt.Errorf("alternative_estimate_fee_params: source must be local or remote, not %q", p.Source)
	}
	if p.PeriodSeconds <= 0 {
		return p, errors.New("alternative_estimate_fee_params: missing periodSeconds")
	}
	if p.Source == "remote" && p.URL == "" {
		return p, errors.New("alternative_estimate_fee_params: missing url")
	}
	if p.FeeRangeIndex != nil && (*p.FeeRangeIndex < 0 || *p.FeeRangeIndex > 6) {
		return p, errors.New("alternative_estimate_fee_params: feeRangeIndex must be between 0 and 6")
	}
	if p.FallbackFeePerKB < 0 {
		p.FallbackFeePerKB = 0
	}
	return p, nil
}

// Source gives a provider its data: the projected blocks for
// mempoolspaceblock, the recommendation for mempoolspace.
type Source interface {
	MempoolBlocks(ctx context.Context) ([]projected.MempoolBlock, error)
	Recommended(ctx context.Context) (projected.RecommendedFees, error)
}

// level is the fee rate for confirmation within blocks.
type level struct {
	blocks   int
	feePerKB int64
}

// Provider keeps the levels of one alternative provider, refreshed every
// period from its source. It answers bchain.FeeEstimator's EstimateFee.
type Provider struct {
	kind   string
	params Params
	src    Source
	log    *slog.Logger
	now    func() time.Time

	mu       sync.Mutex
	levels   []level
	lastSync time.Time
}

// NewProvider returns a provider of kind over src; Run refreshes it.
func NewProvider(kind string, params Params, src Source, log *slog.Logger) *Provider {
	if log == nil {
		log = slog.Default()
	}
	return &Provider{kind: kind, params: params, src: src, log: log.With("subsystem", "fees", "provider", kind), now: time.Now}
}

// Run refreshes the levels at once and then every period until ctx ends.
func (p *Provider) Run(ctx context.Context) {
	period := time.Duration(p.params.PeriodSeconds) * time.Second
	p.log.Info("alternative fee provider", "source", p.params.Source, "url", p.params.URL, "period", period)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := p.Refresh(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("fee levels not refreshed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh reads the source once and replaces the levels. Data that gives
// no level leaves the old levels (and their age) as they were.
func (p *Provider) Refresh(ctx context.Context) error {
	var levels []level
	if p.kind == MempoolSpaceBlock {
		blocks, err := p.src.MempoolBlocks(ctx)
		if err != nil {
			return err
		}
		levels = p.blockLevels(blocks)
	} else {
		rec, err := p.src.Recommended(ctx)
		if err != nil {
			return err
		}
		levels = recommendedLevels(rec)
	}
	if len(levels) == 0 {
		return errors.New("no usable fee level in the data")
	}
	p.mu.Lock()
	p.levels, p.lastSync = levels, p.now()
	p.mu.Unlock()
	return nil
}

// blockLevels maps projected block i to target i+1: its median, or its
// feeRange[FeeRangeIndex] (the median when the range is too short),
// rounded to 3 significant digits; blocks without a positive fee are
// skipped, as Blockbook skips them.
func (p *Provider) blockLevels(blocks []projected.MempoolBlock) []level {
	out := make([]level, 0, len(blocks))
	for i, b := range blocks {
		fee := b.MedianFee
		if ix := p.params.FeeRangeIndex; ix != nil && *ix < len(b.FeeRange) {
			fee = b.FeeRange[*ix]
		}
		if !(fee > 0) {
			continue
		}
		out = append(out, level{blocks: i + 1, feePerKB: int64(math.Round(roundSignificant(fee, 3) * 1000))})
	}
	return out
}

// recommendedLevels maps mempool.space's recommendation to Blockbook's
// targets: fastest 1, half hour 6, hour 36, economy 500, minimum 1000
// blocks. A recommendation with a zero level is refused, as Blockbook
// refuses it.
func recommendedLevels(r projected.RecommendedFees) []level {
	fees := []float64{r.FastestFee, r.HalfHourFee, r.HourFee, r.EconomyFee, r.MinimumFee}
	targets := []int{1, 6, 36, 500, 1000}
	out := make([]level, len(fees))
	for i, f := range fees {
		if !(f > 0) {
			return nil
		}
		out[i] = level{blocks: targets[i], feePerKB: int64(math.Round(f * 1000))}
	}
	return out
}

// roundSignificant rounds n to digits significant digits.
func roundSignificant(n float64, digits int) float64 {
	if n == 0 {
		return 0
	}
	scale := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(n))))
	return math.Round(n*scale) / scale
}

// EstimateFee answers a target in base units per 1000 vbytes: the first
// level for at least that many blocks, else FallbackFeePerKB, else the
// last level. Without levels refreshed in the last 10 minutes it fails
// with ErrNoLevels. conservative does not matter, as in Blockbook.
func (p *Provider) EstimateFee(_ context.Context, blocks int, _ bool) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.levels) == 0 || p.now().Sub(p.lastSync) > maxAge {
		return 0, ErrNoLevels
	}
	for _, l := range p.levels {
		if l.blocks >= blocks {
			return l.feePerKB, nil
		}
	}
	if p.params.FallbackFeePerKB > 0 {
		return p.params.FallbackFeePerKB, nil
	}
	return p.levels[len(p.levels)-1].feePerKB, nil
}
