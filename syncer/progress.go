package syncer

import (
	"log/slog"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// progress logs catch-up at most every `every`, with rates and ETA, and a
// final line with totals.
type progress struct {
	log              *slog.Logger
	from, to         uint32
	every            time.Duration
	start, last      time.Time
	blocks, txs      int64
	lastBlk, lastTxs int64
	height           uint32
}

func newProgress(log *slog.Logger, from, to uint32, every time.Duration) *progress {
	now := time.Now()
	return &progress{log: log, from: from, to: to, every: every, start: now, last: now}
}

func (p *progress) block(b *bchain.Block) {
	p.blocks++
	p.txs += int64(b.TxCount())
	p.height = b.Height
	if now := time.Now(); now.Sub(p.last) >= p.every {
		dt := now.Sub(p.last).Seconds()
		bps := float64(p.blocks-p.lastBlk) / dt
		left := int64(p.to) - int64(p.height)
		eta := time.Duration(0)
		if bps > 0 {
			eta = time.Duration(float64(left)/bps) * time.Second
		}
		p.log.Info("sync progress", "height", p.height, "target", p.to,
			"blocks_per_s", round1(bps), "txs_per_s", round1(float64(p.txs-p.lastTxs)/dt),
			"eta", eta.Round(time.Second).String())
		p.last, p.lastBlk, p.lastTxs = now, p.blocks, p.txs
	}
}

func (p *progress) finish() {
	if p.blocks == 0 {
		return
	}
	d := time.Since(p.start)
	secs := max(d.Seconds(), 1e-9)
	if p.blocks == 1 && d < p.every {
		p.log.Debug("connected block", "height", p.height, "txs", p.txs, "took", d.Round(time.Millisecond).String())
		return
	}
	p.log.Info("sync finished", "from", p.from, "to", p.height, "blocks", p.blocks, "txs", p.txs,
		"took", d.Round(time.Millisecond).String(), "blocks_per_s", round1(float64(p.blocks)/secs), "txs_per_s", round1(float64(p.txs)/secs))
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
