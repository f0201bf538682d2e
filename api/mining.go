package api

import (
	"context"
	"fmt"
	"math/big"
	"sort"

	"github.com/btcsuite/btcd/blockchain"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// MiningBlock is what mempool.space's mining routes read of a block.
type MiningBlock struct {
	Height uint32
	Hash   bchain.Hash
	Time   int64
	Bits   uint32
}

// miningMargin is how far below the first block the time search finds
// the blocks of a hashrate window are read: getnetworkhashps looks up to
// a day of blocks below a day's last block, and block times may run a
// little out of order.
const miningMargin = 2016

// tipView opens a view of the index; nil (and no error) before its first
// block.
func (s *UtxoService) tipView() (*view, error) {
	v, err := s.newView()
	if err != nil || v.hasTip {
		return v, err
	}
	v.release()
	return nil, nil
}

func miningBlockOf(v *view, h uint32) (MiningBlock, error) {
	m, err := db.ReadBlockMeta(v.snap, h)
	if err != nil {
		return MiningBlock{}, err
	}
	if m == nil {
		return MiningBlock{}, fmt.Errorf("%w: no block %d below the tip %d", db.ErrCorrupt, h, v.tip.Height)
	}
	return MiningBlock{Height: h, Hash: m.Hash, Time: m.Time, Bits: headerBits(m.Header)}, nil
}

// lastBefore is the highest height whose previous block's median time
// past is below ts (0, genesis, when none is). Median time past
// never decreases and a block's time is above its parent's, so no block
// above it has a time at or below ts.
func lastBefore(v *view, ts int64) (int64, error) {
	var err error
	n := sort.Search(int(v.tip.Height)+1, func(h int) bool {
		if h == 0 || err != nil {
			return false
		}
		var mtp int64
		mtp, err = medianTime(v, uint32(h-1))
		return mtp >= ts
	})
	return int64(n) - 1, err
}

// BlockAtTime is mempool.space's mining/blocks/timestamp: the block with
// the latest time at or before ts (the highest on a tie); nil when every
// block is later. Blocks older than the search's window of a day's worth
// below the last candidate are not looked at (their time would have to
// run a day ahead of the chain).
func (s *UtxoService) BlockAtTime(_ context.Context, ts int64) (*MiningBlock, error) {
	v, err := s.tipView()
	if v == nil {
		return nil, err
	}
	defer v.release()
	top, err := lastBefore(v, ts)
	if err != nil {
		return nil, err
	}
	var best *MiningBlock
	for h := top; h >= 0 && h > top-144; h-- {
		b, err := miningBlockOf(v, uint32(h))
		if err != nil {
			return nil, err
		}
		if b.Time <= ts && (best == nil || b.Time > best.Time) {
			best = &b
		}
	}
	return best, nil
}

// MiningBlocks (Bitcoin and Litecoin only) reads the blocks from a margin below the first one at or
// after since (Unix seconds; 0: from genesis) up to the tip, in height
// order; nil before the first block.
func (s *UtxoService) MiningBlocks(_ context.Context, since int64) ([]MiningBlock, error) {
	// The coins that opt in to Bitcoin's retarget rule have its header
	// layout and work; others (Zcash's header, merged mining) would give
	// wrong figures.
	if p := s.backend.Params; p.RetargetBlocks == 0 {
		return nil, fmt.Errorf("%w: %s has no fixed retarget interval", ErrNotSupported, p.Name)
	}
	v, err := s.tipView()
	if v == nil {
		return nil, err
	}
	defer v.release()
	from := int64(0)
	if since > 0 {
		if from, err = lastBefore(v, since); err != nil {
			return nil, err
		}
		from = max(0, from-miningMargin)
	}
	out := make([]MiningBlock, 0, int64(v.tip.Height)-from+1)
	for h := from; h <= int64(v.tip.Height); h++ {
		b, err := miningBlockOf(v, uint32(h))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// BlockWork is Bitcoin Core's GetBlockProof, 2^256 / (target+1), as
// btcd's CalcWork computes it: 0 for a negative or zero target, and an
// overflowing target (≥ 2^256) gives 0 as well. A new value.
func BlockWork(bits uint32) *big.Int { return blockchain.CalcWork(bits) }

// coreDouble is arith_uint256::getdouble: the 32-bit words summed in
// doubles from the lowest, which rounds as Core does.
func coreDouble(n *big.Int) float64 {
	ret, fact := 0.0, 1.0
	w := new(big.Int).Set(n)
	mask := big.NewInt(0xffffffff)
	for range 8 {
		ret += fact * float64(new(big.Int).And(w, mask).Uint64())
		fact *= 4294967296.0
		w.Rsh(w, 32)
	}
	return ret
}

// CoreDifficulty is Bitcoin Core's GetDifficulty: the 0x1d00ffff target
// over the block's, in doubles.
func CoreDifficulty(bits uint32) float64 {
	shift := int(bits >> 24 & 0xff)
	mant := bits & 0x00ffffff
	if mant == 0 {
		return 0
	}
	d := float64(0xffff) / float64(mant)
	for ; shift < 29; shift++ {
		d *= 256
	}
	for ; shift > 29; shift-- {
		d /= 256
	}
	return d
}
