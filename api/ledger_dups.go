package api

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// The ledger's view of the pre-BIP30 duplicate coinbases
// (bchain.CoinParams.DuplicateCoinbases). The index keeps one txAddresses
// row per txid, the later block's, and counts both coinbases' outputs in
// the address balances and UTXOs. The node's UTXO set lost the earlier
// outputs when the later coinbase overwrote them, so the ledger books
// them as the node does: created by the earlier block (LostAt), lost in
// the later one (Overwrites), never spendable; balances and coins from
// the later block on leave them out.

// duplicateAt finds the duplicate coinbase txid of the block at height,
// as the earlier (later false) or the later coinbase.
func (s *UtxoService) duplicateAt(txid bchain.Hash, height uint32, later bool) (bchain.DuplicateCoinbase, bool) {
	for _, d := range s.backend.Params.DuplicateCoinbases {
		if d.Txid == txid && ((!later && d.Height == height) || (later && d.Later == height)) {
			return d, true
		}
	}
	return bchain.DuplicateCoinbase{}, false
}

// bookedIn is the tx txid, whose txAddresses row is ta, as the block at
// height books it; false when the row is not that block's.
func (s *UtxoService) bookedIn(txid bchain.Hash, ta *db.TxAddresses, height uint32) (LedgerTx, bool) {
	if ta == nil {
		return LedgerTx{}, false
	}
	if ta.Height == height {
		t := confirmedLedgerTx(txid, ta)
		if _, ok := s.duplicateAt(txid, height, true); ok && ta.Coinbase {
			t.Overwrites = ta.Outputs // the same tx, so the same outputs
		}
		return t, true
	}
	if d, ok := s.duplicateAt(txid, height, false); ok && ta.Coinbase && ta.Height == d.Later {
		return LedgerTx{Txid: txid, Height: height, Coinbase: true, Outputs: ta.Outputs, LostAt: d.Later}, true
	}
	return LedgerTx{}, false
}

// LedgerBlockTx reads the tx and its block's hash in one snapshot.
func (s *UtxoService) LedgerBlockTx(_ context.Context, height uint32, txid bchain.Hash) (*LedgerTx, bchain.Hash, error) {
	v, err := s.newView()
	if err != nil {
		return nil, bchain.Hash{}, err
	}
	defer v.release()
	if !v.hasTip || height > v.tip.Height {
		return nil, bchain.Hash{}, nil
	}
	meta, err := db.ReadBlockMeta(v.snap, height)
	if err != nil {
		return nil, bchain.Hash{}, err
	}
	if meta == nil {
		return nil, bchain.Hash{}, fmt.Errorf("%w: no block at height %d below the tip", db.ErrCorrupt, height)
	}
	ta, err := db.ReadTxAddresses(v.snap, txid)
	if err != nil {
		return nil, bchain.Hash{}, err
	}
	t, ok := s.bookedIn(txid, ta, height)
	if !ok {
		return nil, meta.Hash, nil
	}
	if t.LostAt != 0 {
		// The table names the block; check that this chain's holds it.
		txids, err := db.ReadBlockTxids(v.snap, height)
		if err != nil {
			return nil, bchain.Hash{}, err
		}
		if !slices.Contains(txids, txid) {
			return nil, meta.Hash, nil
		}
	}
	return &t, meta.Hash, nil
}

// checkBlock tells whether the view's chain has the block hash at height.
func (v *view) checkBlock(height uint32, hash bchain.Hash) error {
	if !v.hasTip || height > v.tip.Height {
		return fmt.Errorf("%w: height %d is above the tip", ErrBlockChanged, height)
	}
	meta, err := db.ReadBlockMeta(v.snap, height)
	if err != nil {
		return err
	}
	if meta == nil {
		return fmt.Errorf("%w: no block at height %d below the tip", db.ErrCorrupt, height)
	}
	if meta.Hash != hash {
		return fmt.Errorf("%w: block %d is %s, not %s", ErrBlockChanged, height, meta.Hash, hash)
	}
	return nil
}

// lostValue is what the index counts for desc, after the block at height,
// in earlier duplicate coinbases' outputs that the node's UTXO set lost.
func (s *UtxoService) lostValue(v *view, desc bchain.AddrDesc, height uint32) (int64, error) {
	var lost int64
	for _, d := range s.backend.Params.DuplicateCoinbases {
		if d.Later > height {
			continue
		}
		ta, err := db.ReadTxAddresses(v.snap, d.Txid)
		if err != nil {
			return 0, err
		}
		if ta == nil || ta.Height != d.Later {
			return 0, fmt.Errorf("%w: duplicate coinbase %s has no txAddresses row of block %d", db.ErrCorrupt, d.Txid, d.Later)
		}
		for _, o := range ta.Outputs {
			if bytes.Equal(o.Desc, desc) {
				lost += int64(o.Value)
			}
		}
	}
	return lost, nil
}

// dropLost removes the earlier duplicate coinbases' outputs from coins
// once the later coinbase is in the view's chain.
func (s *UtxoService) dropLost(v *view, coins []ScriptUtxo) []ScriptUtxo {
	for _, d := range s.backend.Params.DuplicateCoinbases {
		if d.Later > v.tip.Height {
			continue
		}
		coins = slices.DeleteFunc(coins, func(u ScriptUtxo) bool { return u.Txid == d.Txid && u.Height == d.Height })
	}
	return coins
}
