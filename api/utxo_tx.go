package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// Tx answers tx/{txid}: the node's raw tx, decoded, with prevouts and spends
// from the index.
func (s *UtxoService) Tx(ctx context.Context, txidParam string) (*Tx, error) {
	return s.tx(ctx, txidParam, false)
}

// tx answers Tx, with the runes of its inputs and outputs when withRunes.
func (s *UtxoService) tx(ctx context.Context, txidParam string, withRunes bool) (*Tx, error) {
	txid, err := parseTxid(txidParam)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	tx, rec, err := s.loadTx(ctx, v, txid)
	if err != nil {
		return nil, err
	}
	out, err := s.renderTx(ctx, v, tx, rec, true)
	if err == nil && withRunes {
		err = s.newListRunes(v, true).add(out, rec.ta, rec.mtx)
	}
	return out, err
}

// txRecord is what we know of a tx beyond its bytes: the index's records
// when confirmed, the mempool's entry when pending (both nil when the tx
// came straight from the node).
type txRecord struct {
	ta   *db.TxAddresses
	meta *db.BlockMeta
	mtx  *mempool.Tx
	// spends of a confirmed tx's outputs, when spendsRead (a page reads
	// them for all its txs at once); else renderTx reads them.
	spends     map[uint32]*db.Spend
	spendsRead bool
}

// loadTx returns a decoded tx: confirmed from the index (bytes from the
// cache or the node), pending from the mempool, else from the node.
func (s *UtxoService) loadTx(ctx context.Context, v *view, txid bchain.Hash) (*bchain.Tx, txRecord, error) {
	ta, meta, err := s.confirmedTx(v, txid)
	if err != nil {
		return nil, txRecord{}, err
	}
	return s.loadTxWith(ctx, v, txid, readTx{ta: ta, meta: meta})
}

// readTx is what was read of a tx before loadTxWith: its index records
// (nil when the index does not hold it) and, when cacheRead, the tx cache's
// copy (nil when it has none).
type readTx struct {
	ta         *db.TxAddresses
	meta       *db.BlockMeta
	cached     []byte
	cacheRead  bool
	spends     map[uint32]*db.Spend // when spendsRead
	spendsRead bool
}

// loadTxWith is loadTx for a tx whose records were already read.
func (s *UtxoService) loadTxWith(ctx context.Context, v *view, txid bchain.Hash, rt readTx) (*bchain.Tx, txRecord, error) {
	ta, meta := rt.ta, rt.meta
	if ta == nil {
		if mtx := s.mempoolTx(txid); mtx != nil {
			return mtx.Tx, txRecord{mtx: mtx}, nil
		}
	}
	raw, err := rt.cached, error(nil)
	switch {
	case raw != nil:
	case rt.cacheRead:
		raw, err = s.nodeRawTx(ctx, txid, meta)
	default:
		raw, err = s.rawTx(ctx, v, txid, meta)
	}
	if errors.Is(err, bchain.ErrTxNotFound) {
		return nil, txRecord{}, &Error{Msg: fmt.Sprintf("Transaction '%s' not found", txid), Err: err}
	}
	if err != nil {
		return nil, txRecord{}, err
	}
	tx, err := s.parser.ParseTx(raw)
	if err != nil {
		return nil, txRecord{}, fmt.Errorf("tx %s: %w", txid, err)
	}
	return tx, txRecord{ta: ta, meta: meta, spends: rt.spends, spendsRead: rt.spendsRead}, nil
}

// confirmedTx returns the index's record of a tx and its block, or nils.
func (s *UtxoService) confirmedTx(v *view, txid bchain.Hash) (*db.TxAddresses, *db.BlockMeta, error) {
	ta, err := db.ReadTxAddresses(v.snap, txid)
	if err != nil || ta == nil {
		return nil, nil, err
	}
	meta, err := txBlock(v, txid, ta)
	if err != nil {
		return nil, nil, err
	}
	return ta, meta, nil
}

// txBlock returns the block of a confirmed tx; its absence means the
// index is damaged.
func txBlock(v *view, txid bchain.Hash, ta *db.TxAddresses) (*db.BlockMeta, error) {
	meta, err := db.ReadBlockMeta(v.snap, ta.Height)
	if err == nil && meta == nil {
		err = fmt.Errorf("%w: tx %s at height %d without block", db.ErrCorrupt, txid, ta.Height)
	}
	return meta, err
}

// rawTx reads a tx from the cache or the node, caching confirmed txs.
func (s *UtxoService) rawTx(ctx context.Context, v *view, txid bchain.Hash, meta *db.BlockMeta) ([]byte, error) {
	raw, err := db.ReadCachedTx(v.snap, txid)
	if err != nil || raw != nil {
		return raw, err
	}
	return s.nodeRawTx(ctx, txid, meta)
}

// nodeRawTx is rawTx after a miss of the cache.
func (s *UtxoService) nodeRawTx(ctx context.Context, txid bchain.Hash, meta *db.BlockMeta) ([]byte, error) {
	var inBlock bchain.Hash
	if meta != nil {
		inBlock = meta.Hash
	}
	raw, err := s.backend.Txs.RawTx(ctx, txid, inBlock)
	if err != nil {
		return nil, err
	}
	if meta != nil && s.cfg.TxCache != nil {
		if err := s.cfg.TxCache.WriteCachedTx(txid, raw); err != nil {
			s.log.Warn("caching tx failed", "txid", txid, "err", err)
		}
	}
	return raw, nil
}

// renderTx builds the API view of a decoded tx.
func (s *UtxoService) renderTx(ctx context.Context, v *view, tx *bchain.Tx, rec txRecord, withHex bool) (*Tx, error) {
	ta, meta := rec.ta, rec.meta
	out := &Tx{
		Txid: tx.Txid.String(), Version: tx.Version, LockTime: tx.LockTime,
		Vin: make([]Vin, len(tx.Vin)), Vout: make([]Vout, len(tx.Vout)),
		Size: tx.Size, VSize: tx.VSize, BlockHeight: -1, CoinSpecific: tx.Specific,
	}
	if withHex {
		out.Hex = hex.EncodeToString(tx.Raw)
	}
	spends := rec.spends
	if ta != nil {
		out.BlockHash = meta.Hash.String()
		out.BlockHeight = int64(ta.Height)
		out.Confirmations = v.confirmations(ta.Height)
		out.BlockTime = meta.Time
		if !rec.spendsRead {
			var err error
			if spends, err = db.ReadSpendsAt(v.snap, ta.Height, ta.Index); err != nil {
				return nil, err
			}
		}
	} else if rec.mtx != nil {
		out.BlockTime = rec.mtx.FirstSeen
	}
	var valueIn, valueOut uint64
	prevsKnown := true
	for i := range tx.Vin {
		in := &tx.Vin[i]
		vin := &out.Vin[i]
		*vin = Vin{N: i, Sequence: int64(in.Sequence)}
		if in.Coinbase {
			vin.Coinbase = hexString(in.ScriptSig)
			continue
		}
		vin.Txid, vin.Vout, vin.Hex = in.PrevTxid.String(), in.PrevVout, hexString(in.ScriptSig)
		if out.BlockHeight < 0 && in.Sequence < 0xfffffffe {
			out.Rbf = true // BIP125 signal; meaningful only while unconfirmed
		}
		var prev db.TxAddr
		var found bool
		switch {
		case ta != nil && i < len(ta.Inputs):
			prev, found = ta.Inputs[i], true
		case rec.mtx != nil && i < len(rec.mtx.Prevouts):
			p := rec.mtx.Prevouts[i]
			prev, found = db.TxAddr{Desc: p.Desc, Value: p.Value}, p.Known
		default:
			var err error
			if prev, found, err = s.unconfirmedPrevout(ctx, v, in); err != nil {
				return nil, err
			}
		}
		if !found {
			prevsKnown = false
			continue
		}
		vin.Value = NewAmount(prev.Value)
		valueIn += prev.Value
		vin.Addresses, vin.IsAddress = s.descAddresses(prev.Desc)
	}
	for n := range tx.Vout {
		o := &tx.Vout[n]
		vo := &out.Vout[n]
		*vo = Vout{Value: NewAmount(o.Value), N: n, Hex: hexString(o.Script), CoinSpecific: o.Specific}
		vo.Addresses, vo.IsAddress = s.outputAddresses(o.Script)
		if sp := spends[uint32(n)]; sp != nil {
			vo.Spent, vo.SpentTxID, vo.SpentIndex, vo.SpentHeight = true, sp.Txid.String(), int(sp.Vin), int(sp.Height)
		}
		valueOut += o.Value
	}
	setValues(out, tx, valueIn, valueOut, prevsKnown)
	s.confirmationETA(ctx, v, out)
	return out, nil
}

// hexString is hex.EncodeToString, with one allocation for a script of
// up to 128 bytes (EncodeToString makes two): a page has thousands.
func hexString(b []byte) string {
	var buf [256]byte
	if len(b) > len(buf)/2 {
		return hex.EncodeToString(b)
	}
	n := hex.Encode(buf[:], b)
	return string(buf[:n])
}

// setValues sets a tx's value, and its input value and fees when every
// prevout is known (coinbase txs have none).
func setValues(out *Tx, tx *bchain.Tx, valueIn, valueOut uint64, prevsKnown bool) {
	out.Value = NewAmount(valueOut)
	switch {
	case tx.IsCoinbase():
		out.ValueIn, out.Fees = NewAmount(0), NewAmount(0)
	case prevsKnown:
		out.ValueIn = NewAmount(valueIn)
		if fee, ok := txFee(valueIn, tx.ValueBalance, valueOut); ok {
			out.Fees = NewAmount(fee)
		}
	}
}

// txFee is inputs + valueBalance - outputs, or false when that is negative
// (an inconsistent node answer, never a real tx).
func txFee(valueIn uint64, valueBalance int64, valueOut uint64) (uint64, bool) {
	in := new(big.Int).SetUint64(valueIn)
	in.Add(in, big.NewInt(valueBalance))
	in.Sub(in, new(big.Int).SetUint64(valueOut))
	if in.Sign() < 0 || !in.IsUint64() {
		return 0, false
	}
	return in.Uint64(), true
}

// descAddresses renders an index descriptor; empty descriptors have none.
// The slice may be shared (see addrNames): callers must not modify it.
func (s *UtxoService) descAddresses(desc bchain.AddrDesc) ([]string, bool) {
	if len(desc) == 0 {
		return nil, false
	}
	return s.names.get(nameOfDesc, desc, func() ([]string, bool) {
		addrs, ok, err := s.parser.AddressesFromAddrDesc(desc)
		if err != nil {
			return nil, false
		}
		return addrs, ok
	})
}

// outputAddresses is the parser's OutputAddresses through the cache; the
// slice may be shared.
func (s *UtxoService) outputAddresses(script []byte) ([]string, bool) {
	return s.names.get(nameOfScript, script, func() ([]string, bool) { return s.parser.OutputAddresses(script) })
}

// unconfirmedPrevout resolves an input of a tx the index does not hold yet:
// from the index when the parent is confirmed, else from the node.
func (s *UtxoService) unconfirmedPrevout(ctx context.Context, v *view, in *bchain.Vin) (db.TxAddr, bool, error) {
	pta, err := db.ReadTxOutputs(v.snap, in.PrevTxid)
	if err != nil {
		return db.TxAddr{}, false, err
	}
	if pta != nil {
		if int(in.PrevVout) < len(pta.Outputs) {
			return pta.Outputs[in.PrevVout], true, nil
		}
		return db.TxAddr{}, false, nil
	}
	raw, err := s.backend.Txs.RawTx(ctx, in.PrevTxid, bchain.Hash{})
	if errors.Is(err, bchain.ErrTxNotFound) {
		return db.TxAddr{}, false, nil
	}
	if err != nil {
		return db.TxAddr{}, false, err
	}
	ptx, err := s.parser.ParseTx(raw)
	if err != nil || int(in.PrevVout) >= len(ptx.Vout) {
		return db.TxAddr{}, false, nil
	}
	o := ptx.Vout[in.PrevVout]
	return db.TxAddr{Desc: s.parser.OutputAddrDesc(o.Script), Value: o.Value}, true, nil
}

// renderLightTxs renders confirmed txs with renderLightTx, reading their
// rows together (lr adds their runes from those rows).
func (s *UtxoService) renderLightTxs(v *view, txids []bchain.Hash, lr *listRunes) ([]*Tx, error) {
	recs, err := pageRecords(v, txids)
	if err != nil {
		return nil, err
	}
	out := make([]*Tx, len(txids))
	for i, rec := range recs {
		if rec.ta == nil {
			return nil, fmt.Errorf("%w: indexed tx %s has no txAddresses row", db.ErrCorrupt, txids[i])
		}
		out[i] = s.renderLightTx(v, txids[i], rec)
		if err := lr.add(out[i], rec.ta, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// renderLightTx builds a tx from the index alone (details=txslight): no
// scripts, sizes or prevout references, but addresses, values and spends.
func (s *UtxoService) renderLightTx(v *view, txid bchain.Hash, rec readTx) *Tx {
	ta, meta, spends := rec.ta, rec.meta, rec.spends
	out := &Tx{
		Txid: txid.String(), Vin: make([]Vin, len(ta.Inputs)), Vout: make([]Vout, len(ta.Outputs)),
		BlockHash: meta.Hash.String(), BlockHeight: int64(ta.Height),
		Confirmations: v.confirmations(ta.Height), BlockTime: meta.Time,
	}
	var valueIn, valueOut uint64
	for i, in := range ta.Inputs {
		out.Vin[i] = Vin{N: i}
		if ta.Coinbase {
			continue
		}
		out.Vin[i].Value = NewAmount(in.Value)
		out.Vin[i].Addresses, out.Vin[i].IsAddress = s.descAddresses(in.Desc)
		valueIn += in.Value
	}
	for n, o := range ta.Outputs {
		vo := &out.Vout[n]
		*vo = Vout{Value: NewAmount(o.Value), N: n}
		vo.Addresses, vo.IsAddress = s.descAddresses(o.Desc)
		if vo.Addresses == nil {
			vo.Addresses = []string{}
		}
		if sp := spends[uint32(n)]; sp != nil {
			vo.Spent, vo.SpentTxID, vo.SpentIndex, vo.SpentHeight = true, sp.Txid.String(), int(sp.Vin), int(sp.Height)
		}
		valueOut += o.Value
	}
	out.Value = NewAmount(valueOut)
	switch {
	case ta.Coinbase:
		out.ValueIn, out.Fees = NewAmount(0), NewAmount(0)
	case bchain.HasShieldedPools(s.parser):
		// The index does not keep the value a tx moves from or to shielded
		// pools, so its fee is unknown here: show none rather than a wrong one.
		out.ValueIn = NewAmount(valueIn)
	case valueIn >= valueOut:
		out.ValueIn, out.Fees = NewAmount(valueIn), NewAmount(valueIn-valueOut)
	}
	return out
}
