package chaingen

import (
	"math/big"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/wire/v2"
)

// NetworkHashPs is Bitcoin Core's getnetworkhashps(lookup, last) over
// blocks (a chain from genesis), with btcd's CalcWork for each block's
// work: a judge of the index's hashrate figures written apart from them.
func NetworkHashPs(blocks []*wire.MsgBlock, lookup, last int) float64 {
	lookup = min(lookup, last)
	if last <= 0 || lookup <= 0 {
		return 0
	}
	lo, hi := blocks[last].Header.Timestamp.Unix(), blocks[last].Header.Timestamp.Unix()
	work := new(big.Int)
	for h := last - lookup; h < last; h++ {
		t := blocks[h].Header.Timestamp.Unix()
		lo, hi = min(lo, t), max(hi, t)
		work.Add(work, blockchain.CalcWork(blocks[h+1].Header.Bits))
	}
	if lo == hi {
		return 0
	}
	w, _ := new(big.Float).SetInt(work).Float64()
	return w / float64(hi-lo)
}
