package api

// silentpayments_filters.go: BlindBit Oracle v1's per-block BIP158 filters
// and spent index, computed when asked from the block's txAddresses rows
// (the index keeps every tx's outputs and its inputs' prevouts).

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"
	"github.com/btcsuite/btcd/btcutil/v2/gcs/builder"
	"github.com/btcsuite/btcd/chainhash/v2"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/internal/bip352"
)

// TweakFilterQueries answers a block's taproot filters for light wallets.
type TweakFilterQueries interface {
	// BlockTaproot is the block at height (a decimal parameter) with its
	// new taproot output keys and the short hashes of the taproot
	// outputs it spends.
	BlockTaproot(ctx context.Context, height string) (*BlockTaproot, error)
}

// BlockTaproot is what a block does to taproot outputs: NewKeys are the
// x-only keys of every taproot output it creates (every tx, eligible or
// not), Spent the first 8 bytes of sha256(outpoint ‖ block hash) of every
// taproot output it spends, the outpoint and the hash in their serialized
// byte order (BlindBit's spent index).
type BlockTaproot struct {
	Height  uint32
	Hash    string
	NewKeys [][]byte
	Spent   [][]byte
}

// Filter is the BIP158 Golomb-coded set (P 19, M 784931, keyed by the
// block hash) of items, serialized as BIP158 does (N, then the set).
func (b *BlockTaproot) Filter(items [][]byte) ([]byte, error) {
	h, err := chainhash.NewHashFromStr(b.Hash)
	if err != nil {
		return nil, err
	}
	f, err := gcs.BuildGCSFilter(builder.DefaultP, builder.DefaultM, builder.DeriveKey(h), items)
	if err != nil {
		return nil, err
	}
	return f.NBytes()
}

// BlockTaproot implements TweakFilterQueries.
func (s *UtxoService) BlockTaproot(ctx context.Context, height string) (*BlockTaproot, error) {
	v, h, meta, err := s.tweakBlock(height)
	if err != nil {
		return nil, err
	}
	defer v.release()
	txids, err := db.ReadBlockTxids(v.snap, h)
	if err != nil {
		return nil, err
	}
	tas, err := db.ReadManyTxAddresses(v.snap, txids)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &BlockTaproot{Height: h, Hash: meta.Hash.String(), NewKeys: [][]byte{}, Spent: [][]byte{}}
	blockHash := [32]byte(meta.Hash)
	slices.Reverse(blockHash[:]) // serialized order
	for i, ta := range tas {
		if ta == nil {
			return nil, fmt.Errorf("%w: tx %s of block %d has no txAddresses row", db.ErrCorrupt, txids[i], h)
		}
		for _, o := range ta.Outputs {
			if bip352.IsP2TR(o.Desc) {
				out.NewKeys = append(out.NewKeys, o.Desc[2:])
			}
		}
		for j, in := range ta.Inputs {
			if !bip352.IsP2TR(in.Desc) {
				continue
			}
			p := ta.Prevouts[j]
			op := make([]byte, 0, 68)
			for k := 31; k >= 0; k-- {
				op = append(op, p.Txid[k])
			}
			op = binary.LittleEndian.AppendUint32(op, p.Vout)
			sum := sha256.Sum256(append(op, blockHash[:]...))
			out.Spent = append(out.Spent, sum[:8])
		}
	}
	return out, nil
}

var _ TweakFilterQueries = (*UtxoService)(nil)
