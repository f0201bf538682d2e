// Package mempool follows the node's mempool for Bitcoin-type chains: it
// loads it, keeps it current from the node's tx notifications and periodic
// diffs, resolves every input's address and value (from the index, or from
// other mempool txs for chains of unconfirmed txs), and indexes the txs by
// address descriptor so that the API can show unconfirmed data.
package mempool

import (
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// Tx is a mempool transaction with its inputs resolved. A *Tx is never
// modified once published: readers may keep it without locking.
type Tx struct {
	*bchain.Tx
	// FirstSeen is when this process first saw the tx (unix seconds); the
	// API shows it as the tx's blockTime.
	FirstSeen int64
	// Prevouts has one entry per input: what the input spends.
	Prevouts []Prevout
	// OutDescs has one entry per output: its address descriptor, nil for
	// outputs that are never indexed (OP_RETURN).
	OutDescs []bchain.AddrDesc
	// Filter is the tx's Golomb filter (mempool_golomb_filter_p); nil when
	// filters are off or no script qualified.
	Filter []byte
}

// Prevout is the output an input spends.
type Prevout struct {
	Desc  bchain.AddrDesc // nil for outputs without an address
	Value uint64
	// Known is false while the parent is neither indexed nor in the mempool
	// (e.g. confirmed in a block the index has not reached yet).
	Known bool
}

// Descs are the descriptors the tx spends from (inputs whose parent is
// known) and pays to, duplicates possible: what subscriptions match on.
func (t *Tx) Descs() []bchain.AddrDesc {
	descs := make([]bchain.AddrDesc, 0, len(t.Prevouts)+len(t.OutDescs))
	for _, p := range t.Prevouts {
		if p.Known && len(p.Desc) > 0 {
			descs = append(descs, p.Desc)
		}
	}
	for _, d := range t.OutDescs {
		if len(d) > 0 {
			descs = append(descs, d)
		}
	}
	return descs
}

// Fee returns the tx's fee, or false when an input is not resolved.
func (t *Tx) Fee() (uint64, bool) {
	var in, out uint64
	for _, p := range t.Prevouts {
		if !p.Known {
			return 0, false
		}
		in += p.Value
	}
	for _, o := range t.Vout {
		out += o.Value
	}
	if in < out {
		return 0, false
	}
	return in - out, true
}

// AddrTx is a mempool tx that touches an address descriptor.
type AddrTx struct {
	Txid      bchain.Hash
	FirstSeen int64
	// Indexes are the positions where the tx touches the descriptor, as
	// the index stores them: vout for outputs, ^vin for inputs.
	Indexes []int32
}

// Outpoint names a transaction output.
type Outpoint struct {
	Txid bchain.Hash
	Vout uint32
}

// Status is the mempool's state for the status endpoint.
type Status struct {
	// InSync is true once the first full load finished and the last
	// resync succeeded.
	InSync   bool
	LastSync time.Time // end of the last successful resync
	Size     int       // number of txs
}
