package api

// silentpayments.go: the Silent Payments tweaks of a block
// (db/optional/silentpayments), which the -silentpayments fronts
// (BlindBit Oracle v1's routes and the BIP352 index-server routes) shape.

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/silentpayments"
)

// TweakQueries answers the tweaks of a block for light wallets: what
// they need to find their silent payments with one EC multiplication per
// eligible tx.
type TweakQueries interface {
	// TweakTip is the index's tip and its network.
	TweakTip(ctx context.Context) (*TweakTip, error)
	// BlockTweaks is the block at height (a decimal parameter) with its
	// eligible txs; withKeys adds the taproot outputs' keys (one more row
	// read per tx).
	BlockTweaks(ctx context.Context, height string, withKeys bool) (*BlockTweaks, error)
}

// TweakTip is the tip the tweak index has reached.
type TweakTip struct {
	Height  uint32
	Hash    string
	Network string
}

// BlockTweaks is a block's eligible txs in block order.
type BlockTweaks struct {
	Height uint32
	Hash   string
	Time   int64
	Txs    []TweakTx
}

// TweakTx is one eligible tx: its tweak (33-byte compressed point, hex),
// its taproot outputs with their spent state at the tip, the highest of
// their values and the highest unspent one (the cut-through value; Live
// reports whether any output is unspent, as one may be worth 0).
type TweakTx struct {
	Txid             string
	Tweak            string
	Outputs          []TweakOutput
	Highest, Unspent uint64
	Live             bool
}

// TweakOutput is a taproot output of an eligible tx; Script is its
// output script in hex, filled when asked for.
type TweakOutput struct {
	Vout   uint32
	Value  uint64
	Script string
	Spent  bool
}

// errTweaksOff answers on an index built without the tweak index.
var errTweaksOff = userErr("Silent Payments index is not enabled: start blockbook with -silentpaymentsindex (or \"silent_payments_index\": true) on an empty datadir")

// tweakView opens a view of an index that keeps the tweaks.
func (s *UtxoService) tweakView() (*view, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	if on, err := db.OptionalMarked(v.snap, silentpayments.Name); err != nil || !on {
		v.release()
		if err == nil {
			err = errTweaksOff
		}
		return nil, err
	}
	if !v.hasTip {
		v.release()
		return nil, userErr("the index holds no block yet")
	}
	return v, nil
}

// TweakTip implements TweakQueries.
func (s *UtxoService) TweakTip(ctx context.Context) (*TweakTip, error) {
	v, err := s.tweakView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	return &TweakTip{Height: v.tip.Height, Hash: v.tip.Hash.String(), Network: s.backend.Params.Network}, nil
}

// parseTweakHeight reads a block height parameter: decimal digits only,
// at most the tip.
func parseTweakHeight(param string, tip uint32) (uint32, error) {
	if param == "" || len(param) > 10 || param[0] == '+' || param[0] == '-' {
		return 0, userErr("invalid block height %q: give a decimal number", param)
	}
	h, err := strconv.ParseUint(param, 10, 32)
	if err != nil {
		return 0, userErr("invalid block height %q: give a decimal number", param)
	}
	if h > uint64(tip) {
		return 0, userErr("block height %d is above the tip %d", h, tip)
	}
	return uint32(h), nil
}

// tweakBlock opens a view of an index that keeps the tweaks and reads the
// block at the height parameter; the caller releases the view.
func (s *UtxoService) tweakBlock(height string) (*view, uint32, *db.BlockMeta, error) {
	v, err := s.tweakView()
	if err != nil {
		return nil, 0, nil, err
	}
	h, err := parseTweakHeight(height, v.tip.Height)
	var meta *db.BlockMeta
	if err == nil {
		meta, err = db.ReadBlockMeta(v.snap, h)
	}
	if err == nil && meta == nil {
		err = fmt.Errorf("%w: no height row for block %d below the tip", db.ErrCorrupt, h)
	}
	if err != nil {
		v.release()
		return nil, 0, nil, err
	}
	return v, h, meta, nil
}

// BlockTweaks implements TweakQueries.
func (s *UtxoService) BlockTweaks(ctx context.Context, height string, withKeys bool) (*BlockTweaks, error) {
	v, h, meta, err := s.tweakBlock(height)
	if err != nil {
		return nil, err
	}
	defer v.release()
	rows, err := silentpayments.BlockTweaks(v.snap, h)
	if err != nil {
		return nil, err
	}
	out := &BlockTweaks{Height: h, Hash: meta.Hash.String(), Time: meta.Time, Txs: make([]TweakTx, len(rows))}
	pos := make([]db.TxPos, len(rows))
	for i, r := range rows {
		pos[i] = db.TxPos{Height: h, Index: r.Index}
	}
	txids, err := db.ReadTxidsAt(v.snap, pos)
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := TweakTx{Txid: txids[i].String(), Tweak: hex.EncodeToString(r.Tweak[:]), Highest: r.Highest, Unspent: r.Unspent, Live: r.Live,
			Outputs: make([]TweakOutput, len(r.Outputs))}
		for j, o := range r.Outputs {
			t.Outputs[j] = TweakOutput{Vout: o.Vout, Value: o.Value, Spent: r.Spent[j]}
		}
		if withKeys {
			if err := fillTweakScripts(v.snap, txids[i], &t); err != nil {
				return nil, err
			}
		}
		out.Txs[i] = t
	}
	return out, nil
}

// fillTweakScripts reads the output scripts of t's taproot outputs from
// the tx's txAddresses row.
func fillTweakScripts(r db.Reader, txid bchain.Hash, t *TweakTx) error {
	ta, err := db.ReadTxOutputs(r, txid)
	if err != nil {
		return err
	}
	if ta == nil {
		return fmt.Errorf("%w: tweak row of tx %s, which has no txAddresses row", db.ErrCorrupt, txid)
	}
	for j := range t.Outputs {
		n := t.Outputs[j].Vout
		if int(n) >= len(ta.Outputs) {
			return fmt.Errorf("%w: tweak row of tx %s names output %d of %d", db.ErrCorrupt, txid, n, len(ta.Outputs))
		}
		t.Outputs[j].Script = hex.EncodeToString(ta.Outputs[n].Desc)
	}
	return nil
}

var _ TweakQueries = (*UtxoService)(nil)
