package pushdata

import (
	"fmt"

	"github.com/openexplorer/blockbook/db"
)

// Name is the index's name and state key (db.OptionalIndex).
const Name = "pushdata"

// Index is the pushdata index. Its rows come from scripts and witnesses,
// which the core index does not keep, so disconnecting a block reads the
// node's copy of it (db.NodeBlockReader).
type Index struct{}

var (
	_ db.OptionalIndex   = Index{}
	_ db.NodeBlockReader = Index{}
)

func (Index) Name() string         { return Name }
func (Index) CFs() []db.CF         { return []db.CF{db.CFPushdata} }
func (Index) ReadsNodeBlock() bool { return true }

// ConnectBlock puts a row per indexed push of the block.
func (Index) ConnectBlock(w db.RowWriter, b *db.OptionalBlock) error {
	return blockRows(b, func(k []byte) { w.Put(db.CFPushdata, k, nil) })
}

// DisconnectBlock deletes the rows ConnectBlock put for the same block.
func (Index) DisconnectBlock(w db.RowWriter, b *db.OptionalBlock) error {
	return blockRows(b, func(k []byte) { w.Delete(db.CFPushdata, k) })
}

// blockRows calls row with the key of every indexed push of the block,
// in block order. The spent outputs' scripts are the resolved prevouts'
// descriptors (db.OptionalBlock).
func blockRows(b *db.OptionalBlock, row func(k []byte)) error {
	blk, ib := b.Block, b.Indexed
	if blk == nil {
		return fmt.Errorf("block %d: no node block to read the scripts of", ib.Height)
	}
	if len(blk.Txs) != len(ib.Txs) {
		return fmt.Errorf("block %d: %d txs, indexed form has %d", ib.Height, len(blk.Txs), len(ib.Txs))
	}
	for i := range blk.Txs {
		itx := &ib.Txs[i]
		prev := func(j int) []byte {
			if j < len(itx.Inputs) {
				return itx.Inputs[j].Desc
			}
			return nil
		}
		for _, p := range TxPushes(&blk.Txs[i], prev) {
			row(rowKey(Ref{Hash: p.Hash, Height: ib.Height, Index: uint32(i), N: p.N, Input: p.Input}))
		}
	}
	return nil
}

// Find lists the rows of hash in r, oldest first, at most limit of them;
// more reports that rows were left out.
func Find(r db.Reader, hash [32]byte, limit int) (refs []Ref, more bool, err error) {
	err = db.Iterate(r, db.CFPushdata, nil, hash[:], func(k, v []byte) (bool, error) {
		if len(refs) == limit {
			more = true
			return false, nil
		}
		ref, err := unpackRow(k, v)
		if err != nil {
			return false, err
		}
		refs = append(refs, ref)
		return true, nil
	})
	return refs, more, err
}
