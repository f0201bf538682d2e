package db

import (
	"github.com/openexplorer/blockbook/bchain"
)

// heldBlock is a block the bulk loader has accepted but not yet indexed:
// while the block before it is indexed, the txAddresses rows of the
// outputs it spends that the UTXO cache lacks are read on another
// goroutine. Those reads were the largest part of block building once the
// unspent set outgrew the cache, and block building is the load's
// critical path.
type heldBlock struct {
	blk   *bchain.Block
	txids map[bchain.Hash]struct{} // the block's own txs
	reads *prevoutReads
}

// prevoutReads are the rows read ahead for one block: after done is
// closed, rows maps each txid read to its row (nil: not in the index).
type prevoutReads struct {
	done chan struct{}
	rows map[bchain.Hash]*TxAddresses
	err  error
	used int64 // inputs resolved from rows
}

// hold starts reading blk's prevouts ahead. The cache is checked now,
// before prev (the block held before blk, not yet indexed) adds its
// outputs, so the txs of prev and of blk itself are left to the cache and
// the block. An output the cache holds now may be gone when blk is
// indexed (its generation evicted meanwhile); resolve then reads it as
// before, so what is read ahead only saves reads.
func (l *BulkLoader) hold(blk *bchain.Block, prev *heldBlock) *heldBlock {
	h := &heldBlock{blk: blk, txids: make(map[bchain.Hash]struct{}, len(blk.Txs))}
	for i := range blk.Txs {
		h.txids[blk.Txs[i].Txid] = struct{}{}
	}
	var txids []bchain.Hash
	seen := map[bchain.Hash]bool{}
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		if tx.IsCoinbase() {
			continue
		}
		for j := range tx.Vin {
			txid := tx.Vin[j].PrevTxid
			if seen[txid] || l.madeBy(h, prev, txid) || l.cache.has(outpoint{txid, tx.Vin[j].PrevVout}) {
				continue
			}
			seen[txid] = true
			txids = append(txids, txid)
		}
	}
	h.reads = &prevoutReads{done: make(chan struct{})}
	if len(txids) == 0 {
		close(h.reads.done)
		return h
	}
	go h.reads.read(l.x.db, txids)
	return h
}

// madeBy reports whether txid is one of the held blocks' txs.
func (l *BulkLoader) madeBy(h, prev *heldBlock, txid bchain.Hash) bool {
	if _, ok := h.txids[txid]; ok {
		return true
	}
	if prev == nil {
		return false
	}
	_, ok := prev.txids[txid]
	return ok
}

func (p *prevoutReads) read(d *DB, txids []bchain.Hash) {
	defer close(p.done)
	rows, err := ReadManyTxOutputs(uncachedReader{d}, txids)
	if err != nil {
		p.err = err
		return
	}
	p.rows = make(map[bchain.Hash]*TxAddresses, len(txids))
	for i, txid := range txids {
		p.rows[txid] = rows[i]
	}
}

// wait returns once the reads are done, with their error.
func (p *prevoutReads) wait() error {
	if p == nil {
		return nil
	}
	<-p.done
	return p.err
}

// prevout returns the output txid:vout from the rows read ahead (false:
// not read, or not there). p may be nil: nothing was read ahead.
func (p *prevoutReads) prevout(txid bchain.Hash, vout uint32) (IndexedInput, bool) {
	if p == nil {
		return IndexedInput{}, false
	}
	in, ok := spentOutput(p.rows[txid], txid, vout)
	if ok {
		p.used++
	}
	return in, ok
}
