package esplora

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/openexplorer/blockbook/api"
)

// mempool.space's mining routes that the headers answer: the block at a
// time and the hashrate history (api/mining.go, api/hashrate.go).

// unixSeconds is mempool.space's check of a timestamp: digits without a
// leading zero.
var unixSeconds = regexp.MustCompile(`^[1-9][0-9]*$`)

// blockAtTimeValue is mempool.space's answer (its timestamp is the
// database's DATETIME as JavaScript prints a Date).
type blockAtTimeValue struct {
	Height    uint32 `json:"height"`
	Hash      string `json:"hash"`
	Timestamp string `json:"timestamp"`
}

// blockAtTime answers mining/blocks/timestamp/:timestamp.
func (s *Server) blockAtTime(ctx context.Context, arg string) (*reply, error) {
	q := s.caps.ChainStats
	if q == nil {
		return nil, mpError(http.StatusNotFound, s.caps.NotSupported(api.CapChainStats).Error())
	}
	ts, err := strconv.ParseInt(arg, 10, 64)
	// More than a day ahead is milliseconds, not seconds (mempool.space).
	if !unixSeconds.MatchString(arg) || err != nil || ts > s.opts.Now().Unix()+86400 {
		return nil, mpError(http.StatusBadRequest, "Invalid timestamp, value must be Unix seconds")
	}
	b, err := q.BlockAtTime(ctx, ts)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, mpError(http.StatusNotFound, fmt.Sprintf("No block was found before timestamp %d", ts))
	}
	return jsonReply(blockAtTimeValue{b.Height, b.Hash.String(), time.Unix(b.Time, 0).UTC().Format("2006-01-02T15:04:05.000Z")})
}

type hashrateValue struct {
	Hashrates         []hashrateSample   `json:"hashrates"`
	Difficulty        []difficultyChange `json:"difficulty"`
	CurrentHashrate   float64            `json:"currentHashrate"`
	CurrentDifficulty float64            `json:"currentDifficulty"`
}

type hashrateSample struct {
	Timestamp   int64   `json:"timestamp"`
	AvgHashrate float64 `json:"avgHashrate"`
}

type difficultyChange struct {
	Time       int64   `json:"time"`
	Height     int64   `json:"height"`
	Difficulty float64 `json:"difficulty"`
	Adjustment float64 `json:"adjustment"`
}

// hashrateSince is the start of mempool.space's intervals
// (getSqlInterval: MySQL's calendar months and years) before now; ok
// false for an interval it does not name. "all" is 0.
func hashrateSince(interval string, now time.Time) (int64, bool) {
	now = now.UTC()
	var t time.Time
	switch interval {
	case "all":
		return 0, true
	case "24h":
		t = now.AddDate(0, 0, -1)
	case "3d":
		t = now.AddDate(0, 0, -3)
	case "1w":
		t = now.AddDate(0, 0, -7)
	case "1m", "3m", "6m":
		t = now.AddDate(0, -int(interval[0]-'0'), 0)
	case "1y", "2y", "3y", "4y":
		t = now.AddDate(-int(interval[0]-'0'), 0, 0)
	default:
		return 0, false
	}
	return t.Unix(), true
}

// hashrate answers mining/hashrate/:interval.
func (s *Server) hashrate(ctx context.Context, interval string) (*reply, error) {
	q := s.caps.ChainStats
	if q == nil {
		return nil, mpError(http.StatusNotFound, s.caps.NotSupported(api.CapChainStats).Error())
	}
	// The answer is computed at the minute (the window's start and the day
	// in progress), so that one computation serves a minute of requests.
	now := s.opts.Now().Truncate(time.Minute)
	since, ok := hashrateSince(interval, now)
	if !ok {
		return nil, mpError(http.StatusBadRequest, "Invalid interval: one of 24h, 3d, 1w, 1m, 3m, 6m, 1y, 2y, 3y, 4y, all")
	}
	_, tip, ok, err := s.q.EsploraTip(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return s.computeHashrate(ctx, q, now, since)
	}
	return s.hashrates.get(interval, tip.String(), now.Unix(), func() (*reply, error) {
		// Shared by every caller waiting on it: one going away must not
		// fail the others.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RequestTimeout)
		defer cancel()
		return s.computeHashrate(cctx, q, now, since)
	})
}

// computeHashrate walks the headers from since to the tip.
func (s *Server) computeHashrate(ctx context.Context, q api.ChainStatsQueries, now time.Time, since int64) (*reply, error) {
	blocks, err := q.MiningBlocks(ctx, since)
	if errors.Is(err, api.ErrNotSupported) {
		return nil, mpError(http.StatusNotFound, "Hashrate history is not available: this coin has no fixed retarget interval")
	}
	if err != nil {
		return nil, err
	}
	h := api.ComputeHashrateHistory(blocks, now.Unix(), since)
	v := hashrateValue{Hashrates: make([]hashrateSample, len(h.Hashrates)), Difficulty: make([]difficultyChange, len(h.Difficulty)),
		CurrentHashrate: h.CurrentHashrate, CurrentDifficulty: h.CurrentDifficulty}
	for i, r := range h.Hashrates {
		v.Hashrates[i] = hashrateSample(r)
	}
	for i, d := range h.Difficulty {
		v.Difficulty[i] = difficultyChange(d)
	}
	return jsonReply(v)
}
