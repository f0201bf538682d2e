package silentpayments

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/internal/bip352"
)

// Name is the index's name and state key (db.OptionalIndex).
const Name = "silentPayments"

// Index is the Silent Payments tweak index. Connecting reads the node's
// block (scriptSigs and witnesses, which the core index does not keep);
// disconnecting needs only the indexed block, whose outputs say which txs
// can have a row.
type Index struct{}

var _ db.OptionalIndex = Index{}

func (Index) Name() string { return Name }
func (Index) CFs() []db.CF { return []db.CF{db.CFSilentPayments} }

// ConnectBlock puts the row of every eligible tx of the block.
func (Index) ConnectBlock(w db.RowWriter, b *db.OptionalBlock) error {
	blk, ib := b.Block, b.Indexed
	if blk == nil {
		return fmt.Errorf("block %d: no node block to read the inputs of", ib.Height)
	}
	if len(blk.Txs) != len(ib.Txs) {
		return fmt.Errorf("block %d: %d txs, indexed form has %d", ib.Height, len(blk.Txs), len(ib.Txs))
	}
	rows := make([]*Row, len(blk.Txs))
	parallelTxs(len(blk.Txs), func(i int) {
		if r, ok := TxRow(&blk.Txs[i], ib.Txs[i].Inputs); ok {
			r.Height, r.Index = ib.Height, uint32(i)
			rows[i] = &r
		}
	})
	for _, r := range rows {
		if r != nil {
			w.Put(db.CFSilentPayments, rowKey(r.Height, r.Index), packValue(r))
		}
	}
	return nil
}

// parallelMin is the fewest txs a block needs for its tweaks to be
// computed on several cores: an EC multiplication and a key decompression
// per input (about 0.1 ms a tx) outweigh the goroutines past it.
const parallelMin = 64

// parallelTxs calls fn for 0..n-1, on up to GOMAXPROCS goroutines when n
// is large; fn writes only its own slot.
func parallelTxs(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/parallelMin)
	if workers < 2 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// DisconnectBlock deletes the rows ConnectBlock put: those of the txs
// with a taproot output (a delete of a key never written changes nothing).
func (Index) DisconnectBlock(w db.RowWriter, b *db.OptionalBlock) error {
	ib := b.Indexed
	for i := range ib.Txs {
		for _, o := range ib.Txs[i].Outputs {
			if bip352.IsP2TR(o.Desc) {
				w.Delete(db.CFSilentPayments, rowKey(ib.Height, uint32(i)))
				break
			}
		}
	}
	return nil
}

// TxRow is the row of tx (Height and Index left zero) and whether it has
// one: a taproot output and a tweak (internal/bip352). prevouts are the
// resolved outputs its inputs spend (their descriptors are the output
// scripts; db.OptionalBlock).
func TxRow(tx *bchain.Tx, prevouts []db.IndexedInput) (Row, bool) {
	var r Row
	if tx.IsCoinbase() || len(prevouts) != len(tx.Vin) {
		return r, false
	}
	for n, o := range tx.Vout {
		if bip352.IsP2TR(o.Script) {
			r.Outputs = append(r.Outputs, Output{Vout: uint32(n), Value: o.Value})
		}
	}
	if len(r.Outputs) == 0 {
		return r, false
	}
	ins := make([]bip352.Input, len(tx.Vin))
	for j := range tx.Vin {
		in := &tx.Vin[j]
		ins[j] = bip352.Input{PrevTxid: in.PrevTxid, PrevVout: in.PrevVout, ScriptSig: in.ScriptSig,
			Witness: in.Witness, PrevScript: prevouts[j].Desc}
	}
	t, ok := bip352.Tweak(ins)
	r.Tweak = t
	return r, ok
}

// Tweak is an eligible tx of a block as the fronts serve it.
type Tweak struct {
	Index   uint32 // position in the block
	Tweak   [TweakLen]byte
	Outputs []Output
	Spent   []bool // Spent[i]: Outputs[i] is spent at the reader's tip
	// Highest is the highest value among the taproot outputs, spent or
	// not; Unspent the highest among the unspent ones (the cut-through
	// value) and Live whether any is unspent (an unspent output may be
	// worth 0).
	Highest, Unspent uint64
	Live             bool
}

// BlockTweaks lists the eligible txs of the block at height in block
// order, with their outputs' spent state as of r's tip: one scan of the
// block's rows and one of the spends rows of its outputs.
func BlockTweaks(r db.Reader, height uint32) ([]Tweak, error) {
	var out []Tweak
	err := db.Iterate(r, db.CFSilentPayments, nil, heightPrefix(height), func(k, v []byte) (bool, error) {
		row, err := unpackRow(k, v)
		if err != nil {
			return false, err
		}
		out = append(out, Tweak{Index: row.Index, Tweak: row.Tweak, Outputs: row.Outputs, Spent: make([]bool, len(row.Outputs))})
		return true, nil
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	at := make(map[uint32]int, len(out))
	for i, t := range out {
		at[t.Index] = i
	}
	err = db.SpentOutputsAt(r, height, func(index, vout uint32) {
		i, ok := at[index]
		if !ok {
			return
		}
		for j, o := range out[i].Outputs {
			if o.Vout == vout {
				out[i].Spent[j] = true
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		t := &out[i]
		for j, o := range t.Outputs {
			t.Highest = max(t.Highest, o.Value)
			if !t.Spent[j] {
				t.Unspent, t.Live = max(t.Unspent, o.Value), true
			}
		}
	}
	return out, nil
}
