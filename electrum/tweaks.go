package electrum

// tweaks.go: Cake Wallet's blockchain.tweaks.subscribe (its electrs
// fork's wire): the tweaks of up to maxTweakBlocks blocks, one
// notification per block, then a final "done". The client scans them
// itself; the server learns nothing about its keys.

import (
	"context"
	"strconv"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

const (
	methodTweaks = "blockchain.tweaks.subscribe"
	// maxTweakBlocks caps the blocks one call sends; a client asking for
	// more gets them in several calls (Cake Wallet subscribes again from
	// the block after the last one it got, on "done").
	maxTweakBlocks = 1000
	// tweakCallBudget is how long one call sends blocks before it ends
	// early with "done" (under callTimeout: the client continues).
	tweakCallBudget = 20 * time.Second
)

// tweakQueries is the service's tweak index; nil when it has none.
func (s *Server) tweakQueries() api.TweakQueries {
	if q, ok := s.scripts.(api.TweakQueries); ok {
		return q
	}
	q, _ := s.svc.(api.TweakQueries)
	return q
}

// tweakTxNote is a tx of a block: its tweak and its outputs by vout, each
// [x-only key, value], with the spender ({txid, height}) as a third
// element in historical mode.
type tweakTxNote struct {
	Tweak   string           `json:"tweak"`
	Outputs map[string][]any `json:"output_pubkeys"`
}

// doneNote is the last notification, and (as the fork answers) the
// call's result: a client that reads the result as one more message
// sees a "params" key and ignores it.
func doneNote() map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": methodTweaks, "params": []any{map[string]string{"message": "done"}}}
}

// tweaksSubscribe sends the tweaks of count blocks from height (0: the
// tip), each block as {"<height>": {"<txid>": {"tweak", "output_pubkeys":
// {"<vout>": [key, value]}}}}; a tx whose outputs are all spent is left
// out unless historical (then each spent output names its spender).
func tweaksSubscribe(ctx context.Context, ss *session, p params) (any, error) {
	q := ss.s.tweakQueries()
	if q == nil {
		return nil, newErr(codeMethodNotFound, "this server keeps no Silent Payments index")
	}
	height, err := p.nonNegInt(0, "height", 0, true)
	if err != nil {
		return nil, err
	}
	count, err := p.nonNegInt(1, "count", 1, false)
	if err != nil {
		return nil, err
	}
	if count < 1 {
		return nil, invalidParams("count must be at least 1")
	}
	historical, err := p.boolean(2, "historical")
	if err != nil {
		return nil, err
	}
	tip, err := q.TweakTip(ctx)
	if err != nil {
		return nil, err
	}
	if height == 0 {
		height = int(tip.Height)
	}
	if height > int(tip.Height) {
		return nil, badRequest("height %d is above the tip %d", height, tip.Height)
	}
	last := min(height+min(count, maxTweakBlocks)-1, int(tip.Height))
	deadline := time.Now().Add(tweakCallBudget)
	for h := height; h <= last; h++ {
		note, err := ss.s.tweakBlockNote(ctx, q, h, historical)
		if err != nil {
			if h > height && ctx.Err() != nil {
				break // out of time: the client continues from h
			}
			return nil, err
		}
		ss.sendNote(methodTweaks, map[string]any{strconv.Itoa(h): note})
		meterBlock(ctx)
		if time.Now().After(deadline) {
			break
		}
	}
	ss.sendNote(methodTweaks, map[string]string{"message": "done"})
	return doneNote(), nil
}

// tweakBlockNote is one block's txs as the fork shows them, by txid. Out
// of historical mode a tx is left out once every taproot output is spent
// (cut-through by tx, as BlindBit's /tweaks), but a tx still sent keeps
// its spent outputs: the fork drops them one by one, and a BIP352 scanner
// that misses the k = 0 output never looks for k = 1.
func (s *Server) tweakBlockNote(ctx context.Context, q api.TweakQueries, h int, historical bool) (map[string]tweakTxNote, error) {
	b, err := q.BlockTweaks(ctx, strconv.Itoa(h), true)
	if err != nil {
		return nil, err
	}
	out := make(map[string]tweakTxNote, len(b.Txs))
	for _, tx := range b.Txs {
		if !historical && !tx.Live {
			continue
		}
		n := tweakTxNote{Tweak: tx.Tweak, Outputs: map[string][]any{}}
		for _, o := range tx.Outputs {
			if len(o.Script) != 68 { // 5120 ‖ 32-byte key, in hex
				continue
			}
			item := []any{o.Script[4:], o.Value}
			if o.Spent && historical {
				item = append(item, s.spender(ctx, tx.Txid, o.Vout))
			}
			n.Outputs[strconv.FormatUint(uint64(o.Vout), 10)] = item
		}
		if len(n.Outputs) > 0 {
			out[tx.Txid] = n
		}
	}
	return out, nil
}

// spender is a spent output's spending tx as {txid, height}, or null when
// the outpoint index cannot tell.
func (s *Server) spender(ctx context.Context, txid string, vout uint32) any {
	q := s.outpointQueries()
	id, err := bchain.ParseHash(txid)
	if q == nil || err != nil {
		return nil
	}
	st, err := q.OutpointStatus(ctx, id, vout)
	if err != nil || !st.Spent {
		return nil
	}
	return map[string]any{"txid": st.SpenderTxid.String(), "height": st.SpenderHeight}
}
