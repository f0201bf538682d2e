package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// blockTxsPerPage is the page size of block tx lists (REST's only one),
// and MaxWsBlockPageSize the largest the websocket's getBlock may ask, as
// in Blockbook.
const (
	blockTxsPerPage    = 1000
	MaxWsBlockPageSize = 10000
)

// blockPaging is the paging of a block's n txs: pageSize 0 or less is the
// default page size, more than MaxWsBlockPageSize is capped.
func blockPaging(page, pageSize, n int) (int, int, int) {
	if pageSize <= 0 {
		pageSize = blockTxsPerPage
	}
	return clampPaging(page, pageSize, n, MaxWsBlockPageSize)
}

var errBlockNotFound = &Error{Msg: "Block not found"}

// resolveBlock turns a height or hash parameter into an indexed block.
func (s *core) resolveBlock(ctx context.Context, v *view, id string) (uint32, *db.BlockMeta, error) {
	bid, err := ParseBlockID(s.trimHex(id))
	if err != nil {
		return 0, nil, err
	}
	height := bid.Height
	if !bid.IsHeight {
		h, err := s.backend.Chain.BlockHeight(ctx, bid.Hash)
		if errors.Is(err, bchain.ErrBlockNotFound) {
			return 0, nil, errBlockNotFound
		}
		if err != nil {
			return 0, nil, err
		}
		height = h
	}
	meta, err := db.ReadBlockMeta(v.snap, height)
	if err != nil {
		return 0, nil, err
	}
	if meta == nil || (!bid.IsHeight && meta.Hash != bid.Hash) {
		return 0, nil, errBlockNotFound
	}
	return height, meta, nil
}

// BlockIndex answers block-index/{height} from the index. As Blockbook's,
// a height beyond the tip answers an empty hash (not an error) and an
// empty height the tip's hash; a height that is not a number is a 400.
func (s *core) BlockIndex(ctx context.Context, height string) (*BlockIndex, error) {
	var h uint64
	if height != "" {
		var err error
		h, err = strconv.ParseUint(height, 10, 64)
		if err != nil {
			return nil, userErr("Invalid block height '%s'", truncate(height, 100))
		}
		if h > math.MaxUint32 {
			return &BlockIndex{}, nil
		}
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if height == "" {
		if !v.hasTip {
			return &BlockIndex{}, nil
		}
		return &BlockIndex{BlockHash: s.hashString(v.tip.Hash)}, nil
	}
	meta, err := db.ReadBlockMeta(v.snap, uint32(h))
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return &BlockIndex{}, nil
	}
	return &BlockIndex{BlockHash: s.hashString(meta.Hash)}, nil
}

// loadBlock fetches and decodes an indexed block from the node.
func (s *UtxoService) loadBlock(ctx context.Context, v *view, id string) (*bchain.Block, *db.BlockMeta, error) {
	height, meta, err := s.resolveBlock(ctx, v, id)
	if err != nil {
		return nil, nil, err
	}
	blk, err := s.backend.Chain.Block(ctx, meta.Hash, height)
	if errors.Is(err, bchain.ErrBlockNotFound) {
		return nil, nil, errBlockNotFound
	}
	return blk, meta, err
}

// Block answers block/{height|hash} with a page of its txs.
func (s *UtxoService) Block(ctx context.Context, id string, page, pageSize int) (*Block, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	blk, meta, err := s.loadBlock(ctx, v, id)
	if err != nil {
		return nil, err
	}
	out := &Block{BlockInfo: s.blockInfo(v, blk), TxCount: len(blk.Txs)}
	page, size, total := blockPaging(page, pageSize, len(blk.Txs))
	out.Paging = Paging{Page: page, TotalPages: total, ItemsOnPage: size}
	start := (page - 1) * size
	for i := start; i < min(start+size, len(blk.Txs)); i++ {
		tx := &blk.Txs[i]
		ta, err := db.ReadTxAddresses(v.snap, tx.Txid)
		if err != nil {
			return nil, err
		}
		if ta == nil || ta.Height != blk.Height {
			return nil, fmt.Errorf("%w: tx %s of block %d not indexed", db.ErrCorrupt, tx.Txid, blk.Height)
		}
		rtx, err := s.renderTx(ctx, v, tx, txRecord{ta: ta, meta: meta}, false)
		if err != nil {
			return nil, err
		}
		out.Txs = append(out.Txs, rtx)
	}
	return out, nil
}

func (s *UtxoService) blockInfo(v *view, blk *bchain.Block) BlockInfo {
	bi := BlockInfo{
		Hash: blk.Hash.String(), Height: blk.Height, Confirmations: int(v.confirmations(blk.Height)),
		Size: blk.Size, Time: blk.Time, Version: json.Number(strconv.FormatInt(int64(blk.Version), 10)),
		MerkleRoot: blk.MerkleRoot.String(), Nonce: strconv.FormatUint(uint64(blk.Nonce), 10),
		Bits: fmt.Sprintf("%08x", blk.Bits), Difficulty: difficulty(blk.Bits),
	}
	if blk.Height > 0 {
		bi.Prev = blk.Prev.String()
	}
	if next, err := db.ReadBlockMeta(v.snap, blk.Height+1); err == nil && next != nil {
		bi.Next = next.Hash.String()
	}
	return bi
}

// difficulty renders compact bits the way Bitcoin Core's RPC does: relative
// to the 0x1d00ffff target, printed with 16 significant digits.
func difficulty(bits uint32) string {
	if bits&0x00ffffff == 0 {
		return "0"
	}
	return strconv.FormatFloat(CoreDifficulty(bits), 'g', 16, 64)
}

// RawBlock answers rawblock/{height|hash}.
func (s *UtxoService) RawBlock(ctx context.Context, id string) (*BlockRaw, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	_, meta, err := s.resolveBlock(ctx, v, id)
	if err != nil {
		return nil, err
	}
	raw, err := s.backend.RawBlocks.RawBlock(ctx, meta.Hash)
	if errors.Is(err, bchain.ErrBlockNotFound) {
		return nil, errBlockNotFound
	}
	if err != nil {
		return nil, err
	}
	return &BlockRaw{Hex: hex.EncodeToString(raw)}, nil
}

// FeeStats answers feestats/{height}: fee rates of the block's non-coinbase
// txs in satoshi per 1000 vbytes, their deciles (nearest rank) and the
// block's total fee over total vsize.
func (s *UtxoService) FeeStats(ctx context.Context, id string) (*FeeStats, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	blk, _, err := s.loadBlock(ctx, v, id)
	if err != nil {
		return nil, err
	}
	var rates []int64
	var totalFee, totalVSize uint64
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		if tx.IsCoinbase() {
			continue
		}
		ta, err := db.ReadTxAddresses(v.snap, tx.Txid)
		if err != nil {
			return nil, err
		}
		if ta == nil {
			return nil, fmt.Errorf("%w: tx %s of block %d not indexed", db.ErrCorrupt, tx.Txid, blk.Height)
		}
		var in, out uint64
		for _, x := range ta.Inputs {
			in += x.Value
		}
		for _, x := range ta.Outputs {
			out += x.Value
		}
		fee := in - min(in, out)
		totalFee += fee
		totalVSize += uint64(tx.VSize)
		rates = append(rates, int64(fee*1000/uint64(max(tx.VSize, 1))))
	}
	fs := &FeeStats{TxCount: len(rates), TotalFeesSat: NewAmount(totalFee)}
	if len(rates) == 0 {
		return fs, nil
	}
	fs.AverageFeePerKb = int64(totalFee * 1000 / max(totalVSize, 1))
	sort.Slice(rates, func(a, b int) bool { return rates[a] < rates[b] })
	for k := 0; k <= 10; k++ {
		fs.DecilesFeePerKb[k] = rates[(k*(len(rates)-1)+5)/10]
	}
	return fs, nil
}
