package api

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// ChainStatsQueries answers statistics of the active chain that no single
// record holds: a block's Bitcoin Core getblockstats figures (what
// mempool.space's block "extras" are made of) and the state of the
// difficulty epoch. Bitcoin-type services offer it; any front may render
// it (today mempool.space's /api/v1 on the Esplora listener).
type ChainStatsQueries interface {
	// BlockStats computes the statistics of the active chain's block at
	// height; nil (no error) above the tip.
	BlockStats(ctx context.Context, height uint32) (*BlockStats, error)
	// DifficultyEpoch reads the headers the difficulty adjustment is
	// computed from; nil (no error) before the first block, and
	// ErrNotSupported when the coin has no fixed retarget interval.
	DifficultyEpoch(ctx context.Context) (*DifficultyEpoch, error)
	// BlockAtTime is the block with the latest time at or before ts (Unix
	// seconds); nil (no error) when there is none.
	BlockAtTime(ctx context.Context, ts int64) (*MiningBlock, error)
	// MiningBlocks reads the blocks from a margin below the first one at
	// or after since (0: genesis) up to the tip.
	MiningBlocks(ctx context.Context, since int64) ([]MiningBlock, error)
}

var _ ChainStatsQueries = (*UtxoService)(nil)

// BlockStats are a block's figures as Bitcoin Core's getblockstats defines
// them (the coinbase left out of every sum but Outs and Txs), with what
// mempool.space adds from the coinbase and its block summaries.
type BlockStats struct {
	Height uint32
	Hash   bchain.Hash
	Txs    int
	// Ins counts the inputs of the non-coinbase txs, Outs every output.
	Ins, Outs int
	// TotalOut sums the non-coinbase outputs; TotalIn their prevouts.
	TotalOut, TotalIn uint64
	// TotalSize and TotalWeight sum the non-coinbase txs.
	TotalSize, TotalWeight int
	TotalFee               uint64
	// AvgFee is TotalFee / (Txs-1) and AvgFeeRate TotalFee*4/TotalWeight,
	// both truncated as Core does.
	AvgFee, AvgFeeRate uint64
	// Fee rates are each tx's fee*4/weight, truncated (sat/vB); the
	// percentiles (10, 25, 50, 75, 90) are by weight.
	MinFeeRate, MaxFeeRate uint64
	FeeRatePercentiles     [5]uint64
	// SwTxs, SwTotalSize and SwTotalWeight cover the txs with a witness.
	SwTxs, SwTotalSize, SwTotalWeight int
	// UtxoIncrease is Outs - Ins.
	UtxoIncrease int
	// FeeAmounts are mempool.space's fee percentiles in satoshis (min, 10,
	// 25, 50, 75, 90, max) over the non-coinbase txs, by tx count.
	FeeAmounts [7]uint64
	// Reward sums the coinbase's outputs.
	Reward uint64
	// CoinbaseScriptSig is the coinbase input's script, CoinbaseOutputs
	// the scripts of its outputs.
	CoinbaseScriptSig []byte
	CoinbaseOutputs   [][]byte
}

// statsCacheSize bounds the block statistics kept in memory (a few hundred
// bytes each): enough for the pages of recent blocks clients poll.
const statsCacheSize = 2048

// statsCache keeps block statistics by block hash: a block never changes,
// and a reorg gives the replacing block another hash. Oldest out first.
type statsCache struct {
	mu    sync.Mutex
	m     map[bchain.Hash]*BlockStats
	order []bchain.Hash
	next  int
}

func (c *statsCache) get(h bchain.Hash) *BlockStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[h]
}

func (c *statsCache) put(st *BlockStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[bchain.Hash]*BlockStats, statsCacheSize)
		c.order = make([]bchain.Hash, statsCacheSize)
	}
	if _, ok := c.m[st.Hash]; ok {
		return
	}
	if old := c.order[c.next]; len(c.m) >= statsCacheSize {
		delete(c.m, old)
	}
	c.order[c.next] = st.Hash
	c.next = (c.next + 1) % statsCacheSize
	c.m[st.Hash] = st
}

// BlockStats computes (or recalls) the statistics of the block at height:
// every tx of the block from the node, each input's value from the index.
func (s *UtxoService) BlockStats(ctx context.Context, height uint32) (*BlockStats, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	meta, err := db.ReadBlockMeta(v.snap, height)
	if err != nil || meta == nil {
		return nil, err
	}
	if st := s.stats.get(meta.Hash); st != nil {
		return st, nil
	}
	blk, err := s.backend.Chain.Block(ctx, meta.Hash, height)
	if err != nil {
		return nil, fmt.Errorf("block %d: %w", height, err)
	}
	st := &BlockStats{Height: height, Hash: meta.Hash, Txs: len(blk.Txs)}
	fees, rates := make([]uint64, 0, len(blk.Txs)), make([]weightedRate, 0, len(blk.Txs))
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		w := tx.Weight()
		st.Outs += len(tx.Vout)
		if tx.IsCoinbase() {
			st.addCoinbase(tx)
			continue
		}
		in, err := inputValue(v, tx, height)
		if err != nil {
			return nil, err
		}
		fee := st.addTx(tx, w, in)
		fees = append(fees, fee)
		rates = append(rates, weightedRate{rate: fee * 4 / uint64(max(w, 1)), weight: w})
	}
	st.finish(fees, rates)
	s.stats.put(st)
	return st, nil
}

// inputValue sums the outputs a confirmed tx spends (the index's record).
func inputValue(v *view, tx *bchain.Tx, height uint32) (uint64, error) {
	ta, err := db.ReadTxAddresses(v.snap, tx.Txid)
	if err != nil {
		return 0, err
	}
	if ta == nil {
		return 0, fmt.Errorf("%w: tx %s of block %d not indexed", db.ErrCorrupt, tx.Txid, height)
	}
	var in uint64
	for _, x := range ta.Inputs {
		in += x.Value
	}
	return in, nil
}

func (st *BlockStats) addCoinbase(tx *bchain.Tx) {
	st.CoinbaseScriptSig = tx.Vin[0].ScriptSig
	for _, o := range tx.Vout {
		st.Reward += o.Value
		st.CoinbaseOutputs = append(st.CoinbaseOutputs, o.Script)
	}
}

// addTx counts a non-coinbase tx of weight w whose inputs spend in; it
// answers the tx's fee.
func (st *BlockStats) addTx(tx *bchain.Tx, w int, in uint64) uint64 {
	var out uint64
	for _, o := range tx.Vout {
		out += o.Value
	}
	fee := in - min(in, out)
	st.Ins += len(tx.Vin)
	st.TotalOut += out
	st.TotalIn += in
	st.TotalSize += tx.Size
	st.TotalWeight += w
	st.TotalFee += fee
	for i := range tx.Vin {
		if len(tx.Vin[i].Witness) > 0 {
			st.SwTxs++
			st.SwTotalSize += tx.Size
			st.SwTotalWeight += w
			break
		}
	}
	return fee
}

type weightedRate struct {
	rate   uint64
	weight int
}

// finish derives the averages and percentiles once every tx is counted.
func (st *BlockStats) finish(fees []uint64, rates []weightedRate) {
	st.UtxoIncrease = st.Outs - st.Ins
	if len(fees) == 0 {
		return
	}
	st.AvgFee = st.TotalFee / uint64(len(fees))
	if st.TotalWeight > 0 {
		st.AvgFeeRate = st.TotalFee * 4 / uint64(st.TotalWeight)
	}
	sort.SliceStable(rates, func(i, j int) bool { return rates[i].rate < rates[j].rate })
	st.MinFeeRate, st.MaxFeeRate = rates[0].rate, rates[len(rates)-1].rate
	st.FeeRatePercentiles = percentilesByWeight(rates, st.TotalWeight)
	sort.Slice(fees, func(i, j int) bool { return fees[i] < fees[j] })
	n := len(fees)
	at := func(q float64) uint64 { return fees[max(0, int(float64(n)*q)-1)] }
	st.FeeAmounts = [7]uint64{fees[0], at(0.1), at(0.25), at(0.5), at(0.75), at(0.9), fees[n-1]}
}

// percentilesByWeight is Core's CalculatePercentilesByWeight: the rate at
// which the cumulative weight of the sorted txs first reaches 10, 25, 50,
// 75 and 90 % of the total.
func percentilesByWeight(sorted []weightedRate, total int) [5]uint64 {
	t := float64(total)
	bounds := [5]float64{t / 10, t / 4, t / 2, t * 3 / 4, t * 9 / 10}
	var out [5]uint64
	next, cum := 0, 0
	for _, r := range sorted {
		cum += r.weight
		for next < len(bounds) && float64(cum) >= bounds[next] {
			out[next] = r.rate
			next++
		}
	}
	for ; next < len(bounds); next++ {
		out[next] = sorted[len(sorted)-1].rate
	}
	return out
}
