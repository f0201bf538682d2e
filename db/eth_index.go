package db

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
)

// ErrBulkUnsupported: the chain type's index connects blocks one by one.
var ErrBulkUnsupported = errors.New("bulk loading is not supported for this chain type")

// ContractSource fetches a contract's token metadata from the node (name,
// symbol, decimals), for the contracts row written when the index first
// meets the contract.
type ContractSource func(contract bchain.AddrDesc) (*bchain.EthContractInfo, error)

// EthIndex connects and disconnects Ethereum-type blocks, one atomic write
// per block holding its rows, its undo record and the new tip. Balances
// and nonces are not indexed: they come from the node.
type EthIndex struct {
	chainIndex
	contracts ContractSource
}

// NewEthIndex returns the Ethereum-type index over d, keeping undo records
// for the last keep blocks.
func NewEthIndex(d *DB, keep int, contracts ContractSource) *EthIndex {
	return &EthIndex{chainIndex: newChainIndex(d, keep), contracts: contracts}
}

// NewBulk: Ethereum-type blocks are connected one by one.
func (x *EthIndex) NewBulk(BulkOptions) (Bulk, error) { return nil, ErrBulkUnsupported }

// ConnectBlock indexes blk, which must extend the tip.
func (x *EthIndex) ConnectBlock(blk *bchain.Block) error {
	if blk.Eth == nil {
		return fmt.Errorf("block %d %s has no Ethereum data", blk.Height, blk.Hash)
	}
	if err := x.checkNext(blk); err != nil {
		return err
	}
	recs := ethTxRecords(blk.Eth)
	b := x.db.NewBatch()
	defer b.Destroy()
	b.put(CFHeight, heightKey(blk.Height), packBlockMeta(&BlockMeta{Hash: blk.Hash, Time: blk.Time,
		TxCount: uint32(len(blk.Eth.Txs)), Size: uint32(blk.Size)}))
	b.put(CFBlockTxs, heightKey(blk.Height), packEthBlockUndo(&EthBlockUndo{Txs: recs}))
	if blk.Height >= x.keep {
		b.del(CFBlockTxs, heightKey(blk.Height-x.keep))
	}
	if err := x.applyBlock(b, blk.Height, recs, 1); err != nil {
		return err
	}
	for i := range blk.Eth.Txs {
		tx := &blk.Eth.Txs[i]
		if id := internalDataOf(tx); id != nil {
			b.put(CFInternalData, tx.Hash[:], packInternalData(id))
		}
	}
	if blk.Eth.TraceError != "" {
		b.put(CFBlockInternalDataErrors, heightKey(blk.Height), []byte(truncateError(blk.Eth.TraceError)))
	}
	writeTip(b, Tip{Height: blk.Height, Hash: blk.Hash})
	return x.db.write(b)
}

// DisconnectTip removes the tip block, restoring every row to what it was
// before the block was connected; refill re-fetches the block entering
// the bottom of the rollback window, as for Bitcoin-type chains.
func (x *EthIndex) DisconnectTip(refill RefillFunc) (Tip, bool, error) {
	tip, ok, err := ReadTip(x.db)
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
	b := x.db.NewBatch()
	defer b.Destroy()
	if err := x.applyBlock(b, h, undo.Txs, -1); err != nil {
		return Tip{}, false, err
	}
	for i := range undo.Txs {
		b.del(CFInternalData, undo.Txs[i].Txid[:])
		b.del(CFTransactions, txCacheKey(undo.Txs[i].Txid))
	}
	b.del(CFHeight, heightKey(h))
	b.del(CFBlockTxs, heightKey(h))
	b.del(CFBlockInternalDataErrors, heightKey(h))
	if h >= x.keep {
		if err := x.refillUndo(b, h-x.keep, refill); err != nil {
			return Tip{}, false, err
		}
	}
	return x.commitDisconnect(b, h)
}

// refillUndo writes the undo record of the indexed block at height from
// the node's copy of it.
func (x *EthIndex) refillUndo(b *Batch, height uint32, refill RefillFunc) error {
	meta, err := ReadBlockMeta(x.db, height)
	if err != nil {
		return err
	}
	if meta == nil {
		return fmt.Errorf("%w: no block at height %d", ErrCorrupt, height)
	}
	if refill == nil {
		return fmt.Errorf("block %d is needed to refill the rollback window but no source was given", height)
	}
	blk, err := refill(height, meta.Hash)
	if err != nil {
		return fmt.Errorf("refill rollback window with block %d: %w", height, err)
	}
	if blk.Hash != meta.Hash || blk.Eth == nil {
		return fmt.Errorf("refill rollback window: node has block %s at height %d, index has %s", blk.Hash, height, meta.Hash)
	}
	b.put(CFBlockTxs, heightKey(height), packEthBlockUndo(&EthBlockUndo{Txs: ethTxRecords(blk.Eth)}))
	return nil
}

// applyBlock writes the address and contract rows of a block, forwards
// (sign 1) or backwards (sign -1).
func (x *EthIndex) applyBlock(b *Batch, h uint32, recs []EthTxRecord, sign int) error {
	var before, after []EthTxRecord
	if sign > 0 {
		after = recs
	} else {
		before = recs
	}
	replaceAddressRows(b, h, before, after)
	ac := x.newContractsCache()
	for n := range recs {
		i := n
		if sign < 0 {
			i = len(recs) - 1 - n
		}
		if err := applyEthTx(&recs[i], sign, ac.load); err != nil {
			return fmt.Errorf("block %d tx %s: %w", h, recs[i].Txid, err)
		}
	}
	ac.write(b)
	return x.replaceContractEvents(b, h, before, after)
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

// contractsCache holds the addressContracts rows a block changes.
type contractsCache struct {
	x      *EthIndex
	loaded map[string]*AddrContracts
	order  []string
}

func (x *EthIndex) newContractsCache() *contractsCache {
	return &contractsCache{x: x, loaded: map[string]*AddrContracts{}}
}

func (c *contractsCache) load(k string) (*AddrContracts, error) {
	if a := c.loaded[k]; a != nil {
		return a, nil
	}
	a, err := ReadAddrContracts(c.x.db, bchain.AddrDesc(k))
	if err != nil {
		return nil, err
	}
	if a == nil {
		a = &AddrContracts{}
	}
	c.loaded[k], c.order = a, append(c.order, k)
	return a, nil
}

func (c *contractsCache) write(b *Batch) {
	for _, k := range c.order {
		if a := c.loaded[k]; a.Txs == 0 {
			b.del(CFAddressContracts, []byte(k)) // no row without txs, as in a fresh sync
		} else {
			b.put(CFAddressContracts, []byte(k), packAddrContracts(a))
		}
	}
}

// contractEvents lists what a block did to contracts, per contract in
// order of first appearance.
func contractEvents(h uint32, recs []EthTxRecord) (order []string, events map[string][]ContractEvent) {
	events = map[string][]ContractEvent{}
	add := func(c bchain.AddrDesc, ev ContractEvent) {
		k := string(c)
		list, seen := events[k]
		if !seen {
			order = append(order, k)
		}
		if !slices.ContainsFunc(list, func(e ContractEvent) bool { return e.Kind == ev.Kind }) {
			events[k] = append(list, ev)
		}
	}
	for i := range recs {
		r := &recs[i]
		if len(r.Created) > 0 {
			add(r.Created, ContractEvent{Height: h, Kind: ContractCreated})
		}
		for _, it := range r.Internal {
			switch it.Kind {
			case bchain.EthInternalCreate:
				add(it.To, ContractEvent{Height: h, Kind: ContractCreated})
			case bchain.EthInternalSelfDestruct:
				add(it.From, ContractEvent{Height: h, Kind: ContractDestroyed})
			}
		}
		for _, tt := range r.Tokens {
			add(tt.Contract, ContractEvent{Height: h, Kind: ContractSeen, Standard: tt.Standard})
		}
	}
	return order, events
}

// replaceContractEvents replaces the events block h gave contracts by
// the records before with those of after: a contract's row loses every
// event at h, then gains the new ones (a contract keeps one "seen" event,
// the first). A row left without events goes.
func (x *EthIndex) replaceContractEvents(b *Batch, h uint32, before, after []EthTxRecord) error {
	oldOrder, _ := contractEvents(h, before)
	newOrder, events := contractEvents(h, after)
	for _, k := range oldOrder {
		if _, kept := events[k]; !kept {
			newOrder = append(newOrder, k)
		}
	}
	for _, k := range newOrder {
		c, err := ReadContractInfo(x.db, bchain.AddrDesc(k))
		if err != nil {
			return err
		}
		if c == nil && len(events[k]) == 0 {
			continue
		}
		if c == nil {
			if c, err = x.newContractInfo(bchain.AddrDesc(k)); err != nil {
				return err
			}
		}
		c.Events = slices.DeleteFunc(c.Events, func(e ContractEvent) bool { return e.Height == h })
		for _, ev := range events[k] {
			if ev.Kind == ContractSeen && c.Standard() != bchain.TokenUnknown {
				continue
			}
			c.Events = append(c.Events, ev)
		}
		if len(c.Events) == 0 {
			b.del(CFContracts, []byte(k))
			continue
		}
		slices.SortStableFunc(c.Events, func(a, b ContractEvent) int {
			if a.Height != b.Height {
				return cmp.Compare(a.Height, b.Height)
			}
			return cmp.Compare(a.Kind, b.Kind)
		})
		b.put(CFContracts, []byte(k), packContractInfo(c))
	}
	return nil
}

// newContractInfo asks the node for a contract's metadata. A node error
// fails the block (the sync retries it): a row without metadata would
// stay so.
func (x *EthIndex) newContractInfo(contract bchain.AddrDesc) (*ContractInfo, error) {
	c := &ContractInfo{}
	if x.contracts == nil {
		return c, nil
	}
	info, err := x.contracts(contract)
	if err != nil {
		return nil, fmt.Errorf("contract %x: %w", []byte(contract), err)
	}
	if info != nil {
		c.Name, c.Symbol = info.Name, info.Symbol
		if info.Decimals > 0 && info.Decimals < 256 {
			c.Decimals = uint8(info.Decimals)
		}
	}
	return c, nil
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
