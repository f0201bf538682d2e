package sphttp

// bip352.go: the BIP352 index-server specification's routes under
// /bip352/ (getinfo, tweaks and the optional compute-index and utxos),
// with its shapes: errors are {"error": {"code", "message", "details"}},
// tweaks an object naming the block and the filters applied.

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/internal/listen"
)

// specVersion is the version getinfo reports.
const specVersion = "1.0.0"

func (s *Server) bip352Routes() {
	s.mux.Handle("GET /bip352/getinfo", s.handler(writeSpecError, s.specInfo))
	s.mux.Handle("GET /bip352/tweaks/{height}", s.handler(writeSpecError, s.specTweaks))
	s.mux.Handle("GET /bip352/compute-index/{height}", s.handler(writeSpecError, s.specIndex))
	s.mux.Handle("GET /bip352/utxos/{height}", s.handler(writeSpecError, s.bbUtxos))
	s.mux.HandleFunc("/bip352/", func(w http.ResponseWriter, r *http.Request) {
		writeSpecError(w, http.StatusNotFound, "unknown route "+strconv.Quote(listen.Bound(r.URL.Path, listen.MaxEcho)))
	})
}

// writeSpecError answers an error in the specification's shape.
func writeSpecError(w http.ResponseWriter, status int, msg string) {
	listen.SafeHeaders(w, "application/json; charset=utf-8")
	type detail struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Details string `json:"details"`
	}
	b, _ := json.Marshal(struct {
		Error detail `json:"error"`
	}{detail{status, http.StatusText(status), msg}}) // strings and ints always encode
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// specNetwork names a network as the specification does.
func specNetwork(n string) string {
	if n == "testnet3" {
		return "testnet"
	}
	return n
}

func (s *Server) specInfo(ctx context.Context, _ *http.Request) (any, error) {
	tip, err := s.q.TweakTip(ctx)
	if err != nil {
		return nil, err
	}
	return struct {
		Version     string `json:"version"`
		Network     string `json:"network"`
		BlockHeight uint32 `json:"block_height"`
		DustLimit   uint64 `json:"dust_limit"`
		FilterSpent string `json:"filter_spent"`
	}{specVersion, specNetwork(tip.Network), tip.Height, 0, "optional"}, nil
}

// specFilters reads filterSpent (0/1 or false/true; default 0) and
// dustLimit (default 0).
func specFilters(r *http.Request) (filterSpent bool, dust uint64, err error) {
	switch v := r.URL.Query().Get("filterSpent"); v {
	case "", "0", "false":
	case "1", "true":
		filterSpent = true
	default:
		return false, 0, &api.Error{Msg: "invalid filterSpent " + strconv.Quote(listen.Bound(v, listen.MaxEcho)) + ": give 0, 1, false or true"}
	}
	dust, err = uintParam(r, "dustLimit", 0)
	return filterSpent, dust, err
}

// specBlock is the part every block answer of the specification has.
type specBlock struct {
	Height      uint32 `json:"height"`
	Hash        string `json:"hash"`
	DustLimit   uint64 `json:"dust_limit"`
	FilterSpent int    `json:"filter_spent"`
}

func newSpecBlock(b *api.BlockTweaks, filterSpent bool, dust uint64) specBlock {
	sb := specBlock{Height: b.Height, Hash: b.Hash, DustLimit: dust}
	if filterSpent {
		sb.FilterSpent = 1
	}
	return sb
}

// specTweaks is /bip352/tweaks: with filterSpent the txs with an unspent
// taproot output worth at least dustLimit, without it every tx whose
// highest taproot output reaches dustLimit.
func (s *Server) specTweaks(ctx context.Context, r *http.Request) (any, error) {
	filterSpent, dust, err := specFilters(r)
	if err != nil {
		return nil, err
	}
	b, err := s.q.BlockTweaks(ctx, r.PathValue("height"), false)
	if err != nil {
		return nil, err
	}
	return struct {
		specBlock
		Tweaks []string `json:"tweaks"`
	}{newSpecBlock(b, filterSpent, dust), tweaks(b, filterSpent, dust)}, nil
}

// specIndexTx is one entry of compute-index: the tx, its tweak and the
// first 8 bytes of each served taproot output key, in hex.
type specIndexTx struct {
	Txid    string   `json:"txid"`
	Tweak   string   `json:"tweak"`
	Outputs []string `json:"outputs"`
}

// specIndex is /bip352/compute-index: the served txs with their outputs'
// short keys (with filterSpent, only the unspent outputs).
func (s *Server) specIndex(ctx context.Context, r *http.Request) (any, error) {
	filterSpent, dust, err := specFilters(r)
	if err != nil {
		return nil, err
	}
	b, err := s.q.BlockTweaks(ctx, r.PathValue("height"), true)
	if err != nil {
		return nil, err
	}
	index := []specIndexTx{}
	for i := range b.Txs {
		t := &b.Txs[i]
		if !keep(t, filterSpent, dust) {
			continue
		}
		e := specIndexTx{Txid: t.Txid, Tweak: t.Tweak, Outputs: []string{}}
		for _, o := range t.Outputs {
			if (filterSpent && o.Spent) || len(o.Script) != 68 {
				continue
			}
			e.Outputs = append(e.Outputs, o.Script[4:20]) // the key follows OP_1 OP_PUSH32
		}
		index = append(index, e)
	}
	return struct {
		specBlock
		Index []specIndexTx `json:"index"`
	}{newSpecBlock(b, filterSpent, dust), index}, nil
}
