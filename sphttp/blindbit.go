package sphttp

// blindbit.go: BlindBit Oracle v1's routes, with its shapes: errors are
// {"error": "..."}, tweaks bare arrays of hex strings.

import (
	"context"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/internal/listen"
)

func (s *Server) blindbitRoutes() {
	shape := listen.ErrorShape(listen.WriteJSONError)
	s.mux.Handle("GET /info", s.handler(shape, s.bbInfo))
	s.mux.Handle("GET /block-height", s.handler(shape, s.bbHeight))
	s.mux.Handle("GET /block-hash/{height}", s.handler(shape, s.bbHash))
	s.mux.Handle("GET /tweaks/{height}", s.handler(shape, s.bbTweaks(true)))
	s.mux.Handle("GET /tweak-index/{height}", s.handler(shape, s.bbTweaks(false)))
	s.mux.Handle("GET /utxos/{height}", s.handler(shape, s.bbUtxos))
	s.mux.Handle("GET /filter/{kind}/{height}", s.handler(shape, s.bbFilter))
	s.mux.Handle("GET /spent-index/{height}", s.handler(shape, s.bbSpentIndex))
}

// bbFilterType is the filter_type BlindBit's filters carry.
const bbFilterType = 4

// bbFilter is /filter/new-utxos (the x-only keys of the block's new
// taproot outputs) and /filter/spent (the spent index's short hashes): a
// BIP158 set keyed by the block hash.
func (s *Server) bbFilter(ctx context.Context, r *http.Request) (any, error) {
	kind := r.PathValue("kind")
	if kind != "new-utxos" && kind != "spent" {
		return nil, &api.Error{Msg: "invalid filter type " + strconv.Quote(listen.Bound(kind, listen.MaxEcho)) + ": new-utxos or spent"}
	}
	b, err := s.q.BlockTaproot(ctx, r.PathValue("height"))
	if err != nil {
		return nil, err
	}
	items := b.NewKeys
	if kind == "spent" {
		items = b.Spent
	}
	f, err := b.Filter(items)
	if err != nil {
		return nil, err
	}
	return struct {
		FilterType  int    `json:"filter_type"`
		BlockHeight uint32 `json:"block_height"`
		BlockHash   string `json:"block_hash"`
		Data        string `json:"data"`
	}{bbFilterType, b.Height, b.Hash, hex.EncodeToString(f)}, nil
}

// bbSpentIndex is /spent-index: the block's spent index, each 8-byte
// hash in hex.
func (s *Server) bbSpentIndex(ctx context.Context, r *http.Request) (any, error) {
	b, err := s.q.BlockTaproot(ctx, r.PathValue("height"))
	if err != nil {
		return nil, err
	}
	data := make([]string, len(b.Spent))
	for i, h := range b.Spent {
		data[i] = hex.EncodeToString(h)
	}
	return struct {
		BlockHash string   `json:"block_hash"`
		Data      []string `json:"data"`
	}{b.Hash, data}, nil
}

// bbInfo is /info: the network, the tip and which tweak answers the
// server gives (all of them: the index keeps every tweak with its outputs).
func (s *Server) bbInfo(ctx context.Context, _ *http.Request) (any, error) {
	tip, err := s.q.TweakTip(ctx)
	if err != nil {
		return nil, err
	}
	return struct {
		Network                        string `json:"network"`
		Height                         uint32 `json:"height"`
		TweaksOnly                     bool   `json:"tweaks_only"`
		TweaksFullBasic                bool   `json:"tweaks_full_basic"`
		TweaksFullWithDustFilter       bool   `json:"tweaks_full_with_dust_filter"`
		TweaksCutThroughWithDustFilter bool   `json:"tweaks_cut_through_with_dust_filter"`
	}{blindbitNetwork(tip.Network), tip.Height, false, true, true, true}, nil
}

// blindbitNetwork names a network as BlindBit's config does.
func blindbitNetwork(n string) string {
	switch n {
	case "mainnet":
		return "main"
	case "testnet3":
		return "testnet"
	}
	return n
}

func (s *Server) bbHeight(ctx context.Context, _ *http.Request) (any, error) {
	tip, err := s.q.TweakTip(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]uint32{"block_height": tip.Height}, nil
}

func (s *Server) bbHash(ctx context.Context, r *http.Request) (any, error) {
	b, err := s.q.BlockTweaks(ctx, r.PathValue("height"), false)
	if err != nil {
		return nil, err
	}
	return map[string]string{"block_hash": b.Hash}, nil
}

// bbTweaks is /tweaks (cutThrough: txs with an unspent taproot output
// worth at least dustLimit) and /tweak-index (every tweak; with dustLimit,
// those whose highest taproot output, spent or not, reaches it).
func (s *Server) bbTweaks(cutThrough bool) func(ctx context.Context, r *http.Request) (any, error) {
	return func(ctx context.Context, r *http.Request) (any, error) {
		dust, err := uintParam(r, "dustLimit", 0)
		if err != nil {
			return nil, err
		}
		b, err := s.q.BlockTweaks(ctx, r.PathValue("height"), false)
		if err != nil {
			return nil, err
		}
		return tweaks(b, cutThrough, dust), nil
	}
}

// bbUtxo is one taproot output of an eligible tx in BlindBit's shape.
type bbUtxo struct {
	Txid         string `json:"txid"`
	Vout         uint32 `json:"vout"`
	Value        uint64 `json:"value"`
	ScriptPubKey string `json:"scriptpubkey"`
	BlockHeight  uint32 `json:"block_height"`
	BlockHash    string `json:"block_hash"`
	Timestamp    int64  `json:"timestamp"`
	Spent        bool   `json:"spent"`
}

// bbUtxos is /utxos: the taproot outputs of the block's eligible txs, in
// block and vout order, each with its spent state at the tip.
func (s *Server) bbUtxos(ctx context.Context, r *http.Request) (any, error) {
	b, err := s.q.BlockTweaks(ctx, r.PathValue("height"), true)
	if err != nil {
		return nil, err
	}
	return utxos(b), nil
}

func utxos(b *api.BlockTweaks) []bbUtxo {
	out := []bbUtxo{}
	for _, t := range b.Txs {
		for _, o := range t.Outputs {
			out = append(out, bbUtxo{Txid: t.Txid, Vout: o.Vout, Value: o.Value, ScriptPubKey: o.Script,
				BlockHeight: b.Height, BlockHash: b.Hash, Timestamp: b.Time, Spent: o.Spent})
		}
	}
	return out
}
