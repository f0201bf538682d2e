package db

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/openexplorer/blockbook/bchain"
)

// EthIndex connects and disconnects Ethereum-type blocks, one atomic write
// per block holding its rows, its undo record and the new tip, or during
// catch-up several blocks per write (EthGroup, eth_group.go). Balances
// and nonces are not indexed: they come from the node. Whatever a block
// needs from the node is fetched first (PrepareBlock, refills, re-traces);
// building a block's rows then only reads the index.
type EthIndex struct {
	chainIndex
	contracts ContractSource
	// held keeps decoded addressContracts rows between blocks (the same
	// accounts recur block after block); see contractsCache.
	held heldRows
	// aliases finds address aliases in logs (nil: none kept); eth_alias.go.
	aliases AliasDecoder
	// group is the open EthGroup, if any (PrepareBlock reads its rows).
	group atomic.Pointer[EthGroup]
}

// NewEthIndex returns the Ethereum-type index over d, keeping undo records
// for the last keep blocks; contracts gives PrepareBlock the token
// metadata of contracts (nil: rows without metadata).
func NewEthIndex(d *DB, keep int, contracts ContractSource) *EthIndex {
	return &EthIndex{chainIndex: newChainIndex(d, keep), contracts: contracts}
}

func errNoEthData(blk *bchain.Block) error {
	return fmt.Errorf("block %d %s has no Ethereum data", blk.Height, blk.Hash)
}

// ConnectBlock indexes blk, which must extend the tip, in one atomic
// write. It asks the node nothing: the metadata of contracts the index
// meets for the first time comes with the block (PrepareBlock); a block
// without it fails with ErrNotPrepared and nothing is written.
func (x *EthIndex) ConnectBlock(blk *bchain.Block) error {
	if blk.Eth == nil {
		return errNoEthData(blk)
	}
	if x.group.Load() != nil {
		return fmt.Errorf("db: block %d connected beside an open group", blk.Height)
	}
	if err := x.checkNext(blk); err != nil {
		return err
	}
	b := x.db.NewBatch()
	defer b.Destroy()
	ac, err := x.putBlock(b, blk, nil)
	if err != nil {
		return err
	}
	writeTip(b, Tip{Height: blk.Height, Hash: blk.Hash})
	if err := x.db.write(b); err != nil {
		return err
	}
	ac.keep()
	return nil
}

// putBlock puts into b the rows of blk, which extends the tip, all but
// the tip; the rows a later block rewrites (addressContracts, contracts)
// are read from and left in g's pending rows when g is set.
func (x *EthIndex) putBlock(b *Batch, blk *bchain.Block, g *EthGroup) (*contractsCache, error) {
	recs := ethTxRecords(blk.Eth)
	b.put(CFHeight, heightKey(blk.Height), packBlockMeta(&BlockMeta{Hash: blk.Hash, Time: blk.Time,
		TxCount: uint32(len(blk.Eth.Txs)), Size: uint32(blk.Size)}))
	b.put(CFBlockTxs, heightKey(blk.Height), packEthBlockUndo(&EthBlockUndo{Txs: recs}))
	if blk.Height >= x.keep {
		b.del(CFBlockTxs, heightKey(blk.Height-x.keep))
	}
	ac, err := x.applyBlock(b, blk.Height, recs, 1, blk.Eth.Contracts, g)
	if err != nil {
		return nil, err
	}
	for i := range blk.Eth.Txs {
		tx := &blk.Eth.Txs[i]
		if id := internalDataOf(tx); id != nil {
			b.put(CFInternalData, tx.Hash[:], packInternalData(id))
		}
	}
	x.putAliases(b, blk.Height, blk.Eth)
	if blk.Eth.TraceError != "" {
		b.put(CFBlockInternalDataErrors, heightKey(blk.Height), []byte(truncateError(blk.Eth.TraceError)))
	}
	return ac, nil
}

// DisconnectTip removes the tip block, restoring every row to what it was
// before the block was connected; refill re-fetches the block entering
// the bottom of the rollback window, as for Bitcoin-type chains. The node
// is asked before the batch is built: a failing refill leaves the index
// as it was.
func (x *EthIndex) DisconnectTip(refill RefillFunc) (Tip, bool, error) {
	tip, ok, err := x.tipForWrite()
	if err != nil {
		return Tip{}, false, err
	}
	if !ok {
		return Tip{}, false, ErrEmptyIndex
	}
	h := tip.Height
	raw, err := x.db.get(CFBlockTxs, heightKey(h))
	if err != nil {
		return Tip{}, false, err
	}
	if raw == nil {
		return Tip{}, false, fmt.Errorf("%w: no undo record for block %d (window %d blocks)", ErrOutsideWindow, h, x.keep)
	}
	undo, err := unpackEthBlockUndo(raw)
	if err != nil {
		return Tip{}, false, err
	}
	var refilled *EthBlockUndo
	if h >= x.keep {
		if refilled, err = x.refillUndo(h-x.keep, refill); err != nil {
			return Tip{}, false, err
		}
	}
	b := x.db.NewBatch()
	defer b.Destroy()
	ac, err := x.applyBlock(b, h, undo.Txs, -1, nil, nil)
	if err != nil {
		return Tip{}, false, err
	}
	for i := range undo.Txs {
		b.del(CFInternalData, undo.Txs[i].Txid[:])
		b.del(CFTransactions, txCacheKey(undo.Txs[i].Txid))
	}
	b.del(CFHeight, heightKey(h))
	b.del(CFBlockTxs, heightKey(h))
	b.del(CFBlockInternalDataErrors, heightKey(h))
	if err := x.delAliases(b, h); err != nil {
		return Tip{}, false, err
	}
	if refilled != nil {
		b.put(CFBlockTxs, heightKey(h-x.keep), packEthBlockUndo(refilled))
	}
	newTip, ok, err := x.commitDisconnect(b, h)
	if err == nil {
		ac.keep()
	}
	return newTip, ok, err
}

// refillUndo fetches from the node the undo record of the indexed block
// at height.
func (x *EthIndex) refillUndo(height uint32, refill RefillFunc) (*EthBlockUndo, error) {
	meta, err := ReadBlockMeta(x.db, height)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("%w: no block at height %d", ErrCorrupt, height)
	}
	if refill == nil {
		return nil, fmt.Errorf("block %d is needed to refill the rollback window but no source was given", height)
	}
	blk, err := refill(height, meta.Hash)
	if err != nil {
		return nil, fmt.Errorf("refill rollback window with block %d: %w", height, err)
	}
	if blk.Hash != meta.Hash || blk.Eth == nil {
		return nil, fmt.Errorf("refill rollback window: node has block %s at height %d, index has %s", blk.Hash, height, meta.Hash)
	}
	return &EthBlockUndo{Txs: ethTxRecords(blk.Eth)}, nil
}

// applyBlock writes the address and contract rows of a block, forwards
// (sign 1) or backwards (sign -1); meta is the metadata of contracts met
// for the first time (forwards only); g, if set, holds the pending rows of
// a group. The caller calls keep on the returned cache once b is written.
func (x *EthIndex) applyBlock(b *Batch, h uint32, recs []EthTxRecord, sign int, meta map[bchain.EthAddress]*bchain.EthContractInfo, g *EthGroup) (*contractsCache, error) {
	var before, after []EthTxRecord
	if sign > 0 {
		after = recs
	} else {
		before = recs
	}
	replaceAddressRows(b, h, before, after)
	ac := x.newContractsCache()
	ac.g = g
	for n := range recs {
		i := n
		if sign < 0 {
			i = len(recs) - 1 - n
		}
		if err := applyEthTx(&recs[i], sign, ac.load); err != nil {
			return nil, fmt.Errorf("block %d tx %s: %w", h, recs[i].Txid, err)
		}
	}
	ac.write(b)
	return ac, x.replaceContractEvents(b, h, before, after, meta, g)
}

// replaceAddressRows replaces the addresses rows of block h written for
// the records before with those of after.
func replaceAddressRows(b *Batch, h uint32, before, after []EthTxRecord) {
	newRows, newOrder := ethAddressRows(after)
	oldRows, _ := ethAddressRows(before)
	for k := range oldRows {
		if _, kept := newRows[k]; !kept {
			b.del(CFAddresses, addressesKey(bchain.AddrDesc(k), h))
		}
	}
	for _, k := range newOrder {
		b.put(CFAddresses, addressesKey(bchain.AddrDesc(k), h), packEthAddrTxs(newRows[k]))
	}
}

// contractsCache holds the addressContracts rows a block changes. A row
// comes from the group's pending rows when there, else from the index's
// held rows (taken out: it is changed in place) or else from the store;
// keep puts the block's rows back once its batch is written, so a failed
// write leaves no changed row held. In a group the rows go back to the
// group's pending rows instead, packed once when it is written.
type contractsCache struct {
	x      *EthIndex
	g      *EthGroup
	loaded map[string]*AddrContracts
	order  []string
	sizes  []int // packed size of each row written, in order
}

func (x *EthIndex) newContractsCache() *contractsCache {
	return &contractsCache{x: x, loaded: map[string]*AddrContracts{}}
}

func (c *contractsCache) load(k string) (*AddrContracts, error) {
	if a := c.loaded[k]; a != nil {
		return a, nil
	}
	a, pending := c.g.row(k)
	if !pending {
		a = c.x.held.take(k)
	}
	if a == nil && !pending {
		var err error
		if a, err = ReadAddrContracts(c.x.db, bchain.AddrDesc(k)); err != nil {
			return nil, err
		}
	}
	if a == nil {
		a = &AddrContracts{}
	}
	c.loaded[k], c.order = a, append(c.order, k)
	return a, nil
}

func (c *contractsCache) write(b *Batch) {
	if c.g != nil {
		for _, k := range c.order {
			c.g.setRow(k, c.loaded[k])
		}
		return
	}
	c.sizes = c.sizes[:0]
	for _, k := range c.order {
		if a := c.loaded[k]; a.Txs == 0 {
			b.del(CFAddressContracts, []byte(k)) // no row without txs, as in a fresh sync
			c.sizes = append(c.sizes, 0)
		} else {
			v := packAddrContracts(a)
			b.put(CFAddressContracts, []byte(k), v)
			c.sizes = append(c.sizes, len(v))
		}
	}
}

// keep hands the written rows to the index's held rows.
func (c *contractsCache) keep() {
	for i, k := range c.order {
		if i < len(c.sizes) && c.sizes[i] > 0 {
			c.x.held.put(k, c.loaded[k], c.sizes[i])
		}
	}
}

// heldMaxBytes bounds the held rows (estimated as twice their packed size:
// the decoded form, its maps and big.Ints); past it they are dropped.
const heldMaxBytes = 32 << 20

// heldRows are decoded addressContracts rows equal to the store's, for the
// sync worker alone (the only writer of these rows).
type heldRows struct {
	mu    sync.Mutex
	rows  map[string]heldRow
	bytes int
}

type heldRow struct {
	a    *AddrContracts
	size int
}

func (h *heldRows) take(k string) *AddrContracts {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.rows[k]
	if !ok {
		return nil
	}
	delete(h.rows, k)
	h.bytes -= r.size
	return r.a
}

func (h *heldRows) put(k string, a *AddrContracts, packed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	size := len(k) + 2*packed + 64
	if h.rows == nil || h.bytes+size > heldMaxBytes {
		h.rows, h.bytes = map[string]heldRow{}, 0
	}
	if old, ok := h.rows[k]; ok {
		h.bytes -= old.size
	}
	h.rows[k] = heldRow{a, size}
	h.bytes += size
}

// internalDataOf is the internalData row of a tx (nil: nothing to keep).
func internalDataOf(tx *bchain.EthTx) *InternalData {
	in := tx.Internal
	var created bchain.AddrDesc
	if tx.Receipt != nil && tx.Receipt.ContractAddress != nil {
		created = tx.Receipt.ContractAddress.AddrDesc()
	}
	if in == nil || (len(in.Transfers) == 0 && in.Error == "" && created == nil) {
		return nil
	}
	id := &InternalData{Kind: in.Type, Created: created, Error: in.Error}
	for _, t := range in.Transfers {
		id.Transfers = append(id.Transfers, InternalTransfer{Kind: t.Type, From: t.From.AddrDesc(), To: t.To.AddrDesc(), Value: nonNil(t.Value)})
	}
	return id
}

func truncateError(s string) string {
	if len(s) > maxErrorLen {
		return s[:maxErrorLen]
	}
	return s
}
