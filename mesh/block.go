package mesh

import (
	"context"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

type blockResponse struct {
	Block *Block `json:"block"`
}

type transactionResponse struct {
	Transaction *Transaction `json:"transaction"`
}

func (s *Server) blockID(height uint32, hash bchain.Hash) BlockIdentifier {
	return BlockIdentifier{Index: int64(height), Hash: s.svc.HashString(hash)}
}

// tip is the index's best block.
func (s *Server) tip(ctx context.Context) (BlockIdentifier, error) {
	h, hash, ok, err := s.idx.EsploraTip(ctx)
	if err != nil {
		return BlockIdentifier{}, err
	}
	if !ok {
		return BlockIdentifier{}, fail(errUnavailable, "the index holds no block yet")
	}
	return BlockIdentifier{Index: int64(h), Hash: s.svc.HashString(hash)}, nil
}

// resolve finds the block of the active chain a partial identifier names
// (nil or empty: the tip). Index and hash given together must agree.
func (s *Server) resolve(ctx context.Context, p *PartialBlockIdentifier) (BlockIdentifier, error) {
	tip, err := s.tip(ctx)
	if err != nil {
		return BlockIdentifier{}, err
	}
	if p == nil || (p.Index == nil && p.Hash == nil) {
		return tip, nil
	}
	var height uint32
	switch {
	case p.Hash != nil:
		hash, err := parseHash(*p.Hash)
		if err != nil {
			return BlockIdentifier{}, fail(errBadBlock, "hash %q: %v", truncate(*p.Hash, 80), err)
		}
		h, found, err := s.idx.EsploraBlockHeight(ctx, hash)
		if err != nil {
			return BlockIdentifier{}, err
		}
		if !found || int64(h) > tip.Index {
			return BlockIdentifier{}, fail(errBlockNotFound, "no block %s on the indexed chain", *p.Hash)
		}
		if p.Index != nil && *p.Index != int64(h) {
			return BlockIdentifier{}, fail(errBadBlock, "block %s is at index %d, not %d", *p.Hash, h, *p.Index)
		}
		height = h
	default:
		if *p.Index < 0 {
			return BlockIdentifier{}, fail(errBadBlock, "index %d is negative", *p.Index)
		}
		if *p.Index > tip.Index {
			return BlockIdentifier{}, fail(errBlockNotFound, "index %d is above the tip %d", *p.Index, tip.Index)
		}
		height = uint32(*p.Index)
	}
	refs, err := s.idx.EsploraBlockRefs(ctx, []uint32{height})
	if err != nil {
		return BlockIdentifier{}, err
	}
	ref, ok := refs[height]
	if !ok {
		return BlockIdentifier{}, fail(errBlockNotFound, "index %d is above the tip", height)
	}
	return s.blockID(height, ref.Hash), nil
}

// parseHash reads a block hash or txid: 64 hex digits, either case (with
// 0x, as Ethereum-type chains show them, or without).
func parseHash(v string) (bchain.Hash, error) {
	return bchain.ParseHash(strings.TrimPrefix(strings.ToLower(v), "0x"))
}

// parseTxid reads a required transaction identifier.
func parseTxid(id *TransactionIdentifier) (bchain.Hash, error) {
	if id == nil {
		return bchain.Hash{}, fail(errBadRequest, "transaction_identifier is required")
	}
	txid, err := parseHash(id.Hash)
	if err != nil {
		return txid, fail(errBadTx, "hash %q: %v", truncate(id.Hash, 80), err)
	}
	return txid, nil
}

func (s *Server) block(ctx context.Context, body []byte) (any, error) {
	var req blockRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	if req.BlockIdentifier == nil {
		return nil, fail(errBadRequest, "block_identifier is required")
	}
	id, err := s.resolve(ctx, req.BlockIdentifier)
	if err != nil {
		return nil, err
	}
	lb, err := s.ledger.LedgerBlock(ctx, uint32(id.Index))
	if err != nil {
		return nil, err
	}
	if lb == nil || s.svc.HashString(lb.Hash) != id.Hash {
		// A reorg between the two reads: the client asks again.
		return nil, fail(errBlockNotFound, "block %d changed while read", id.Index)
	}
	b := &Block{BlockIdentifier: id, Timestamp: lb.Time * 1000, Transactions: make([]Transaction, len(lb.Txs))}
	// The genesis block is its own parent, as the specification asks.
	b.ParentBlockIdentifier = id
	if lb.Height > 0 {
		b.ParentBlockIdentifier = s.blockID(lb.Height-1, lb.Prev)
	}
	for i := range lb.Txs {
		b.Transactions[i] = s.transaction(&lb.Txs[i])
	}
	return &blockResponse{Block: b}, nil
}

// blockTxRequest reads a /block/transaction request and resolves its
// block, which must still be the index's.
func (s *Server) blockTxRequest(ctx context.Context, body []byte) (BlockIdentifier, *blockTransactionRequest, error) {
	var req blockTransactionRequest
	if err := s.read(body, &req); err != nil {
		return BlockIdentifier{}, nil, err
	}
	if req.BlockIdentifier == nil || req.TransactionIdentifier == nil {
		return BlockIdentifier{}, nil, fail(errBadRequest, "block_identifier and transaction_identifier are required")
	}
	hash, index := req.BlockIdentifier.Hash, req.BlockIdentifier.Index
	id, err := s.resolve(ctx, &PartialBlockIdentifier{Index: &index, Hash: &hash})
	return id, &req, err
}

func (s *Server) blockTransaction(ctx context.Context, body []byte) (any, error) {
	id, req, err := s.blockTxRequest(ctx, body)
	if err != nil {
		return nil, err
	}
	txid, err := parseTxid(req.TransactionIdentifier)
	if err != nil {
		return nil, err
	}
	lt, blockHash, err := s.ledger.LedgerBlockTx(ctx, uint32(id.Index), txid)
	if err != nil {
		return nil, err
	}
	if s.svc.HashString(blockHash) != id.Hash {
		return nil, fail(errBlockNotFound, "block %d changed while read", id.Index)
	}
	if lt == nil {
		return nil, fail(errTxNotFound, "tx %s is not in block %d", txid, id.Index)
	}
	t := s.transaction(lt)
	return &transactionResponse{Transaction: &t}, nil
}

// transaction renders a tx as operations: first one per input (the
// coinbase's, or a spent coin's negative amount), then one per output
// (a created coin). An output the index never keeps (OP_RETURN, an empty
// script) is booked to the unspendable pseudo-account, and gets an
// operation only when it holds value; the spend of an empty-script output
// follows the same rule, so that both sides of a coin agree. A pending
// tx's input whose parent is unknown yet has no operation. The later of
// two duplicate coinbases first books the loss of the earlier one's coins
// it overwrote (bchain.DuplicateCoinbase).
func (s *Server) transaction(lt *api.LedgerTx) Transaction {
	txid := s.svc.HashString(lt.Txid)
	t := Transaction{TransactionIdentifier: TransactionIdentifier{Hash: txid},
		Operations: make([]Operation, 0, len(lt.Inputs)+len(lt.Outputs)+len(lt.Overwrites)+1)}
	add := func(op Operation) {
		op.OperationIdentifier = OperationIdentifier{Index: int64(len(t.Operations))}
		if !lt.Pending { // a pending tx's operations have not succeeded or failed yet
			op.Status = opSuccess
		}
		t.Operations = append(t.Operations, op)
	}
	spend := func(typ string, desc bchain.AddrDesc, value uint64, prev string, vout uint32) {
		if len(desc) == 0 && value == 0 {
			return // never created either
		}
		add(Operation{Type: typ, Account: s.account(desc), Amount: s.amount(-int64(value)),
			CoinChange: &CoinChange{CoinIdentifier: coinID(prev, vout), CoinAction: "coin_spent"}})
	}
	if lt.Coinbase {
		add(Operation{Type: opCoinbase})
	}
	for vout, o := range lt.Overwrites {
		spend(opOverwritten, o.Desc, o.Value, txid, uint32(vout))
	}
	for _, in := range lt.Inputs {
		if in.Known {
			spend(opInput, in.Desc, in.Value, s.svc.HashString(in.Prev), in.Vout)
		}
	}
	for vout, o := range lt.Outputs {
		if len(o.Desc) == 0 && o.Value == 0 {
			continue
		}
		add(Operation{Type: opOutput, Account: s.account(o.Desc),
			Amount:     s.amount(int64(o.Value)),
			CoinChange: &CoinChange{CoinIdentifier: coinID(txid, uint32(vout)), CoinAction: "coin_created"}})
	}
	return t
}

func coinID(txid string, vout uint32) CoinIdentifier {
	return CoinIdentifier{Identifier: txid + ":" + strconv.FormatUint(uint64(vout), 10)}
}

func (s *Server) amount(v int64) *Amount {
	return &Amount{Value: strconv.FormatInt(v, 10), Currency: s.cur}
}
