package api

// silentpayments_page.go: a block's Silent Payments tweaks as a page of
// our own REST (/api/v2/sp-tweaks/<height>) and websocket
// (getSilentPaymentTweaks) APIs, so that a Blockbook client needs no
// second protocol: each eligible tx with its tweak and every taproot
// output (x-only key, value, spent state), which is all a BIP352 scan
// needs.

import (
	"context"
	"strconv"
)

// TweakPageQueries answers the per-block tweak page; Bitcoin-type
// services offer it, and answer that the index is off when it is.
type TweakPageQueries interface {
	SilentPaymentTweaks(ctx context.Context, height string, filterSpent bool, dustLimit uint64) (*TweakPage, error)
}

// TweakPage is a block's eligible txs in block order. With filterSpent a
// tx is left out once all its taproot outputs are spent, or when the
// unspent ones are worth less than dustLimit; without it, when its highest
// taproot output is (BlindBit's and BIP352's index server's rules).
type TweakPage struct {
	Height      uint32        `json:"height"`
	Hash        string        `json:"hash"`
	Time        int64         `json:"time"`
	FilterSpent bool          `json:"filterSpent"`
	DustLimit   uint64        `json:"dustLimit"`
	Txs         []TweakPageTx `json:"txs"`
}

// TweakPageTx is an eligible tx: its tweak (33-byte compressed point) and
// all its taproot outputs, spent ones too (a scanner that misses output
// k = 0 stops before k = 1).
type TweakPageTx struct {
	Txid    string            `json:"txid"`
	Tweak   string            `json:"tweak"`
	Outputs []TweakPageOutput `json:"outputs"`
}

// TweakPageOutput is a taproot output: its index, x-only key, value in
// satoshis (a decimal string, as Blockbook's amounts) and spent state.
type TweakPageOutput struct {
	N     uint32 `json:"n"`
	Key   string `json:"key"`
	Value string `json:"value"`
	Spent bool   `json:"spent,omitempty"`
}

// ParseTweakFilters reads the page's query: filterSpent (true/false/1/0,
// default false) and dustLimit (satoshis, default 0).
func ParseTweakFilters(filterSpent, dustLimit string) (bool, uint64, error) {
	var f bool
	switch filterSpent {
	case "", "0", "false":
	case "1", "true":
		f = true
	default:
		return false, 0, userErr("invalid filterSpent %q: give true, false, 1 or 0", bound(filterSpent))
	}
	var dust uint64
	if dustLimit != "" {
		var err error
		if dust, err = strconv.ParseUint(dustLimit, 10, 64); err != nil {
			return false, 0, userErr("invalid dustLimit %q: give a non-negative number of satoshis", bound(dustLimit))
		}
	}
	return f, dust, nil
}

func bound(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// KeepTweak reports whether a tx is served under the filters.
func KeepTweak(t *TweakTx, filterSpent bool, dust uint64) bool {
	if filterSpent {
		return t.Live && t.Unspent >= dust
	}
	return t.Highest >= dust
}

// SilentPaymentTweaks implements TweakPageQueries.
func (s *UtxoService) SilentPaymentTweaks(ctx context.Context, height string, filterSpent bool, dust uint64) (*TweakPage, error) {
	b, err := s.BlockTweaks(ctx, height, true)
	if err != nil {
		return nil, err
	}
	p := &TweakPage{Height: b.Height, Hash: b.Hash, Time: b.Time, FilterSpent: filterSpent, DustLimit: dust, Txs: []TweakPageTx{}}
	for i := range b.Txs {
		t := &b.Txs[i]
		if !KeepTweak(t, filterSpent, dust) {
			continue
		}
		pt := TweakPageTx{Txid: t.Txid, Tweak: t.Tweak, Outputs: make([]TweakPageOutput, 0, len(t.Outputs))}
		for _, o := range t.Outputs {
			if len(o.Script) != 68 { // 5120 ‖ the 32-byte key, in hex
				continue
			}
			pt.Outputs = append(pt.Outputs, TweakPageOutput{N: o.Vout, Key: o.Script[4:], Value: strconv.FormatUint(o.Value, 10), Spent: o.Spent})
		}
		p.Txs = append(p.Txs, pt)
	}
	return p, nil
}

var _ TweakPageQueries = (*UtxoService)(nil)
