package mesh

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// Search's paging: Mesh's default page, and our caps on a page and on the
// txs one search may gather (an account's history is read whole to be
// ordered newest first).
const (
	defaultSearchLimit = 100
	maxSearchLimit     = 1000
	maxSearchTxs       = 100_000
)

type searchRequest struct {
	netRequest
	Operator              *string                `json:"operator,omitempty"`
	MaxBlock              *int64                 `json:"max_block,omitempty"`
	Offset                *int64                 `json:"offset,omitempty"`
	Limit                 *int64                 `json:"limit,omitempty"`
	TransactionIdentifier *TransactionIdentifier `json:"transaction_identifier,omitempty"`
	AccountIdentifier     *AccountIdentifier     `json:"account_identifier,omitempty"`
	CoinIdentifier        *CoinIdentifier        `json:"coin_identifier,omitempty"`
	Currency              *Currency              `json:"currency,omitempty"`
	Status                *string                `json:"status,omitempty"`
	Type                  *string                `json:"type,omitempty"`
	Address               *string                `json:"address,omitempty"`
	Success               *bool                  `json:"success,omitempty"`
}

type blockTransaction struct {
	BlockIdentifier BlockIdentifier `json:"block_identifier"`
	Transaction     Transaction     `json:"transaction"`
}

type searchResponse struct {
	Transactions []blockTransaction `json:"transactions"`
	TotalCount   int64              `json:"total_count"`
	NextOffset   *int64             `json:"next_offset,omitempty"`
}

// txPlace orders the matches: newest block first, within a block the last
// tx first.
type txPlace struct {
	height uint32
	pos    int
}

// searchTransactions answers by account (or address), txid and coin, each
// a set of confirmed txs, joined by the operator ("and" by default); the
// status, success, type and currency filters then select among them.
func (s *Server) searchTransactions(ctx context.Context, body []byte) (any, error) {
	var req searchRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	or := false
	if req.Operator != nil {
		switch *req.Operator {
		case "and":
		case "or":
			or = true
		default:
			return nil, fail(errBadRequest, "operator %q is neither and nor or", truncate(*req.Operator, 20))
		}
	}
	offset, limit, err := searchPage(req.Offset, req.Limit)
	if err != nil {
		return nil, err
	}
	if req.Currency != nil {
		if err := s.checkCurrencies([]Currency{*req.Currency}); err != nil {
			return nil, err
		}
	}
	searchSets := s.searchSets
	if s.eth != nil {
		searchSets = s.ethSearchSets
	}
	sets, err := searchSets(ctx, &req)
	if err != nil {
		return nil, err
	}
	if len(sets) == 0 {
		return nil, fail(errRequestRejected, "a search names an account, an address, a transaction or a coin")
	}
	matches := joinSets(sets, or)
	tip, err := s.tip(ctx)
	if err != nil {
		return nil, err
	}
	maxBlock := tip.Index
	if req.MaxBlock != nil {
		maxBlock = min(maxBlock, *req.MaxBlock)
	}
	// Every operation of a confirmed tx succeeded: a search for failed
	// ones, or for another status, finds nothing.
	none := (req.Success != nil && !*req.Success) || (req.Status != nil && *req.Status != opSuccess)
	ids := make([]bchain.Hash, 0, len(matches))
	for id, p := range matches {
		if int64(p.height) <= maxBlock && !none {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b bchain.Hash) int {
		pa, pb := matches[a], matches[b]
		return cmp.Or(cmp.Compare(pb.height, pa.height), cmp.Compare(pb.pos, pa.pos))
	})
	return s.searchAnswer(ctx, ids, matches, req.Type, offset, limit)
}

// searchAnswer renders the page of ids from offset. A type filter needs
// each tx's operations: it is applied before paging, on at most
// maxSearchTxs txs.
func (s *Server) searchAnswer(ctx context.Context, ids []bchain.Hash, matches map[bchain.Hash]txPlace, typ *string, offset, limit int64) (*searchResponse, error) {
	out := &searchResponse{Transactions: []blockTransaction{}}
	render := ids
	if typ == nil {
		render = nil
		if n := int64(len(ids)); offset < n {
			render = ids[offset : offset+min(limit, n-offset)]
		}
	}
	// Each tx is kept only if it is on the page: a type filter renders up
	// to maxSearchTxs txs, and holds only a page of them.
	err := s.confirmedTransactions(ctx, render, matches, func(bt blockTransaction) {
		if typ != nil && !hasType(bt.Transaction, *typ) {
			return
		}
		n := out.TotalCount
		out.TotalCount++
		if typ == nil || n >= offset && int64(len(out.Transactions)) < limit {
			out.Transactions = append(out.Transactions, bt)
		}
	})
	if err != nil {
		return nil, err
	}
	if typ == nil {
		out.TotalCount = int64(len(ids))
	}
	if next := offset + int64(len(out.Transactions)); next < out.TotalCount {
		out.NextOffset = &next
	}
	return out, nil
}

func searchPage(off, lim *int64) (offset, limit int64, err error) {
	offset, limit = 0, defaultSearchLimit
	if off != nil {
		if *off < 0 {
			return 0, 0, fail(errBadRequest, "offset %d is negative", *off)
		}
		offset = *off
	}
	if lim != nil {
		if *lim < 0 {
			return 0, 0, fail(errBadRequest, "limit %d is negative", *lim)
		}
		limit = min(*lim, maxSearchLimit)
	}
	return offset, limit, nil
}

// searchSets gathers, per filter given, the confirmed txs it matches with
// their places.
func (s *Server) searchSets(ctx context.Context, req *searchRequest) ([]map[bchain.Hash]txPlace, error) {
	var sets []map[bchain.Hash]txPlace
	var accounts []*AccountIdentifier
	if req.AccountIdentifier != nil {
		accounts = append(accounts, req.AccountIdentifier)
	}
	if req.Address != nil {
		accounts = append(accounts, &AccountIdentifier{Address: *req.Address})
	}
	scripts := s.svc.Capabilities().Scripts
	for _, a := range accounts {
		desc, err := s.accountDesc(a)
		if err != nil {
			return nil, err
		}
		if scripts == nil {
			return nil, fail(errNotImplemented, "this chain has no script queries")
		}
		hist, err := scripts.ScriptHistory(ctx, desc, maxSearchTxs)
		if err != nil {
			return nil, err
		}
		set := map[bchain.Hash]txPlace{}
		for _, h := range hist {
			if h.Pos >= 0 { // confirmed
				set[h.Txid] = txPlace{h.Height, h.Pos}
			}
		}
		sets = append(sets, set)
	}
	if req.TransactionIdentifier != nil {
		txid, err := parseTxid(req.TransactionIdentifier)
		if err != nil {
			return nil, err
		}
		set, err := s.placed(ctx, txid)
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	if req.CoinIdentifier != nil {
		set, err := s.coinTxs(ctx, req.CoinIdentifier.Identifier)
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// placed is the set of txid alone when it is confirmed.
func (s *Server) placed(ctx context.Context, txid bchain.Hash) (map[bchain.Hash]txPlace, error) {
	set := map[bchain.Hash]txPlace{}
	scripts := s.svc.Capabilities().Scripts
	if scripts == nil {
		return set, nil
	}
	h, pos, ok, err := scripts.TxPosition(ctx, txid)
	if err != nil {
		return nil, err
	}
	if ok {
		set[txid] = txPlace{h, pos}
	}
	return set, nil
}

// coinTxs are the confirmed txs that created and spent a coin.
func (s *Server) coinTxs(ctx context.Context, id string) (map[bchain.Hash]txPlace, error) {
	txs, vs, ok := strings.Cut(id, ":")
	vout, err := strconv.ParseUint(vs, 10, 32)
	txid, herr := parseHash(txs)
	if !ok || err != nil || herr != nil || vout >= 1<<20 {
		return nil, fail(errBadRequest, "coin %q is not <txid>:<vout>", truncate(id, 100))
	}
	set, err := s.placed(ctx, txid)
	if err != nil || len(set) == 0 {
		return set, err
	}
	spends, err := s.esq.EsploraSpends(ctx, txid, int(vout)+1)
	if err != nil {
		return nil, err
	}
	if int(vout) < len(spends) && spends[vout].Spent && spends[vout].Block != nil {
		more, err := s.placed(ctx, spends[vout].Txid)
		if err != nil {
			return nil, err
		}
		for k, v := range more {
			set[k] = v
		}
	}
	return set, nil
}

func joinSets(sets []map[bchain.Hash]txPlace, or bool) map[bchain.Hash]txPlace {
	out := map[bchain.Hash]txPlace{}
	for k, v := range sets[0] {
		out[k] = v
	}
	for _, set := range sets[1:] {
		if or {
			for k, v := range set {
				out[k] = v
			}
			continue
		}
		for k := range out {
			if _, ok := set[k]; !ok {
				delete(out, k)
			}
		}
	}
	return out
}

func hasType(t Transaction, typ string) bool {
	return slices.ContainsFunc(t.Operations, func(op Operation) bool { return op.Type == typ })
}

// confirmedTransactions renders confirmed txs with their blocks, in the
// order given, handing each to keep; a run of txs of one block reads that
// block once.
func (s *Server) confirmedTransactions(ctx context.Context, ids []bchain.Hash, matches map[bchain.Hash]txPlace, keep func(blockTransaction)) error {
	render := s.blockTransactions
	if s.eth != nil {
		render = s.ethBlockTransactions
	}
	for i := 0; i < len(ids); {
		height, j := matches[ids[i]].height, i+1
		for j < len(ids) && matches[ids[j]].height == height {
			j++
		}
		bts, err := render(ctx, height, ids[i:j])
		if err != nil {
			return err
		}
		for _, bt := range bts {
			keep(bt)
		}
		i = j
	}
	return nil
}

// blockTransactions renders txs of the index's block at height.
func (s *Server) blockTransactions(ctx context.Context, height uint32, txids []bchain.Hash) ([]blockTransaction, error) {
	out := make([]blockTransaction, len(txids))
	for i, txid := range txids {
		lt, blockHash, err := s.ledger.LedgerBlockTx(ctx, height, txid)
		if err != nil {
			return nil, err
		}
		if lt == nil {
			return nil, fail(errUnavailable, "tx %s moved while read (a reorg)", txid)
		}
		out[i] = blockTransaction{BlockIdentifier: s.blockID(height, blockHash), Transaction: s.transaction(lt)}
	}
	return out, nil
}
