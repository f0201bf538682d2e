package mesh

import (
	"context"
	"encoding/hex"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// Pseudo-accounts: what an output script without an address holds (bare
// multisig, non-standard scripts) is booked to "script:<hex of the
// script>", so that every output belongs to an account whose balance
// /account/balance answers; value burnt to outputs the index never keeps
// (OP_RETURN) is booked to "unspendable", whose balance is not tracked.
const (
	scriptPrefix       = "script:"
	unspendableAccount = "unspendable"
	maxScriptLen       = 10_000 // consensus's script size limit
)

// account names the holder of an output by its index descriptor.
func (s *Server) account(desc bchain.AddrDesc) *AccountIdentifier {
	if len(desc) == 0 {
		return &AccountIdentifier{Address: unspendableAccount}
	}
	if a, ok := s.codec.DescAddress(desc); ok {
		return &AccountIdentifier{Address: a}
	}
	return &AccountIdentifier{Address: scriptPrefix + hex.EncodeToString(desc)}
}

// accountDesc reads an account identifier back into the descriptor.
func (s *Server) accountDesc(a *AccountIdentifier) (bchain.AddrDesc, error) {
	if a == nil {
		return nil, fail(errBadRequest, "account_identifier is required")
	}
	if a.SubAccount != nil {
		return nil, fail(errBadAccount, "sub-accounts do not exist on this chain")
	}
	switch {
	case a.Address == unspendableAccount:
		return nil, fail(errBadAccount, "the balance of the unspendable pseudo-account is not tracked")
	case strings.HasPrefix(a.Address, scriptPrefix):
		h := a.Address[len(scriptPrefix):]
		desc, err := hex.DecodeString(h)
		if err != nil || len(desc) == 0 || len(desc) > maxScriptLen {
			return nil, fail(errBadAccount, "%q is not a script pseudo-account", truncate(a.Address, 80))
		}
		return desc, nil
	}
	desc, err := s.codec.AddrDesc(a.Address)
	if err != nil || len(desc) == 0 {
		return nil, failWith(errBadAccount, err, "%q is not an address of this chain", truncate(a.Address, 80))
	}
	return desc, nil
}

// checkCurrencies accepts only the chain's coin.
func (s *Server) checkCurrencies(cs []Currency) error {
	for _, c := range cs {
		if c.Symbol != s.cur.Symbol || c.Decimals != s.cur.Decimals {
			return fail(errBadCurrency, "%s with %d decimals; this chain has %s with %d",
				truncate(c.Symbol, 20), c.Decimals, s.cur.Symbol, s.cur.Decimals)
		}
	}
	return nil
}

type accountBalanceResponse struct {
	BlockIdentifier BlockIdentifier `json:"block_identifier"`
	Balances        []*Amount       `json:"balances"`
}

func (s *Server) accountBalance(ctx context.Context, body []byte) (any, error) {
	var req accountBalanceRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	desc, err := s.accountDesc(req.AccountIdentifier)
	if err != nil {
		return nil, err
	}
	if err := s.checkCurrencies(req.Currencies); err != nil {
		return nil, err
	}
	id, err := s.resolve(ctx, req.BlockIdentifier)
	if err != nil {
		return nil, err
	}
	hash, err := parseHash(id.Hash)
	if err != nil {
		return nil, err
	}
	// The ledger checks in its own snapshot that the block is still the
	// one resolved: a reorg in between is error 4, asked again.
	bal, _, err := s.ledger.LedgerBalance(ctx, desc, uint32(id.Index), hash)
	if err != nil {
		return nil, err
	}
	return &accountBalanceResponse{BlockIdentifier: id, Balances: []*Amount{s.amount(bal)}}, nil
}

type accountCoinsResponse struct {
	BlockIdentifier BlockIdentifier `json:"block_identifier"`
	Coins           []Coin          `json:"coins"`
}

func (s *Server) accountCoins(ctx context.Context, body []byte) (any, error) {
	var req accountCoinsRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	desc, err := s.accountDesc(req.AccountIdentifier)
	if err != nil {
		return nil, err
	}
	if req.IncludeMempool == nil {
		return nil, fail(errBadRequest, "include_mempool is required")
	}
	if err := s.checkCurrencies(req.Currencies); err != nil {
		return nil, err
	}
	// The coins and the tip they are of come from one snapshot.
	lc, err := s.ledger.LedgerCoins(ctx, desc, *req.IncludeMempool)
	if err != nil {
		return nil, err
	}
	if lc == nil {
		return nil, fail(errUnavailable, "the index holds no block yet")
	}
	out := &accountCoinsResponse{BlockIdentifier: s.blockID(lc.Height, lc.Hash), Coins: make([]Coin, len(lc.Coins))}
	for i, u := range lc.Coins {
		out.Coins[i] = Coin{CoinIdentifier: coinID(s.svc.HashString(u.Txid), u.Vout), Amount: *s.amount(u.Value)}
	}
	return out, nil
}

type mempoolResponse struct {
	TransactionIdentifiers []TransactionIdentifier `json:"transaction_identifiers"`
}

func (s *Server) mempool(ctx context.Context, body []byte) (any, error) {
	return s.mempoolList(ctx, body, s.ledger.LedgerMempool)
}

// mempoolList answers /mempool from either chain type's pending txids.
func (s *Server) mempoolList(ctx context.Context, body []byte, pending func(context.Context) []bchain.Hash) (any, error) {
	var req networkRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	txids := pending(ctx)
	out := &mempoolResponse{TransactionIdentifiers: make([]TransactionIdentifier, len(txids))}
	for i, t := range txids {
		out.TransactionIdentifiers[i] = TransactionIdentifier{Hash: s.svc.HashString(t)}
	}
	return out, nil
}

// mempoolTxid reads a /mempool/transaction request's txid.
func (s *Server) mempoolTxid(body []byte) (bchain.Hash, error) {
	var req mempoolTransactionRequest
	if err := s.read(body, &req); err != nil {
		return bchain.Hash{}, err
	}
	return parseTxid(req.TransactionIdentifier)
}

func (s *Server) mempoolTransaction(ctx context.Context, body []byte) (any, error) {
	txid, err := s.mempoolTxid(body)
	if err != nil {
		return nil, err
	}
	lt, err := s.ledger.LedgerTx(ctx, txid)
	if err != nil {
		return nil, err
	}
	if lt == nil || !lt.Pending {
		return nil, fail(errTxNotFound, "tx %s is not in the mempool", txid)
	}
	t := s.transaction(lt)
	return &transactionResponse{Transaction: &t}, nil
}
