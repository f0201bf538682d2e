package mesh

import (
	"context"
	"math/big"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

func (s *Server) ethBlock(ctx context.Context, body []byte) (any, error) {
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
	lb, err := s.ethLedgerBlock(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	b := &Block{BlockIdentifier: id, ParentBlockIdentifier: id, Timestamp: lb.Time * 1000, Transactions: make([]Transaction, len(lb.Txs))}
	if lb.Height > 0 {
		b.ParentBlockIdentifier = s.blockID(lb.Height-1, lb.Prev)
	}
	for i := range lb.Txs {
		b.Transactions[i] = s.ethTransaction(&lb.Txs[i])
	}
	if wt, ok := s.ethWithdrawalsTx(lb); ok {
		b.Transactions = append(b.Transactions, wt)
	}
	return &blockResponse{Block: b}, nil
}

// ethLedgerBlock reads the block id names, which must still be the
// index's (a reorg between the reads: the client asks again), with the
// txs named (all for nil).
func (s *Server) ethLedgerBlock(ctx context.Context, id BlockIdentifier, txids []bchain.Hash) (*api.EthLedgerBlock, error) {
	lb, err := s.eth.EthLedgerBlockTxs(ctx, uint32(id.Index), txids)
	if err != nil {
		return nil, err
	}
	if lb == nil || s.svc.HashString(lb.Hash) != id.Hash {
		return nil, fail(errBlockNotFound, "block %d changed while read", id.Index)
	}
	return lb, nil
}

func (s *Server) ethBlockTransaction(ctx context.Context, body []byte) (any, error) {
	id, req, err := s.blockTxRequest(ctx, body)
	if err != nil {
		return nil, err
	}
	// The id as /block named it; any case, with or without 0x, as tx hashes.
	if w := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(req.TransactionIdentifier.Hash, "0x"), "0X")); w == strings.TrimPrefix(id.Hash, "0x")+withdrawalsSuffix {
		lb, err := s.ethLedgerBlock(ctx, id, []bchain.Hash{}) // its withdrawals only
		if err != nil {
			return nil, err
		}
		if wt, ok := s.ethWithdrawalsTx(lb); ok {
			return &transactionResponse{Transaction: &wt}, nil
		}
		return nil, fail(errTxNotFound, "block %d has no withdrawals", id.Index)
	}
	txid, err := parseTxid(req.TransactionIdentifier)
	if err != nil {
		return nil, err
	}
	bt, err := s.ethBlockTx(ctx, id, txid)
	if err != nil {
		return nil, err
	}
	return &transactionResponse{Transaction: &bt.Transaction}, nil
}

// ethBlockTx renders one tx of the block id names.
func (s *Server) ethBlockTx(ctx context.Context, id BlockIdentifier, txid bchain.Hash) (*blockTransaction, error) {
	lb, err := s.ethLedgerBlock(ctx, id, []bchain.Hash{txid})
	if err != nil {
		return nil, err
	}
	for i := range lb.Txs {
		if lb.Txs[i].Tx.Hash == txid {
			return &blockTransaction{BlockIdentifier: id, Transaction: s.ethTransaction(&lb.Txs[i])}, nil
		}
	}
	return nil, fail(errTxNotFound, "tx %s is not in block %d", s.svc.HashString(txid), id.Index)
}

// ethTransaction renders every balance change of a tx as operations:
//   - the fee, debited from the sender: gas used × effective gas price,
//     plus the blob fee and an OP-stack chain's L1 fee; credited are the
//     priority part (gas used × (price − base fee)) to the block's fee
//     recipient and, on OP-stack chains, the base fee and the L1 fee to
//     their vaults. Elsewhere the base fee and the blob fee are burnt: no
//     account receives them;
//   - when the tx succeeded (a failed tx moves nothing but its fee): its
//     value to the recipient or the contract it created, the value moves
//     of its inner frames (calls, creations, selfdestructs, from our
//     traces), and its ERC-20 transfers in the token's currency (a mint or
//     burn has no operation for the zero address).
//
// Each credit names the debit it pairs with in related_operations. A
// pending tx has its value and intended token transfer, no fee (the gas
// it will use is unknown) and no status.
func (s *Server) ethTransaction(lt *api.EthLedgerTx) Transaction {
	tx := lt.Tx
	t := Transaction{TransactionIdentifier: TransactionIdentifier{Hash: s.svc.HashString(tx.Hash)}, Operations: []Operation{}}
	add := func(typ string, acct bchain.EthAddress, v *big.Int, cur *Currency, related int64) int64 {
		op := Operation{OperationIdentifier: OperationIdentifier{Index: int64(len(t.Operations))}, Type: typ,
			Account: s.ethAcct(acct), Amount: &Amount{Value: v.String(), Currency: cur}}
		if !lt.Pending {
			op.Status = opSuccess
		}
		if related >= 0 {
			op.RelatedOperations = []OperationIdentifier{{Index: related}}
		}
		t.Operations = append(t.Operations, op)
		return op.OperationIdentifier.Index
	}
	move := func(typ string, from, to bchain.EthAddress, v *big.Int, cur *Currency) {
		if v == nil || v.Sign() == 0 {
			return
		}
		debit := add(typ, from, new(big.Int).Neg(v), cur, -1)
		add(typ, to, v, cur, debit)
	}
	ok := true
	if rc := tx.Receipt; rc != nil {
		// Before Byzantium a receipt has no status: the trace's top frame
		// tells (api refuses such a tx without a trace).
		ok = rc.Status == bchain.EthStatusSuccess || rc.Status == bchain.EthStatusUnknown && lt.TopError == ""
		s.ethFees(lt, add)
		t.Metadata = map[string]any{"gas_used": rc.GasUsed, "success": ok}
	}
	if !ok {
		return t
	}
	if to := tx.To; to != nil {
		move(opCall, tx.From, *to, tx.Value, s.cur)
	} else if rc := tx.Receipt; rc != nil && rc.ContractAddress != nil {
		move(opCreate, tx.From, *rc.ContractAddress, tx.Value, s.cur)
	}
	for _, it := range lt.Internal {
		typ := opInternalCall
		switch it.Type {
		case bchain.EthInternalCreate:
			typ = opInternalCreate
		case bchain.EthInternalSelfDestruct:
			typ = opSelfDestruct
		}
		move(typ, it.From, it.To, it.Value, s.cur)
	}
	var zero bchain.EthAddress
	for _, tt := range tx.Transfers {
		if tt.Standard != bchain.TokenERC20 || tt.Value == nil || tt.Value.Sign() == 0 {
			continue
		}
		cur := s.tokenCurrency(tt.Contract, lt.Tokens[tt.Contract])
		debit := int64(-1)
		if tt.From != zero {
			debit = add(opERC20, tt.From, new(big.Int).Neg(tt.Value), cur, -1)
		}
		if tt.To != zero {
			add(opERC20, tt.To, tt.Value, cur, debit)
		}
	}
	return t
}

// ethFees books a mined tx's fee (see ethTransaction).
func (s *Server) ethFees(lt *api.EthLedgerTx, add func(string, bchain.EthAddress, *big.Int, *Currency, int64) int64) {
	tx, rc := lt.Tx, lt.Tx.Receipt
	price := rc.EffectiveGasPrice
	if price == nil {
		price = tx.GasPrice // nodes from before the receipt field: the legacy price
	}
	if price == nil {
		return
	}
	gas := new(big.Int).SetUint64(rc.GasUsed)
	fee := new(big.Int).Mul(price, gas)
	if rc.BlobGasPrice != nil {
		fee.Add(fee, new(big.Int).Mul(rc.BlobGasPrice, new(big.Int).SetUint64(rc.BlobGasUsed)))
	}
	l1 := rc.L1Fee()
	if l1 != nil {
		fee.Add(fee, l1)
	}
	if fee.Sign() == 0 {
		return
	}
	debit := add(opFee, tx.From, new(big.Int).Neg(fee), s.cur, -1)
	credit := func(typ string, to bchain.EthAddress, v *big.Int) {
		if v.Sign() > 0 {
			add(typ, to, v, s.cur, debit)
		}
	}
	tip := new(big.Int).Set(price)
	if lt.BaseFee != nil {
		tip.Sub(tip, lt.BaseFee)
		if tip.Sign() < 0 {
			tip.SetInt64(0)
		}
	}
	credit(opPriorityFee, lt.Miner, tip.Mul(tip, gas))
	if s.eth.EthKind() == bchain.EthKindOPStack {
		if lt.BaseFee != nil {
			credit(opBaseFee, opBaseFeeVault, new(big.Int).Mul(lt.BaseFee, gas))
		}
		if l1 != nil {
			credit(opL1Fee, opL1FeeVault, l1)
		}
	}
}
