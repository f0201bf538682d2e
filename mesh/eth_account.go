package mesh

import (
	"context"
	"errors"
	"slices"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// ethAccountBalance answers an account's balances at a block (the tip
// by default): ETH and every ERC-20 it held until then, or those the
// currencies (a token by metadata.contract) or the sub-account (a token
// contract) select. A token asked for that the account never held is 0.
func (s *Server) ethAccountBalance(ctx context.Context, body []byte) (any, error) {
	var req accountBalanceRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	desc, token, err := s.ethAccount(req.AccountIdentifier)
	if err != nil {
		return nil, err
	}
	wantWei, tokens, err := s.ethCurrencies(req.Currencies)
	if err != nil {
		return nil, err
	}
	all := len(req.Currencies) == 0 && token == nil
	if token != nil {
		if len(req.Currencies) > 0 {
			if _, ok := tokens[*token]; !ok || wantWei || len(tokens) != 1 {
				return nil, fail(errBadCurrency, "the currencies differ from the sub-account's token")
			}
		}
		tokens[*token] = Currency{}
	}
	id, err := s.resolve(ctx, req.BlockIdentifier)
	if err != nil {
		return nil, err
	}
	hash, err := parseHash(id.Hash)
	if err != nil {
		return nil, err
	}
	bal, err := s.eth.EthLedgerBalances(ctx, desc, uint32(id.Index), hash, all || len(tokens) > 0)
	if errors.Is(err, api.ErrTooMany) {
		return nil, failWith(errRequestRejected, err, "%v", err)
	}
	if err != nil {
		return nil, err
	}
	out := &accountBalanceResponse{BlockIdentifier: id, Balances: []*Amount{}}
	if all || wantWei {
		out.Balances = append(out.Balances, &Amount{Value: bal.Wei.String(), Currency: s.cur})
	}
	for _, tb := range bal.Tokens {
		_, asked := tokens[tb.Info.Contract]
		if all || asked {
			out.Balances = append(out.Balances, &Amount{Value: tb.Value.String(), Currency: s.tokenCurrency(tb.Info.Contract, &tb.Info)})
			delete(tokens, tb.Info.Contract)
		}
	}
	for c, cur := range tokens { // never held
		if cur.Symbol == "" {
			cur = *s.tokenCurrency(c, nil)
		}
		out.Balances = append(out.Balances, &Amount{Value: "0", Currency: &cur})
	}
	return out, nil
}

func (s *Server) ethMempool(ctx context.Context, body []byte) (any, error) {
	return s.mempoolList(ctx, body, s.eth.EthLedgerMempool)
}

func (s *Server) ethMempoolTransaction(ctx context.Context, body []byte) (any, error) {
	txid, err := s.mempoolTxid(body)
	if err != nil {
		return nil, err
	}
	lt, err := s.eth.EthLedgerPending(ctx, txid)
	if err != nil {
		return nil, err
	}
	if lt == nil {
		return nil, fail(errTxNotFound, "tx %s is not in the mempool", s.svc.HashString(txid))
	}
	t := s.ethTransaction(lt)
	return &transactionResponse{Transaction: &t}, nil
}

// ethSearchSets gathers, per filter given, the confirmed txs it matches:
// an account's (or address's) from the address index, in which a row's
// txs are in block order; a txid's where the node mined it. Coins do not
// exist on this chain.
func (s *Server) ethSearchSets(ctx context.Context, req *searchRequest) ([]map[bchain.Hash]txPlace, error) {
	if req.CoinIdentifier != nil {
		return nil, fail(errRequestRejected, "an account-model chain has no coins")
	}
	if req.Currency != nil {
		return nil, fail(errRequestRejected, "the currency filter is not served on Ethereum-type chains")
	}
	var sets []map[bchain.Hash]txPlace
	var accounts []string
	if req.AccountIdentifier != nil {
		if req.AccountIdentifier.SubAccount != nil {
			return nil, fail(errBadAccount, "a search names an account without a sub-account")
		}
		accounts = append(accounts, req.AccountIdentifier.Address)
	}
	if req.Address != nil {
		accounts = append(accounts, *req.Address)
	}
	for _, a := range accounts {
		desc, err := s.ethAddress(a)
		if err != nil {
			return nil, err
		}
		refs, err := s.eth.EthLedgerHistory(ctx, desc, maxSearchTxs)
		if errors.Is(err, api.ErrTooMany) {
			return nil, failWith(errRequestRejected, err, "%v", err)
		}
		if err != nil {
			return nil, err
		}
		set := map[bchain.Hash]txPlace{}
		for i, pos := 0, 0; i < len(refs); i++ { // newest block first, each block's txs in block order
			if i > 0 && refs[i].Height != refs[i-1].Height {
				pos = 0
			}
			set[refs[i].Txid] = txPlace{refs[i].Height, pos}
			pos++
		}
		sets = append(sets, set)
	}
	if req.TransactionIdentifier != nil {
		txid, err := parseTxid(req.TransactionIdentifier)
		if err != nil {
			return nil, err
		}
		set := map[bchain.Hash]txPlace{}
		h, ok, err := s.eth.EthLedgerTxHeight(ctx, txid)
		if err != nil {
			return nil, err
		}
		if ok {
			set[txid] = txPlace{h, 0}
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// ethBlockTransactions renders txs of the index's block at height, which
// it reads once.
func (s *Server) ethBlockTransactions(ctx context.Context, height uint32, txids []bchain.Hash) ([]blockTransaction, error) {
	h := int64(height)
	id, err := s.resolve(ctx, &PartialBlockIdentifier{Index: &h})
	if err != nil {
		return nil, err
	}
	lb, err := s.ethLedgerBlock(ctx, id, txids)
	if err != nil {
		return nil, err
	}
	out := make([]blockTransaction, len(txids))
	for i, txid := range txids {
		k := slices.IndexFunc(lb.Txs, func(lt api.EthLedgerTx) bool { return lt.Tx.Hash == txid })
		if k < 0 {
			return nil, fail(errUnavailable, "tx %s moved while read (a reorg)", s.svc.HashString(txid))
		}
		out[i] = blockTransaction{BlockIdentifier: id, Transaction: s.ethTransaction(&lb.Txs[k])}
	}
	return out, nil
}
