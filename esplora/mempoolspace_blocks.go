package esplora

import (
	"context"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// mempool.space's block routes (/v1/block/:hash, /v1/blocks[/:height]),
// its difficulty adjustment and its hashrate history. The figures come
// from api.ChainStatsQueries; this file only gives them mempool.space's
// shapes (backend/src/api/blocks.ts $getBlockExtended).

// mpBlocksPerPage is the blocks one /v1/blocks answer holds.
const mpBlocksPerPage = 15

// blockHashRE is mempool.space's BLOCK_HASH_REGEX.
var blockHashRE = regexp.MustCompile(`^[a-fA-F0-9]{64}$`)

// mpError is an error of a mempool.space route; ServeHTTP sends every
// /api/v1 error as its handleError does: JSON {"error": msg} to a client
// that accepts JSON, plain text otherwise.
func mpError(status int, msg string) error {
	return &httpError{status: status, msg: msg}
}

// blockExtended is mempool.space's BlockExtended: Esplora's block and its
// extras.
type blockExtended struct {
	blockValue
	Extras blockExtras `json:"extras"`
}

// blockExtras is mempool.space's BlockExtension as its Bitcoin backend
// fills it for a block it indexes from the node (getblockstats' figures).
type blockExtras struct {
	TotalFees              uint64    `json:"totalFees"`
	MedianFee              uint64    `json:"medianFee"`
	FeeRange               [7]uint64 `json:"feeRange"`
	Reward                 uint64    `json:"reward"`
	Pool                   poolRef   `json:"pool"`
	AvgFee                 uint64    `json:"avgFee"`
	AvgFeeRate             uint64    `json:"avgFeeRate"`
	CoinbaseRaw            string    `json:"coinbaseRaw"`
	Orphans                []string  `json:"orphans"`
	CoinbaseAddress        *string   `json:"coinbaseAddress"`
	CoinbaseAddresses      []string  `json:"coinbaseAddresses"`
	CoinbaseSignature      *string   `json:"coinbaseSignature"`
	CoinbaseSignatureASCII string    `json:"coinbaseSignatureAscii"`
	VirtualSize            float64   `json:"virtualSize"`
	AvgTxSize              float64   `json:"avgTxSize"`
	TotalInputs            int       `json:"totalInputs"`
	TotalOutputs           int       `json:"totalOutputs"`
	TotalOutputAmt         uint64    `json:"totalOutputAmt"`
	MedianFeeAmt           uint64    `json:"medianFeeAmt"`
	FeePercentiles         [7]uint64 `json:"feePercentiles"`
	SegwitTotalTxs         int       `json:"segwitTotalTxs"`
	SegwitTotalSize        int       `json:"segwitTotalSize"`
	SegwitTotalWeight      int       `json:"segwitTotalWeight"`
	Header                 string    `json:"header"`
	UtxoSetChange          int       `json:"utxoSetChange"`
	UtxoSetSize            *uint64   `json:"utxoSetSize"`
	TotalInputAmt          uint64    `json:"totalInputAmt"`
	MatchRate              *float64  `json:"matchRate"`
	ExpectedFees           *uint64   `json:"expectedFees"`
	ExpectedWeight         *uint64   `json:"expectedWeight"`
	FirstSeen              *int64    `json:"firstSeen"`
}

// poolRef is mempool.space's pool of a block; without its pool list every
// block is its "Unknown" pool.
type poolRef struct {
	ID         int       `json:"id"`
	Name       string    `json:"name"`
	Slug       string    `json:"slug"`
	MinerNames *[]string `json:"minerNames"`
}

var unknownPool = poolRef{ID: 0, Name: "Unknown", Slug: "unknown"}

// extendedBlock renders the block at height with its extras.
func (s *Server) extendedBlock(ctx context.Context, height uint32) (*blockExtended, error) {
	q := s.caps.ChainStats
	if q == nil {
		return nil, mpError(http.StatusNotFound, s.caps.NotSupported(api.CapChainStats).Error())
	}
	b, err := s.blockAt(ctx, uint64(height))
	if err != nil {
		return nil, err
	}
	st, err := q.BlockStats(ctx, height)
	if err != nil {
		return nil, err
	}
	if st == nil || st.Hash != b.Hash { // a block connected between the two reads
		return nil, mpError(http.StatusNotFound, "Failed to get block")
	}
	return &blockExtended{blockValue: blockValueOf(b), Extras: s.extrasOf(b, st)}, nil
}

func (s *Server) extrasOf(b *api.EsploraBlock, st *api.BlockStats) blockExtras {
	e := blockExtras{
		Reward: st.Reward, Pool: unknownPool, CoinbaseRaw: hex.EncodeToString(st.CoinbaseScriptSig),
		Orphans: []string{}, CoinbaseAddresses: []string{}, CoinbaseSignatureASCII: latin1(st.CoinbaseScriptSig),
		VirtualSize: float64(b.Weight) / 4, FeePercentiles: st.FeeAmounts, MedianFeeAmt: st.FeeAmounts[3],
		Header: hex.EncodeToString(headerBytes(b)), TotalInputAmt: st.TotalIn,
	}
	seen := map[string]bool{}
	for i, script := range st.CoinbaseOutputs {
		o := s.outValue(script, 0)
		if i == 0 {
			asm := o.ScriptpubkeyAsm
			e.CoinbaseSignature = &asm
			if o.ScriptpubkeyAddress != "" {
				addr := o.ScriptpubkeyAddress
				e.CoinbaseAddress = &addr
			}
		}
		if a := o.ScriptpubkeyAddress; a != "" && !seen[a] {
			seen[a] = true
			e.CoinbaseAddresses = append(e.CoinbaseAddresses, a)
		}
	}
	if b.Height == 0 { // mempool.space's fixed figures for the genesis block
		e.TotalOutputs = 1
		return e
	}
	p := st.FeeRatePercentiles
	e.MedianFee = p[2]
	e.FeeRange = [7]uint64{st.MinFeeRate, p[0], p[1], p[2], p[3], p[4], st.MaxFeeRate}
	e.TotalFees, e.AvgFee, e.AvgFeeRate, e.UtxoSetChange = st.TotalFee, st.AvgFee, st.AvgFeeRate, st.UtxoIncrease
	e.AvgTxSize = math.Floor(float64(st.TotalSize)/float64(st.Txs)*100+0.5) * 0.01
	e.TotalInputs, e.TotalOutputs, e.TotalOutputAmt = st.Ins, st.Outs, st.TotalOut
	e.SegwitTotalTxs, e.SegwitTotalSize, e.SegwitTotalWeight = st.SwTxs, st.SwTotalSize, st.SwTotalWeight
	return e
}

// latin1 reads each byte as one character (mempool.space's hex2ascii).
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// mpBlock answers /v1/block/:hash.
func (s *Server) mpBlock(ctx context.Context, hashText string) (*reply, error) {
	if !blockHashRE.MatchString(hashText) {
		return nil, mpError(http.StatusBadRequest, "Invalid block hash")
	}
	hash, err := parseHash(strings.ToLower(hashText))
	if err != nil {
		return nil, mpError(http.StatusBadRequest, "Invalid block hash")
	}
	height, found, err := s.q.EsploraBlockHeight(ctx, hash)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, mpError(http.StatusNotFound, "Failed to get block")
	}
	b, err := s.extendedBlock(ctx, height)
	if err != nil {
		return nil, err
	}
	return jsonReply(b)
}

// mpBlocks answers /v1/blocks[/:height]: 15 blocks from height (the tip
// when absent) down. As mempool.space, a start above the tip shortens the
// page by the blocks that do not exist yet, and a negative one gives [].
func (s *Server) mpBlocks(ctx context.Context, start string, hasStart bool) (*reply, error) {
	tipH, _, ok, err := s.q.EsploraTip(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, mpError(http.StatusServiceUnavailable, "Service Temporarily Unavailable")
	}
	from, limit := int64(tipH), int64(mpBlocksPerPage)
	if hasStart {
		if from, ok = parseIntPrefix(start); !ok {
			return nil, mpError(http.StatusBadRequest, "Invalid block height")
		}
	}
	if from > int64(tipH) {
		limit -= from - int64(tipH)
		from = int64(tipH)
	}
	out := []*blockExtended{}
	for i := int64(0); i < limit && from >= 0; i, from = i+1, from-1 {
		b, err := s.extendedBlock(ctx, uint32(from))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return jsonReply(out)
}

// parseIntPrefix is JavaScript's parseInt(s, 10): optional blanks and sign,
// then the leading digits; false when there are none.
func parseIntPrefix(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	end := 0
	for end < len(s) && end < 18 && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// difficultyAdjustmentValue is mempool.space's difficulty-adjustment.
type difficultyAdjustmentValue struct {
	ProgressPercent       float64 `json:"progressPercent"`
	DifficultyChange      float64 `json:"difficultyChange"`
	EstimatedRetargetDate int64   `json:"estimatedRetargetDate"`
	RemainingBlocks       int64   `json:"remainingBlocks"`
	RemainingTime         int64   `json:"remainingTime"`
	PreviousRetarget      float64 `json:"previousRetarget"`
	PreviousTime          int64   `json:"previousTime"`
	NextRetargetHeight    int64   `json:"nextRetargetHeight"`
	TimeAvg               int64   `json:"timeAvg"`
	AdjustedTimeAvg       int64   `json:"adjustedTimeAvg"`
	TimeOffset            int64   `json:"timeOffset"`
	ExpectedBlocks        float64 `json:"expectedBlocks"`
}

// difficultyAdjustment answers /v1/difficulty-adjustment at the server's
// clock.
func (s *Server) difficultyAdjustment(ctx context.Context) (*reply, error) {
	d, err := s.daValue(ctx)
	if err != nil {
		return nil, err
	}
	return jsonReply(d)
}

// daValue is mempool.space's difficulty adjustment at the server's clock.
func (s *Server) daValue(ctx context.Context) (*difficultyAdjustmentValue, error) {
	q := s.caps.ChainStats
	if q == nil {
		return nil, mpError(http.StatusNotFound, s.caps.NotSupported(api.CapChainStats).Error())
	}
	e, err := q.DifficultyEpoch(ctx)
	if errors.Is(err, api.ErrNotSupported) {
		return nil, mpError(http.StatusNotFound, "Difficulty adjustment is not available: this coin has no fixed retarget interval")
	}
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, mpError(http.StatusServiceUnavailable, "Service Temporarily Unavailable")
	}
	d := difficultyAdjustmentValue(api.CalcDifficultyAdjustment(e, s.opts.Now().Unix()))
	return &d, nil
}
