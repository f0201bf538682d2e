package api

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// Queries of the HTML explorer that REST does not have: the recent blocks
// and the mempool, paged from the index and the mempool alone, and search.

// ErrNotFound is the cause of user errors about objects that do not exist
// (as opposed to malformed ids); see IsNotFound.
var ErrNotFound = errors.New("not found")

// IsNotFound reports whether err says that a well-formed id names nothing
// this server knows: an unknown block or tx, or a search without a match.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, errBlockNotFound) || errors.Is(err, bchain.ErrTxNotFound)
}

// Blocks lists the index's blocks newest first, pageSize per page.
func (s *core) Blocks(_ context.Context, page, pageSize int) (*Blocks, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	total := 0
	if v.hasTip {
		total = int(v.tip.Height) + 1
	}
	page, size, pages := clampPaging(page, pageSize, total, s.cfg.Limits.MaxPageSize)
	out := &Blocks{Paging: Paging{Page: page, TotalPages: pages, ItemsOnPage: size}, Blocks: []BlockSummary{}}
	top := total - 1 - (page-1)*size
	for h := top; h >= 0 && h > top-size; h-- {
		meta, err := db.ReadBlockMeta(v.snap, uint32(h))
		if err != nil {
			return nil, err
		}
		if meta == nil {
			return nil, fmt.Errorf("%w: no block at height %d below the tip %d", db.ErrCorrupt, h, v.tip.Height)
		}
		out.Blocks = append(out.Blocks, BlockSummary{Height: uint32(h), Hash: s.hashString(meta.Hash), Time: meta.Time,
			TxCount: int(meta.TxCount), Size: int(meta.Size)})
	}
	return out, nil
}

// MempoolTxs lists the mempool's txs newest first, pageSize per page.
func (s *UtxoService) MempoolTxs(_ context.Context, page, pageSize int) (*MempoolTxs, error) {
	out := &MempoolTxs{Txs: []MempoolTx{}}
	var all []*mempool.Tx
	if s.cfg.Mempool != nil {
		all = s.cfg.Mempool.Txs()
	}
	page, size, pages := clampPaging(page, pageSize, len(all), s.cfg.Limits.MaxPageSize)
	out.Paging, out.Size = Paging{Page: page, TotalPages: pages, ItemsOnPage: size}, len(all)
	start := (page - 1) * size
	for _, tx := range all[start:min(start+size, len(all))] {
		var value uint64
		for _, o := range tx.Vout {
			value += o.Value
		}
		mt := MempoolTx{Txid: tx.Txid.String(), FirstSeen: tx.FirstSeen, Value: NewAmount(value), VSize: tx.VSize,
			Inputs: len(tx.Vin), Outputs: len(tx.Vout)}
		if fee, ok := tx.Fee(); ok {
			mt.Fees = NewAmount(fee)
		}
		out.Txs = append(out.Txs, mt)
	}
	return out, nil
}

// Search tells what a search term names: a block height or hash, a txid
// (confirmed or pending), an address, or an xpub or output descriptor. A term naming nothing is a user
// error for which IsNotFound holds.
func (s *UtxoService) Search(ctx context.Context, q string) (*SearchResult, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil, userErr("Enter a block height or hash, a transaction id, an address or an xpub")
	}
	notFound := &Error{Msg: fmt.Sprintf("No block, transaction, address or xpub matches '%s'", truncate(q, 100)), Err: ErrNotFound}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if bid, err := ParseBlockID(q); err == nil {
		if bid.IsHeight {
			meta, err := db.ReadBlockMeta(v.snap, bid.Height)
			if err != nil {
				return nil, err
			}
			if meta == nil {
				return nil, notFound
			}
			return &SearchResult{Kind: SearchBlock, ID: fmt.Sprint(bid.Height)}, nil
		}
		// A 64-hex term: a tx the index or the mempool holds, else a block.
		ta, err := db.ReadTxOutputs(v.snap, bid.Hash)
		if err != nil {
			return nil, err
		}
		if ta != nil || s.mempoolTx(bid.Hash) != nil {
			return &SearchResult{Kind: SearchTx, ID: bid.Hash.String()}, nil
		}
		if _, _, err := s.resolveBlock(ctx, v, q); err == nil {
			return &SearchResult{Kind: SearchBlock, ID: bid.Hash.String()}, nil
		} else if !IsNotFound(err) {
			return nil, err
		}
		return nil, notFound
	}
	if desc, err := s.parser.AddrDescFromAddress(q); err == nil {
		if canonical, ok := s.DescAddress(desc); ok {
			q = canonical
		}
		return &SearchResult{Kind: SearchAddress, ID: q}, nil
	}
	// An xpub or descriptor; one that is malformed says why.
	if _, err := s.parseAccount(q); err == nil {
		return &SearchResult{Kind: SearchXpub, ID: q}, nil
	} else if !IsNotAccount(err) {
		return nil, err
	}
	return nil, notFound
}
