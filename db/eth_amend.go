package db

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// A block whose trace failed is indexed without (some of) its internal
// transfers and listed in blockInternalDataErrors. RetryTraces fetches
// such blocks again and, when the trace now succeeds, amends the index to
// what a connect of the fully traced block would have written.

// TraceErrors lists the heights of blocks whose trace failed, oldest first.
func (x *EthIndex) TraceErrors() ([]uint32, error) {
	var hs []uint32
	err := x.db.iterate(CFBlockInternalDataErrors, nil, nil, func(k, _ []byte) (bool, error) {
		h, err := unpackHeightKey(k)
		if err != nil {
			return false, err
		}
		hs = append(hs, h)
		return true, nil
	})
	return hs, err
}

// RetryTraces fetches every block with a failed trace again (fetch is
// expected to trace it) and amends those that now come fully traced. Per
// block, the node is asked first (the block, then the metadata of
// contracts its traces reveal, see PrepareBlock), then the amend is
// built from the index alone and written at once. It returns how many
// were amended; a node error stops it with the block unchanged (the node
// is likely down: the next call tries again). A bulk round left pending
// is finished first, as before a connect (tipForWrite): the amend reads
// the round's rows, and its write is refused while the round is pending.
func (x *EthIndex) RetryTraces(ctx context.Context, fetch RefillFunc) (int, error) {
	if err := x.db.resumePending(); err != nil {
		return 0, err
	}
	hs, err := x.TraceErrors()
	if err != nil {
		return 0, err
	}
	amended := 0
	for _, h := range hs {
		meta, err := ReadBlockMeta(x.db, h)
		if err != nil {
			return amended, err
		}
		if meta == nil {
			return amended, fmt.Errorf("%w: trace error row for block %d, which is not indexed", ErrCorrupt, h)
		}
		blk, err := fetch(h, meta.Hash)
		if err != nil {
			return amended, fmt.Errorf("retrace block %d: %w", h, err)
		}
		if blk.Eth == nil || blk.Hash != meta.Hash || blk.Eth.TraceError != "" {
			continue
		}
		if err := x.PrepareBlock(ctx, blk); err != nil {
			return amended, fmt.Errorf("retrace block %d: %w", h, err)
		}
		if err := x.amendTraces(h, blk); err != nil {
			return amended, err
		}
		amended++
	}
	return amended, nil
}

// amendTraces rewrites block h's rows for its fully traced form blk,
// prepared (PrepareBlock), in one write.
func (x *EthIndex) amendTraces(h uint32, blk *bchain.Block) error {
	after := ethTxRecords(blk.Eth)
	// What was indexed: the same txs with the internal data stored then.
	before := make([]EthTxRecord, len(after))
	for i := range after {
		before[i] = after[i]
		before[i].Internal = nil
		id, err := ReadInternalData(x.db, after[i].Txid)
		if err != nil {
			return err
		}
		if id != nil {
			before[i].Internal = id.Transfers
		}
	}
	b := x.db.NewBatch()
	defer b.Destroy()
	replaceAddressRows(b, h, before, after)
	ac := x.newContractsCache()
	for i := range after { // gains first, so that no counter dips below zero
		if err := applyEthTxCounts(&after[i], 1, ac.load); err != nil {
			return err
		}
	}
	for i := range before {
		if err := applyEthTxCounts(&before[i], -1, ac.load); err != nil {
			return err
		}
	}
	ac.write(b)
	if err := x.replaceContractEvents(b, h, before, after, blk.Eth.Contracts, nil); err != nil {
		return err
	}
	for i := range blk.Eth.Txs {
		tx := &blk.Eth.Txs[i]
		if id := internalDataOf(tx); id != nil {
			b.put(CFInternalData, tx.Hash[:], packInternalData(id))
		} else {
			b.del(CFInternalData, tx.Hash[:])
		}
	}
	if undo, err := x.db.get(CFBlockTxs, heightKey(h)); err != nil {
		return err
	} else if undo != nil {
		b.put(CFBlockTxs, heightKey(h), packEthBlockUndo(&EthBlockUndo{Txs: after}))
	}
	b.del(CFBlockInternalDataErrors, heightKey(h))
	if err := x.db.write(b); err != nil {
		return err
	}
	ac.keep()
	return nil
}
