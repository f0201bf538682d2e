package db

// Contract rows of an Ethereum-type block. The node is asked for a
// contract's token metadata once, when the index first meets the contract,
// and only in PrepareBlock, before anything is written: connecting,
// disconnecting and amending a block read the index and write one batch,
// and never wait on the node.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// ContractSource fetches a contract's token metadata from the node (name,
// symbol, decimals), for the contracts row written when the index first
// meets the contract.
type ContractSource func(ctx context.Context, contract bchain.AddrDesc) (*bchain.EthContractInfo, error)

// contractInfoTimeout bounds one metadata fetch: a hanging node fails the
// block (the sync retries it) instead of holding the sync worker.
const contractInfoTimeout = 30 * time.Second

// ErrNotPrepared: the block names a contract the index has no row for and
// carries no metadata for it (PrepareBlock was not called on it). Nothing
// was written; preparing the block again and retrying fixes it.
var ErrNotPrepared = errors.New("block not prepared: contract metadata missing")

// PrepareBlock fetches from the node what indexing blk needs besides the
// block itself: the token metadata of each contract blk names that has no
// contracts row yet. It attaches it to blk.Eth.Contracts and writes
// nothing, so a node that fails or hangs here leaves the index as it was.
// The sync worker calls it in its fetch step; RetryTraces calls it before
// amending. Contracts already in blk.Eth.Contracts are not asked again.
func (x *EthIndex) PrepareBlock(ctx context.Context, blk *bchain.Block) error {
	if blk.Eth == nil {
		return errNoEthData(blk)
	}
	order, _ := contractEvents(blk.Height, ethTxRecords(blk.Eth))
	var got map[bchain.EthAddress]*bchain.EthContractInfo
	for _, k := range order {
		a := ethAddressOf(k)
		if _, ok := blk.Eth.Contracts[a]; ok {
			continue
		}
		g := x.group.Load()
		pending, exists := g.contractState(k)
		if exists {
			continue // a row of the group's next write
		}
		if !pending {
			row, err := x.db.get(CFContracts, []byte(k))
			if err != nil {
				return fmt.Errorf("prepare block %d: contract %x: %w", blk.Height, []byte(k), err)
			}
			if row != nil {
				continue
			}
		}
		info := g.fetchedMeta(k)
		var err error
		if info == nil {
			if info, err = x.fetchContract(ctx, bchain.AddrDesc(k)); err != nil {
				return fmt.Errorf("prepare block %d %s: metadata of contract %x: %w", blk.Height, blk.Hash, []byte(k), err)
			}
			g.keepMeta(k, info)
		}
		if got == nil {
			got = maps.Clone(blk.Eth.Contracts)
			if got == nil {
				got = map[bchain.EthAddress]*bchain.EthContractInfo{}
			}
		}
		got[a] = info
	}
	if got != nil {
		blk.Eth.Contracts = got // a new map: a block shared with a reader sees the old one or the new
	}
	return nil
}

// fetchContract asks the node for one contract's metadata (empty without
// a source, as the row is then written without it).
func (x *EthIndex) fetchContract(ctx context.Context, contract bchain.AddrDesc) (*bchain.EthContractInfo, error) {
	if x.contracts == nil {
		return &bchain.EthContractInfo{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, contractInfoTimeout)
	defer cancel()
	info, err := x.contracts(ctx, contract)
	if err != nil {
		return nil, err
	}
	if info == nil {
		info = &bchain.EthContractInfo{}
	}
	return info, nil
}

// ethAddressOf turns an address descriptor (20 bytes) into an EthAddress.
func ethAddressOf(desc string) bchain.EthAddress {
	var a bchain.EthAddress
	copy(a[:], desc)
	return a
}

// newContractInfo is the contracts row of a contract first met, from the
// metadata PrepareBlock fetched.
func newContractInfo(info *bchain.EthContractInfo) *ContractInfo {
	c := &ContractInfo{Name: info.Name, Symbol: info.Symbol}
	if info.Decimals > 0 && info.Decimals < 256 {
		c.Decimals = uint8(info.Decimals)
	}
	return c
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
// the first). A row left without events goes. A contract without a row
// gets one from meta, the metadata PrepareBlock fetched. With a group g
// the rows are read from and left in its pending rows.
func (x *EthIndex) replaceContractEvents(b *Batch, h uint32, before, after []EthTxRecord, meta map[bchain.EthAddress]*bchain.EthContractInfo, g *EthGroup) error {
	oldOrder, _ := contractEvents(h, before)
	newOrder, events := contractEvents(h, after)
	for _, k := range oldOrder {
		if _, kept := events[k]; !kept {
			newOrder = append(newOrder, k)
		}
	}
	for _, k := range newOrder {
		c, pending := g.contract(k)
		var err error
		if !pending {
			c, err = readContractRow(x.db, bchain.AddrDesc(k))
		}
		if err != nil {
			return err
		}
		if c == nil && len(events[k]) == 0 {
			continue
		}
		if c == nil {
			info := meta[ethAddressOf(k)]
			if info == nil {
				return fmt.Errorf("%w: block %d, contract %x", ErrNotPrepared, h, []byte(k))
			}
			c = newContractInfo(info)
		}
		c.Events = slices.DeleteFunc(c.Events, func(e ContractEvent) bool { return e.Height == h })
		for _, ev := range events[k] {
			if ev.Kind == ContractSeen && c.Standard() != bchain.TokenUnknown {
				continue
			}
			c.Events = append(c.Events, ev)
		}
		if len(c.Events) == 0 {
			if g != nil {
				g.setContract(k, nil)
			} else {
				b.del(CFContracts, []byte(k))
			}
			continue
		}
		slices.SortStableFunc(c.Events, func(a, b ContractEvent) int {
			if a.Height != b.Height {
				return cmp.Compare(a.Height, b.Height)
			}
			return cmp.Compare(a.Kind, b.Kind)
		})
		if g != nil {
			g.setContract(k, c)
			continue
		}
		b.put(CFContracts, []byte(k), packContractInfo(c))
	}
	return nil
}
