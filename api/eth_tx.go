package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/calldata"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/ethmempool"
)

// Tx answers tx/{txid} for a pending or mined tx the node knows.
func (s *EthService) Tx(ctx context.Context, txidParam string) (*Tx, error) {
	txid, err := parseTxid(s.trimHex(txidParam))
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	r := newEthRenderer(s, v)
	out, err := r.tx(ctx, txid)
	if err != nil {
		return nil, err
	}
	out.AddressAliases, err = r.addressAliases([]*Tx{out})
	return out, err
}

// ethRenderer renders the txs of one request, sharing the blocks fetched
// from the node and the contracts read from the index.
type ethRenderer struct {
	s *EthService
	v *view

	// noSpecific leaves out a pending tx's coinSpecificData (mempool
	// notifications, which Blockbook renders without it).
	noSpecific bool

	mu         sync.Mutex
	blocks     map[bchain.Hash]*bchain.Block
	contracts  map[string]*db.ContractInfo
	signatures map[uint32][]calldata.Signature // by selector (eth_calldata.go)
}

func newEthRenderer(s *EthService, v *view) *ethRenderer {
	return &ethRenderer{s: s, v: v, blocks: map[bchain.Hash]*bchain.Block{}, contracts: map[string]*db.ContractInfo{},
		signatures: map[uint32][]calldata.Signature{}}
}

// tx renders a tx: from the cache when the index holds its block, else
// from the node (the tx, and for a mined one its block with the receipt).
func (r *ethRenderer) tx(ctx context.Context, txid bchain.Hash) (*Tx, error) {
	if out, err := r.cached(txid); out != nil || err != nil {
		return out, err
	}
	etx, err := r.s.eth.Tx(ctx, txid)
	if errors.Is(err, bchain.ErrTxNotFound) {
		return nil, &Error{Msg: fmt.Sprintf("Transaction '%s' not found", r.s.hashString(txid)), Err: err}
	}
	if err != nil {
		return nil, err
	}
	if etx.BlockHash.IsZero() {
		// Pending: the token transfer its calldata asks for (it may
		// still fail), as the mempool files it.
		etx.Transfers = ethmempool.PendingTransfers(etx)
		out, err := r.render(etx, nil, nil)
		if err != nil {
			return nil, err
		}
		// Its time is when the mempool first saw it, as Blockbook (and our
		// Bitcoin-type answers) show it; 0 would date it to 1970 in wallets.
		if r.s.cfg.EthMempool != nil {
			if mt, ok := r.s.cfg.EthMempool.Tx(txid); ok {
				out.BlockTime = mt.FirstSeen.Unix()
			}
		}
		// Blockbook adds the node's view of a pending tx (its tx-specific
		// answer); best effort, the tx may be mined meanwhile.
		if r.s.txSrc != nil && !r.noSpecific {
			if cs, err := r.s.txSrc.TxSpecific(ctx, txid); err == nil {
				out.CoinSpecificData = cs
			} else if ctx.Err() == nil {
				r.s.log.Debug("pending tx's node data", "txid", txid, "err", err)
			}
		}
		return out, nil
	}
	blk, err := r.block(ctx, etx.BlockHash, etx.BlockHeight)
	if err != nil {
		return nil, err
	}
	for i := range blk.Eth.Txs {
		if blk.Eth.Txs[i].Hash == txid {
			return r.fromBlock(ctx, blk, &blk.Eth.Txs[i])
		}
	}
	return nil, fmt.Errorf("%w: tx %s is not in its block %s", bchain.ErrInvalidData, txid, etx.BlockHash)
}

// block fetches a block once per request.
func (r *ethRenderer) block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	r.mu.Lock()
	blk := r.blocks[hash]
	r.mu.Unlock()
	if blk != nil {
		return blk, nil
	}
	blk, err := r.s.backend.Chain.Block(ctx, hash, height)
	if errors.Is(err, bchain.ErrBlockNotFound) {
		return nil, &Error{Msg: fmt.Sprintf("Block %s not found", r.s.hashString(hash)), Err: err}
	}
	if err != nil {
		return nil, err
	}
	if blk.Eth == nil {
		return nil, fmt.Errorf("%w: block %s has no Ethereum data", bchain.ErrInvalidData, hash)
	}
	r.mu.Lock()
	r.blocks[hash] = blk
	r.mu.Unlock()
	return blk, nil
}

// forget drops a block read through block from the renderer's cache.
func (r *ethRenderer) forget(hash bchain.Hash) {
	r.mu.Lock()
	delete(r.blocks, hash)
	r.mu.Unlock()
}

// cached returns the cached answer of a tx whose block the index still
// holds, with confirmations as of now.
func (r *ethRenderer) cached(txid bchain.Hash) (*Tx, error) {
	raw, err := db.ReadCachedTx(r.v.snap, txid)
	if err != nil || raw == nil {
		return nil, err
	}
	var out Tx
	if err := json.Unmarshal(raw, &out); err != nil || out.BlockHeight < 0 {
		return nil, nil // not ours: render again
	}
	meta, err := db.ReadBlockMeta(r.v.snap, uint32(out.BlockHeight))
	if err != nil || meta == nil || r.s.hashString(meta.Hash) != out.BlockHash {
		return nil, err
	}
	out.Confirmations = r.v.confirmations(uint32(out.BlockHeight))
	// Decoded with the signatures the index has now (the downloader may
	// have stored the call's since the answer was cached).
	if es := out.EthereumSpecific; es != nil {
		es.ParsedData = r.parsedDataOf(es.Data)
	}
	// Token metadata as the index has it now: an operator's fix
	// (/admin/contract-info) applies to answers cached before it.
	for i := range out.TokenTransfers {
		tt := &out.TokenTransfers[i]
		desc, err := r.s.addrDesc(tt.Contract)
		if err != nil {
			return nil, nil // not ours: render again
		}
		ci, err := r.contract(desc)
		if err != nil {
			return nil, err
		}
		if ci != nil {
			tt.Name, tt.Symbol, tt.Decimals = ci.Name, ci.Symbol, int(ci.Decimals)
		}
	}
	return &out, nil
}

// fromBlock renders a mined tx of blk, with the internal data the index
// holds (or, while the index lacks it, the node's fresh trace) and caches
// the answer when the index holds the block.
func (r *ethRenderer) fromBlock(ctx context.Context, blk *bchain.Block, tx *bchain.EthTx) (*Tx, error) {
	id, err := db.ReadInternalData(r.v.snap, tx.Hash)
	if err != nil {
		return nil, err
	}
	// A tx whose trace failed is amended later: do not cache it meanwhile.
	cache := r.s.cfg.TxCache != nil && !(blk.Eth.Traced && (blk.Eth.TraceError != "" || tx.Internal == nil))
	if in := tx.Internal; id == nil && in != nil && (len(in.Transfers) > 0 || in.Error != "" || in.Type == bchain.EthInternalCreate) {
		id, cache = r.internalFromTrace(tx), false // the index records it when it amends the block
	}
	out, err := r.render(tx, blk, id)
	if err != nil {
		return nil, err
	}
	meta, err := db.ReadBlockMeta(r.v.snap, blk.Height)
	if err != nil {
		return nil, err
	}
	if cache && meta != nil && meta.Hash == blk.Hash {
		c := *out
		c.Confirmations = 0
		if raw, err := json.Marshal(&c); err == nil {
			if err := r.s.cfg.TxCache.WriteCachedTx(tx.Hash, raw); err != nil {
				r.s.log.Warn("caching tx failed", "txid", tx.Hash, "err", err)
			}
		}
	}
	return out, nil
}

// internalFromTrace converts the node's trace of a tx to the index's form.
func (r *ethRenderer) internalFromTrace(tx *bchain.EthTx) *db.InternalData {
	in := tx.Internal
	id := &db.InternalData{Kind: in.Type, Error: in.Error}
	if tx.Receipt != nil && tx.Receipt.ContractAddress != nil {
		id.Created = tx.Receipt.ContractAddress.AddrDesc()
	}
	for _, t := range in.Transfers {
		id.Transfers = append(id.Transfers, db.InternalTransfer{Kind: t.Type, From: t.From.AddrDesc(), To: t.To.AddrDesc(), Value: t.Value})
	}
	return id
}

// contract returns what the index knows of a contract (nil: nothing).
func (r *ethRenderer) contract(c bchain.AddrDesc) (*db.ContractInfo, error) {
	r.mu.Lock()
	ci, ok := r.contracts[string(c)]
	r.mu.Unlock()
	if ok {
		return ci, nil
	}
	ci, err := db.ReadContractInfo(r.v.snap, c)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.contracts[string(c)] = ci
	r.mu.Unlock()
	return ci, nil
}

func amount(x *big.Int) *Amount {
	if x == nil {
		return nil
	}
	return (*Amount)(new(big.Int).Set(x))
}

// number renders an integer as a JSON number ("" is left out).
func number(x *big.Int) json.Number {
	if x == nil {
		return ""
	}
	return json.Number(x.String())
}

// render builds the Ethereum shape of a tx; blk is nil for pending txs.
func (r *ethRenderer) render(tx *bchain.EthTx, blk *bchain.Block, id *db.InternalData) (*Tx, error) {
	s := r.s
	from := s.addr(tx.From.AddrDesc())
	out := &Tx{
		Txid: s.hashString(tx.Hash), BlockHeight: -1, Value: amount(tx.Value),
		Vin: []Vin{{N: 0, Addresses: []string{from}, IsAddress: true}},
	}
	if out.Value == nil {
		out.Value = NewAmount(0)
	}
	es := &EthereumSpecific{
		Status: bchain.EthStatusUnknown, Nonce: tx.Nonce, GasLimit: tx.GasLimit,
		GasPrice: amount(tx.GasPrice), MaxFeePerGas: amount(tx.MaxFeePerGas), MaxPriorityFeePerGas: amount(tx.MaxPriorityFeePerGas),
	}
	if len(tx.Data) > 0 {
		es.Data = "0x" + hex.EncodeToString(tx.Data)
	}
	es.ParsedData = r.callData(tx.Data)
	var to string
	if tx.To != nil {
		to = s.addr(tx.To.AddrDesc())
	}
	if blk != nil {
		out.BlockHash, out.BlockHeight, out.BlockTime = s.hashString(blk.Hash), int64(blk.Height), blk.Time
		out.Confirmations = r.v.confirmations(blk.Height)
		es.BaseFeePerGas = amount(blk.Eth.BaseFee)
	}
	if rc := tx.Receipt; rc != nil {
		es.Status = rc.Status
		gasUsed := rc.GasUsed
		es.GasUsed = &gasUsed
		price := rc.EffectiveGasPrice
		if price == nil {
			price = tx.GasPrice
		}
		if price != nil {
			es.GasPrice = amount(price)
			// As Blockbook: gas × price plus an OP-stack tx's L1 fee; a
			// blob tx's blob fee is not included.
			fee := new(big.Int).Mul(price, new(big.Int).SetUint64(rc.GasUsed))
			if l1 := rc.L1Fee(); l1 != nil {
				fee.Add(fee, l1)
			}
			out.Fees = (*Amount)(fee)
		}
		if l1 := rc.L1; l1 != nil {
			es.L1Fee, es.L1FeeScalar, es.L1GasPrice, es.L1GasUsed = number(l1.Fee), l1.FeeScalar, amount(l1.GasPrice), number(l1.GasUsed)
		}
		if rc.ContractAddress != nil {
			es.CreatedContract = s.addr(rc.ContractAddress.AddrDesc())
		}
	} else {
		out.Fees = NewAmount(0) // pending: no fee until mined, as Blockbook
	}
	if id != nil {
		if es.CreatedContract == "" && len(id.Created) > 0 {
			es.CreatedContract = s.addr(id.Created)
		}
		es.Type, es.Error = int(id.Kind), id.Error
		for _, t := range id.Transfers {
			es.InternalTransfers = append(es.InternalTransfers, EthereumInternalTransfer{
				Type: int(t.Kind), From: s.addr(t.From), To: s.addr(t.To), Value: amount(t.Value)})
		}
	}
	// A contract creation has no recipient: addresses null, as Blockbook
	// (the created contract is ethereumSpecific.createdContract).
	vout := Vout{N: 0, Value: out.Value}
	if to != "" {
		vout.Addresses, vout.IsAddress = []string{to}, true
	}
	out.Vout = []Vout{vout}
	out.EthereumSpecific = es
	if s.tron != nil {
		s.tron.tx(out, tx)
	}
	var err error
	out.TokenTransfers, err = r.tokenTransfers(tx.Transfers)
	return out, err
}

// tokenTransfers renders a tx's token transfers; the entries of one
// ERC1155 TransferBatch log become one transfer with several values.
func (r *ethRenderer) tokenTransfers(ts []bchain.TokenTransfer) ([]TokenTransfer, error) {
	var out []TokenTransfer
	for i, t := range ts {
		if t.Standard == bchain.TokenERC1155 && i > 0 && ts[i-1].Standard == bchain.TokenERC1155 && ts[i-1].LogIndex == t.LogIndex {
			last := &out[len(out)-1]
			last.MultiTokenValues = append(last.MultiTokenValues, MultiTokenValue{ID: amount(t.TokenID), Value: amount(t.Value)})
			continue
		}
		std := r.s.standard(t.Standard)
		tt := TokenTransfer{Type: std, Standard: std, From: r.s.addr(t.From.AddrDesc()), To: r.s.addr(t.To.AddrDesc()),
			Contract: r.s.addr(t.Contract.AddrDesc())}
		ci, err := r.contract(t.Contract.AddrDesc())
		if err != nil {
			return nil, err
		}
		if ci != nil {
			tt.Name, tt.Symbol, tt.Decimals = ci.Name, ci.Symbol, int(ci.Decimals)
		}
		switch t.Standard {
		case bchain.TokenERC721:
			tt.Value = amount(t.TokenID) // the token id, as Blockbook
		case bchain.TokenERC1155:
			tt.MultiTokenValues = []MultiTokenValue{{ID: amount(t.TokenID), Value: amount(t.Value)}}
		default:
			tt.Value = amount(t.Value)
		}
		out = append(out, tt)
	}
	// As Blockbook: ERC20 transfers first, then ERC721, then ERC1155, each
	// in log order.
	sort.SliceStable(out, func(i, j int) bool { return standardRank(out[i].Standard) < standardRank(out[j].Standard) })
	return out, nil
}

func standardRank(s string) int {
	switch s {
	case bchain.TokenERC20.String():
		return 0
	case bchain.TokenERC721.String():
		return 1
	}
	return 2
}
