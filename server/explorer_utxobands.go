package server

import (
	"context"
	"errors"
	"math/big"
	"net/http"

	"github.com/openexplorer/blockbook/api"
)

// explorerUtxoTxs bounds the addresses and accounts whose UTXO set the
// explorer summarises: listing the UTXOs resolves and orders each one,
// which for a few thousand txs stays near the chart's cost; a larger
// history gets a note (the REST utxo route still lists them all).
const explorerUtxoTxs = 5 * explorerChartTxs

// utxoBandCount is how many value bands the summary has: decades of the
// coin's base unit from 10^(decimals-5) (0.00001 of a coin) up, the first
// band from zero and the last open-ended.
const utxoBandCount = 9

// utxoBands summarises an address's or account's unspent outputs by
// value: how many fall in each decade, and how much they hold.
type utxoBands struct {
	Rows  []utxoBand
	Count int
	Total *api.Amount
	Note  string
}

// utxoBand is one value band [From, To) (To nil: no upper bound) with its
// outputs; the percentages size the bars against the largest row.
type utxoBand struct {
	From, To           *api.Amount
	Count              int
	Value              *api.Amount
	CountPct, ValuePct int
}

// utxoSummary reads the values of descriptor's UTXOs (confirmed and
// pending) and sums them into bands; nil where the chain has no UTXOs. A failure
// becomes a note, except a cancelled or timed-out request.
func (e *explorer) utxoSummary(r *http.Request, descriptor string, gap, txs int) (*utxoBands, error) {
	if e.caps.Utxos == nil {
		return nil, nil
	}
	if txs > explorerUtxoTxs {
		return &utxoBands{Note: "Too many transactions to summarise the unspent outputs here; the API's utxo route lists them."}, nil
	}
	var (
		n   int
		at  func(int, *big.Int) *big.Int
		err error
	)
	if vq, ok := e.caps.Utxos.(utxoValuer); ok {
		// The values alone: listing the UTXOs orders them, which reads
		// the address's txs of every block paying it more than once.
		var vs []uint64
		vs, err = vq.UtxoValues(r.Context(), descriptor, gap)
		n, at = len(vs), func(i int, z *big.Int) *big.Int { return z.SetUint64(vs[i]) }
	} else {
		var us []api.Utxo
		us, err = e.caps.Utxos.Utxos(r.Context(), descriptor, false, gap)
		n, at = len(us), utxoValueAt(us)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	if err != nil {
		e.log.Warn("utxo summary failed", "err", err)
		return &utxoBands{Note: "The unspent outputs are not available now."}, nil
	}
	d, _ := e.decimals()
	return bandsOfValues(n, at, d), nil
}

// utxoValuer is what api.UtxoService offers beyond UtxoQueries for the
// summary: the values of the same outputs, unordered.
type utxoValuer interface {
	UtxoValues(ctx context.Context, descriptor string, gap int) ([]uint64, error)
}

// bandsOf sums utxos into value bands, keeping the non-empty ones.
func bandsOf(utxos []api.Utxo, decimals int) *utxoBands {
	return bandsOfValues(len(utxos), utxoValueAt(utxos), decimals)
}

func utxoValueAt(us []api.Utxo) func(int, *big.Int) *big.Int {
	return func(i int, _ *big.Int) *big.Int { return amountInt(us[i].Value) }
}

// bandsOfValues sums n values into bands; at(i, scratch) is value i, in
// scratch or elsewhere (it is only read).
func bandsOfValues(n int, at func(int, *big.Int) *big.Int, decimals int) *utxoBands {
	edges := make([]*big.Int, utxoBandCount-1)
	for i := range edges {
		edges[i] = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(decimals-5+i, 0))), nil)
	}
	counts, sums := make([]int, utxoBandCount), make([]*big.Int, utxoBandCount)
	total := new(big.Int)
	for i := range sums {
		sums[i] = new(big.Int)
	}
	scratch := new(big.Int)
	for i := range n {
		v := at(i, scratch)
		b := 0
		for b < len(edges) && v.Cmp(edges[b]) >= 0 {
			b++
		}
		counts[b]++
		sums[b].Add(sums[b], v)
		total.Add(total, v)
	}
	out := &utxoBands{Count: n, Total: (*api.Amount)(total)}
	maxCount, maxSum := 0, new(big.Int)
	for b := range counts {
		maxCount = max(maxCount, counts[b])
		if sums[b].Cmp(maxSum) > 0 {
			maxSum = sums[b]
		}
	}
	for b := range counts {
		if counts[b] == 0 {
			continue
		}
		row := utxoBand{From: (*api.Amount)(new(big.Int)), Count: counts[b], Value: (*api.Amount)(sums[b]),
			CountPct: max(1, 100*counts[b]/maxCount)}
		if b > 0 {
			row.From = (*api.Amount)(edges[b-1])
		}
		if b < len(edges) {
			row.To = (*api.Amount)(edges[b])
		}
		if sums[b].Sign() > 0 {
			pct := new(big.Int).Div(new(big.Int).Mul(sums[b], big.NewInt(100)), maxSum)
			row.ValuePct = max(1, int(pct.Int64()))
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}
