package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/mempool/projected"
)

// MempoolProjection is the mempool's projected blocks (mempool.Projection).
type MempoolProjection interface {
	Snapshot() *projected.Snapshot
	// Current is false while the projection does not follow the node's
	// mempool (not loaded yet, resyncs failing).
	Current() bool
	// Cpfp describes a tx of the projection; false when it holds none.
	Cpfp(txid bchain.Hash) (projected.Cpfp, bool)
}

// MempoolBlock and RecommendedFees are the projection's answers, named here
// for the fronts, which reach the mempool only through api.
type (
	MempoolBlock    = projected.MempoolBlock
	RecommendedFees = projected.RecommendedFees
)

// ProjectedFeeQueries answers fee questions from the projected blocks of
// our own mempool: mempool.space's fees/mempool-blocks, fees/recommended
// and fees/precise, and the rates Electrum's fee histogram bins.
type ProjectedFeeQueries interface {
	MempoolBlocks(ctx context.Context) ([]projected.MempoolBlock, error)
	RecommendedFees(ctx context.Context, precise bool) (*projected.RecommendedFees, error)
	// Projection is the latest projection (Electrum bins its TxRates,
	// once per snapshot).
	Projection(ctx context.Context) (ProjectedSnapshot, error)
	Cpfp(ctx context.Context, txid string) (*CpfpInfo, error)
	// MempoolSummary is the projection's size and the node's minimum fee
	// (mempool.space's mempoolInfo).
	MempoolSummary(ctx context.Context) (*MempoolSummary, error)
	// TxPositions places mempool txs in the projected blocks; txs in no
	// block are left out.
	TxPositions(ctx context.Context, txids map[bchain.Hash]struct{}) (map[bchain.Hash]TxPosition, error)
	// ProjectedBlockTxs lists projected block i's txs in block order; nil
	// past the last block.
	ProjectedBlockTxs(ctx context.Context, i int) ([]ProjectedTx, error)
}

// ProjectedTx is a tx of a projected block, with mempool.space's figures
// (its TransactionStripped): vsize is weight / 4, rate the effective rate
// of its package in sat/vB; value and time (first seen) come from the
// mempool, 0 for a tx it no longer holds.
type ProjectedTx struct {
	Txid  bchain.Hash
	Fee   uint64
	VSize float64
	Value uint64
	Rate  float64
	Time  int64
	// Flags are mempool.space's classification bits (mempool.Tx.Flags,
	// with CPFP parent and child from the pool); 0 for a tx the mempool
	// no longer holds.
	Flags uint64
}

// TxPosition is mempool.space's position of a mempool tx: its projected
// block, and the vbytes before its middle in that block.
type TxPosition = projected.Position

// MempoolSummary is what the projection knows of the whole mempool: its
// txs with resolved fees (Size), their vbytes and fees, and the node's
// minimum fee in sat/kvB.
type MempoolSummary struct {
	Size     int
	VBytes   float64
	TotalFee uint64
	MinFee   int64
}

// ProjectedSnapshot is one projection of the mempool (a
// *projected.Snapshot): the same value until the next projection.
type ProjectedSnapshot interface {
	// TxRates lists the txs at the rates they are mined at.
	TxRates() []projected.TxRate
	// FeeHistogram is the mempool's vsize by fee rate, in power-of-two
	// bins (the explorer's histogram).
	FeeHistogram() [][2]uint64
}

// CpfpInfo is mempool.space's cpfp/:txid. A tx not in the mempool has
// only an empty ancestors list (mempool.space without its database).
type CpfpInfo struct {
	Ancestors []CpfpRelative `json:"ancestors"`
	// BestDescendant is always null, as mempool.space sends it now.
	BestDescendant       json.RawMessage `json:"bestDescendant,omitempty"`
	Descendants          *[]CpfpRelative `json:"descendants,omitempty"`
	EffectiveFeePerVsize *float64        `json:"effectiveFeePerVsize,omitempty"`
	Sigops               *uint32         `json:"sigops,omitempty"`
	Fee                  *uint64         `json:"fee,omitempty"`
	AdjustedVsize        *uint32         `json:"adjustedVsize,omitempty"`
}

// CpfpRelative is an ancestor or descendant in CpfpInfo.
type CpfpRelative struct {
	Txid   string `json:"txid"`
	Weight uint32 `json:"weight"`
	Fee    uint64 `json:"fee"`
}

// projectedFees is ProjectedFeeQueries over a projection; minFee is the
// node's mempool minimum fee, the recommendations' floor.
type projectedFees struct {
	p      MempoolProjection
	minFee bchain.MinFeeSource
	pool   Mempool // nil: no values and times in ProjectedBlockTxs
}

var _ ProjectedFeeQueries = projectedFees{}

// snapshot is the latest projection, or an error that fronts answer as
// "the node is not responding" while it does not follow the node.
func (f projectedFees) snapshot() (*projected.Snapshot, error) {
	if !f.p.Current() {
		return nil, fmt.Errorf("the mempool does not follow the node now: %w", bchain.ErrNodeUnavailable)
	}
	return f.p.Snapshot(), nil
}

func (f projectedFees) MempoolBlocks(context.Context) ([]projected.MempoolBlock, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	return s.MempoolBlocks(), nil
}

// withMinFee is the latest projection and the node's minimum fee in
// sat/kvB.
func (f projectedFees) withMinFee(ctx context.Context) (*projected.Snapshot, int64, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, 0, err
	}
	perKvB, err := f.minFee.MempoolMinFee(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("minimum fee: %w", err)
	}
	return s, perKvB, nil
}

func (f projectedFees) RecommendedFees(ctx context.Context, precise bool) (*projected.RecommendedFees, error) {
	s, perKvB, err := f.withMinFee(ctx)
	if err != nil {
		return nil, err
	}
	minFee := float64(perKvB) / 1000 // sat/vB
	r := s.RecommendedFees(minFee)
	if precise {
		r = s.PreciseFees(minFee)
	}
	return &r, nil
}

func (f projectedFees) Projection(context.Context) (ProjectedSnapshot, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Cpfp answers cpfp/:txid: a mempool tx's in-mempool ancestors, the txs
// that go into a block in its package (descendants), and the rate it is
// mined at in the projection.
func (f projectedFees) Cpfp(_ context.Context, txid string) (*CpfpInfo, error) {
	h, err := bchain.ParseHash(txid)
	if err != nil {
		return nil, userErr("Invalid transaction ID")
	}
	if _, err := f.snapshot(); err != nil {
		return nil, err
	}
	c, ok := f.p.Cpfp(h)
	if !ok {
		return &CpfpInfo{Ancestors: []CpfpRelative{}}, nil
	}
	relatives := func(rs []projected.Relative) []CpfpRelative {
		out := make([]CpfpRelative, len(rs))
		for i, r := range rs {
			out[i] = CpfpRelative{Txid: r.Txid.String(), Fee: r.Fee, Weight: r.Weight}
		}
		return out
	}
	descendants := relatives(c.Descendants)
	return &CpfpInfo{
		Ancestors: relatives(c.Ancestors), BestDescendant: json.RawMessage("null"), Descendants: &descendants,
		EffectiveFeePerVsize: &c.EffectiveFeePerVsize, Sigops: &c.Sigops, Fee: &c.Fee, AdjustedVsize: &c.AdjustedVsize,
	}, nil
}

func (f projectedFees) MempoolSummary(ctx context.Context) (*MempoolSummary, error) {
	s, perKvB, err := f.withMinFee(ctx)
	if err != nil {
		return nil, err
	}
	out := &MempoolSummary{Size: s.Count, MinFee: perKvB}
	for _, b := range s.MempoolBlocks() {
		out.VBytes += b.BlockVSize
		out.TotalFee += b.TotalFees
	}
	return out, nil
}

func (f projectedFees) TxPositions(_ context.Context, txids map[bchain.Hash]struct{}) (map[bchain.Hash]TxPosition, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	return s.Positions(txids), nil
}

func (f projectedFees) ProjectedBlockTxs(_ context.Context, i int) ([]ProjectedTx, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	txs := s.BlockTxs(i)
	if txs == nil {
		return nil, nil
	}
	out := make([]ProjectedTx, len(txs))
	for j, t := range txs {
		out[j] = ProjectedTx{Txid: t.Txid, Fee: t.Fee, VSize: float64(t.Weight) / 4, Rate: t.Rate}
		if f.pool == nil {
			continue
		}
		if tx, ok := f.pool.Tx(t.Txid); ok {
			out[j].Time = tx.FirstSeen
			for _, o := range tx.Vout {
				out[j].Value += o.Value
			}
			out[j].Flags = tx.Flags() | f.cpfpFlags(tx)
		}
	}
	return out, nil
}

// cpfpFlags are mempool.space's cpfp_child (a parent is pending) and
// cpfp_parent (a pending tx spends an output) bits.
func (f projectedFees) cpfpFlags(tx *mempool.Tx) uint64 {
	var fl uint64
	for i := range tx.Vin {
		if _, ok := f.pool.Tx(tx.Vin[i].PrevTxid); ok && !tx.Vin[i].Coinbase {
			fl |= mempool.FlagCpfpChild
			break
		}
	}
	for i := range tx.Vout {
		if _, _, ok := f.pool.SpentBy(mempool.Outpoint{Txid: tx.Txid, Vout: uint32(i)}); ok {
			fl |= mempool.FlagCpfpParent
			break
		}
	}
	return fl
}
