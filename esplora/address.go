package esplora

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// The address and scripthash routes: stats, txs, txs/chain[/:last_seen],
// txs/mempool and utxo; and address-prefix.

type scriptStats struct {
	FundedTxoCount int64 `json:"funded_txo_count"`
	FundedTxoSum   int64 `json:"funded_txo_sum"`
	SpentTxoCount  int64 `json:"spent_txo_count"`
	SpentTxoSum    int64 `json:"spent_txo_sum"`
	TxCount        int64 `json:"tx_count"`
}

func statsOf(s api.ScriptStats) scriptStats {
	return scriptStats{FundedTxoCount: s.FundedTxoCount, FundedTxoSum: s.FundedTxoSum,
		SpentTxoCount: s.SpentTxoCount, SpentTxoSum: s.SpentTxoSum, TxCount: s.TxCount}
}

type utxoValue struct {
	Txid   string   `json:"txid"`
	Vout   uint32   `json:"vout"`
	Status txStatus `json:"status"`
	Value  int64    `json:"value"`
}

// script resolves an address or a script hash to the output script; nil
// (no error) for a script hash no indexed tx has touched.
func (s *Server) script(ctx context.Context, kind, id string) ([]byte, error) {
	if kind == "address" {
		desc, err := s.svc.AddrDesc(id)
		if err != nil {
			return nil, badRequest("Invalid Bitcoin address")
		}
		return desc, nil
	}
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != 32 {
		return nil, badRequest("Invalid scripthash")
	}
	// Pending txs' scripts are found too; nil means no tx touched it.
	script, _, err := s.scripts.ScriptByHash(ctx, [32]byte(b))
	return script, err
}

func (s *Server) routeScript(ctx context.Context, r *http.Request, p []string, n int) (*reply, error) {
	route := ""
	switch {
	case n == 2:
	case n == 3 && (p[2] == "txs" || p[2] == "utxo"):
		route = p[2]
	case n == 4 && p[2] == "txs" && (p[3] == "chain" || p[3] == "mempool"):
		route = "txs/" + p[3]
	case n == 5 && p[2] == "txs" && p[3] == "chain":
		route = "txs/chain"
	default:
		return nil, errNoRoute
	}
	script, err := s.script(ctx, p[0], p[1])
	if err != nil {
		return nil, err
	}
	switch route {
	case "":
		return s.stats(ctx, p[0], p[1], script)
	case "utxo":
		return s.utxos(ctx, script)
	}
	confirmed, pending, err := s.history(ctx, script)
	if err != nil {
		return nil, err
	}
	var page []bchain.Hash
	switch route {
	case "txs":
		page = s.firstPage(confirmed, pending, r.URL.Query().Get("after_txid"))
	case "txs/mempool":
		page = pending[:min(maxMempoolTxs, len(pending))]
	default:
		page = chainPage(confirmed, p[4])
	}
	return s.txList(ctx, page)
}

func (s *Server) stats(ctx context.Context, kind, id string, script []byte) (*reply, error) {
	var bal api.ScriptBalance
	if script != nil {
		b, err := s.scripts.ScriptBalance(ctx, script)
		if err != nil {
			return nil, err
		}
		bal = *b
	}
	return jsonReply(map[string]any{kind: id, "chain_stats": statsOf(bal.Chain), "mempool_stats": statsOf(bal.Mempool)})
}

// history is a script's txids, newest first: the confirmed ones and the
// pending ones apart.
func (s *Server) history(ctx context.Context, script []byte) (confirmed, pending []bchain.Hash, err error) {
	if script == nil {
		return nil, nil, nil
	}
	hist, err := s.scripts.ScriptHistory(ctx, script, s.opts.MaxHistory)
	if errors.Is(err, api.ErrTooManyTxs) {
		return nil, nil, badRequest("Too many history entries")
	}
	if err != nil {
		return nil, nil, err
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Pos < 0 {
			pending = append(pending, hist[i].Txid)
		} else {
			confirmed = append(confirmed, hist[i].Txid)
		}
	}
	return confirmed, pending, nil
}

// firstPage is /txs: up to 50 pending txs then the first 25 confirmed.
// With after_txid (mempool.space's paging, which mempool.js sends) the
// list continues after that tx: the rest of the pending ones then the
// first confirmed page, or the confirmed page after it. An after_txid
// that is not a txid is ignored; one not in the history gives no txs.
func (s *Server) firstPage(confirmed, pending []bchain.Hash, after string) []bchain.Hash {
	if after != "" {
		if id, err := bchain.ParseHash(after); err == nil {
			if i := slices.Index(pending, id); i >= 0 {
				pending = pending[i+1:]
			} else {
				return chainPage(confirmed, after)
			}
		}
	}
	out := slices.Clone(pending[:min(maxMempoolTxs, len(pending))])
	return append(out, confirmed[:min(chainTxsPerPage, len(confirmed))]...)
}

// chainPage is 25 confirmed txs after last_seen (from the newest when it
// is empty or not a txid; none when it is not in the history).
func chainPage(confirmed []bchain.Hash, lastSeen string) []bchain.Hash {
	start := 0
	if id, err := bchain.ParseHash(lastSeen); err == nil {
		i := slices.Index(confirmed, id)
		if i < 0 {
			return nil
		}
		start = i + 1
	}
	return confirmed[start:min(start+chainTxsPerPage, len(confirmed))]
}

// txList renders txs in Esplora's shape.
func (s *Server) txList(ctx context.Context, ids []bchain.Hash) (*reply, error) {
	out := make([]txValue, 0, len(ids))
	for _, id := range ids {
		tx, err := s.q.EsploraTx(ctx, id)
		if err != nil {
			return nil, err
		}
		if tx == nil { // a pending tx dropped since the history was read
			continue
		}
		out = append(out, s.txValueOf(tx))
	}
	return jsonReply(out)
}

func (s *Server) utxos(ctx context.Context, script []byte) (*reply, error) {
	out := []utxoValue{}
	if script == nil {
		return jsonReply(out)
	}
	utxos, err := s.scripts.ScriptUtxos(ctx, script)
	if err != nil {
		return nil, err
	}
	if len(utxos) > s.opts.MaxUtxos {
		return nil, badRequest(fmt.Sprintf("Too many unspent transaction outputs (>%d). Contact support to raise limits.", s.opts.MaxUtxos))
	}
	heights := make([]uint32, 0, len(utxos))
	for _, u := range utxos {
		if u.Height > 0 {
			heights = append(heights, u.Height)
		}
	}
	refs, err := s.q.EsploraBlockRefs(ctx, heights)
	if err != nil {
		return nil, err
	}
	for _, u := range utxos {
		v := utxoValue{Txid: u.Txid.String(), Vout: u.Vout, Value: u.Value}
		if ref, ok := refs[u.Height]; ok && u.Height > 0 {
			v.Status = statusOf(&ref)
		}
		out = append(out, v)
	}
	return jsonReply(out)
}

// addressPrefix answers up to 10 indexed addresses beginning with prefix.
func (s *Server) addressPrefix(ctx context.Context, prefix string) (*reply, error) {
	if s.opts.AddressSearch == nil {
		return nil, badRequest("address search disabled")
	}
	found, err := s.opts.AddressSearch.AddressesWithPrefix(ctx, prefix, addressSearchLimit)
	if err != nil {
		return nil, err
	}
	if found == nil {
		found = []string{}
	}
	return jsonReply(found)
}
