package electrum

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// parseScripthash reads a script hash as clients send it: the sha256 of
// the script in hex, its bytes reversed.
func parseScripthash(p params) ([32]byte, error) {
	var sh [32]byte
	s, err := p.str(0, "scripthash")
	if err != nil {
		return sh, err
	}
	if len(s) != 64 {
		return sh, badRequest("%s is not a valid script hash", truncate(s, 80))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return sh, badRequest("%s is not a valid script hash", truncate(s, 80))
	}
	for i := range b {
		sh[i] = b[31-i]
	}
	return sh, nil
}

// scripthashHex renders a script hash as clients send it.
func scripthashHex(sh [32]byte) string {
	var r [32]byte
	for i := range sh {
		r[i] = sh[31-i]
	}
	return hex.EncodeToString(r[:])
}

// ScriptHash is the Electrum script hash of an output script, as clients
// send it (for tests and tools).
func ScriptHash(script []byte) string { return scripthashHex(sha256.Sum256(script)) }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// script finds the script of a script hash, confirmed or pending (nil: no
// tx has touched it).
func (s *Server) script(ctx context.Context, sh [32]byte) ([]byte, error) {
	script, _, err := s.scripts.ScriptByHash(ctx, sh)
	if err != nil {
		return nil, fmt.Errorf("script of %s: %w", scripthashHex(sh), err)
	}
	return script, nil
}

// historyItem is one entry of get_history and get_mempool.
type historyItem struct {
	TxHash string `json:"tx_hash"`
	Height int64  `json:"height"`
	Fee    *int64 `json:"fee,omitempty"`
}

// history lists a script's txs as Electrum does: confirmed in chain
// order, then the pending ones (height 0, or -1 with a pending parent).
// From 1.6 the pending ones are in the canonical order: height 0 first,
// then by txid; before, in the index's mempool order.
func (s *Server) history(ctx context.Context, script []byte, v16 bool) ([]historyItem, error) {
	if script == nil {
		return []historyItem{}, nil
	}
	txs, err := s.scripts.ScriptHistory(ctx, script, s.cfg.MaxHistory)
	if err != nil {
		return nil, err
	}
	meterRows(ctx, len(txs))
	out := make([]historyItem, 0, len(txs))
	firstPending := len(txs)
	for i := range txs {
		tx := &txs[i]
		if tx.Pos < 0 {
			if firstPending == len(txs) {
				firstPending = i
			}
			fee, h := tx.Fee, int64(0)
			if tx.UnconfirmedInputs {
				h = -1
			}
			out = append(out, historyItem{TxHash: tx.Txid.String(), Height: h, Fee: &fee})
			continue
		}
		out = append(out, historyItem{TxHash: tx.Txid.String(), Height: int64(tx.Height)})
	}
	if v16 {
		pending := out[firstPending:]
		slices.SortStableFunc(pending, func(a, b historyItem) int {
			if a.Height != b.Height {
				return int(b.Height - a.Height) // 0 before -1
			}
			return strings.Compare(a.TxHash, b.TxHash)
		})
	}
	return out, nil
}

// status is the Electrum status of a history: the sha256 of
// "txid:height:" of each entry in order, nil when there is none.
func status(items []historyItem) *string {
	if len(items) == 0 {
		return nil
	}
	h := sha256.New()
	for _, it := range items {
		h.Write([]byte(it.TxHash))
		h.Write([]byte{':'})
		h.Write([]byte(strconv.FormatInt(it.Height, 10)))
		h.Write([]byte{':'})
	}
	st := hex.EncodeToString(h.Sum(nil))
	return &st
}

func scripthashHistory(ctx context.Context, ss *session, p params) (any, error) {
	sh, err := parseScripthash(p)
	if err != nil {
		return nil, err
	}
	script, err := ss.s.script(ctx, sh)
	if err != nil {
		return nil, err
	}
	return ss.s.history(ctx, script, ss.v16())
}

func scripthashMempool(ctx context.Context, ss *session, p params) (any, error) {
	items, err := scripthashHistory(ctx, ss, p)
	if err != nil {
		return nil, err
	}
	all := items.([]historyItem)
	pending := []historyItem{}
	for _, it := range all {
		if it.Fee != nil {
			pending = append(pending, it)
		}
	}
	return pending, nil
}

type balance struct {
	Confirmed   int64 `json:"confirmed"`
	Unconfirmed int64 `json:"unconfirmed"`
}

func scripthashBalance(ctx context.Context, ss *session, p params) (any, error) {
	sh, err := parseScripthash(p)
	if err != nil {
		return nil, err
	}
	script, err := ss.s.script(ctx, sh)
	if err != nil || script == nil {
		return balance{}, err
	}
	b, err := ss.s.scripts.ScriptBalance(ctx, script)
	if err != nil {
		return nil, err
	}
	return balance{Confirmed: b.Confirmed(), Unconfirmed: b.Unconfirmed()}, nil
}

type unspent struct {
	TxPos  uint32 `json:"tx_pos"`
	Value  int64  `json:"value"`
	TxHash string `json:"tx_hash"`
	Height uint32 `json:"height"`
}

func scripthashUnspent(ctx context.Context, ss *session, p params) (any, error) {
	sh, err := parseScripthash(p)
	if err != nil {
		return nil, err
	}
	script, err := ss.s.script(ctx, sh)
	if err != nil || script == nil {
		return []unspent{}, err
	}
	utxos, err := ss.s.scripts.ScriptUtxos(ctx, script)
	if err != nil {
		return nil, err
	}
	meterRows(ctx, len(utxos))
	out := make([]unspent, len(utxos))
	for i, u := range utxos {
		out[i] = unspent{TxPos: u.Vout, Value: u.Value, TxHash: u.Txid.String(), Height: u.Height}
	}
	return out, nil
}

// scripthashSubscribe answers the status and notifies its changes. A
// history over the limit cannot be subscribed to.
func scripthashSubscribe(ctx context.Context, ss *session, p params) (any, error) {
	sh, err := parseScripthash(p)
	if err != nil {
		return nil, err
	}
	sub, ok := ss.subs[sh]
	if !ok {
		if e := ss.admitSub(); e != nil {
			return nil, e
		}
		sub = &subscription{}
	}
	st, script, err := ss.s.hub.status(ctx, sh, sub.script, ss.v16())
	if err != nil {
		if !ok {
			ss.s.hub.releaseSub(ss)
		}
		return nil, err
	}
	sub.script, sub.status = script, st
	if !ok {
		sub.extra = len(script)
		ss.subs[sh] = sub
		ss.s.hub.subscribe(ss, sh, sub.extra)
	}
	return st, nil
}

func scripthashUnsubscribe(_ context.Context, ss *session, p params) (any, error) {
	sh, err := parseScripthash(p)
	if err != nil {
		return nil, err
	}
	sub, ok := ss.subs[sh]
	if !ok {
		return false, nil
	}
	delete(ss.subs, sh)
	ss.s.hub.unsubscribe(ss, sh, sub.extra)
	return true, nil
}

// statusOf computes the status of a script hash from the index (script
// nil: look it up); it returns the script found too.
func (s *Server) statusOf(ctx context.Context, sh [32]byte, script []byte, v16 bool) (*string, []byte, error) {
	if script == nil {
		var err error
		if script, err = s.script(ctx, sh); err != nil {
			return nil, nil, err
		}
	}
	items, err := s.history(ctx, script, v16)
	if err != nil {
		return nil, script, err
	}
	return status(items), script, nil
}
