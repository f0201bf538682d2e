package btc

import (
	"bytes"
	"fmt"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// BlockCodec is how a Bitcoin-derived coin's serialized blocks differ from
// Bitcoin's. Coin packages build their ParseBlock from it with
// ParseBlockWith; nil fields mean Bitcoin's encoding.
type BlockCodec struct {
	// Header decodes the header at the start of raw into blk's header
	// fields (Hash, Prev, Time, Version, MerkleRoot, Nonce, Bits, Header)
	// and returns its length: 80 bytes, or more for merge-mined (AuxPoW)
	// headers.
	Header func(raw []byte, blk *bchain.Block) (int, error)
	// Tx decodes one tx at the start of raw into tx, tx.Raw included, and
	// returns its length.
	Tx func(raw []byte, tx *bchain.Tx) (int, error)
	// Trailer decodes what follows the last tx (Litecoin's MWEB extension
	// block); nil means nothing may follow.
	Trailer func(raw []byte, blk *bchain.Block) error
}

// ParseBlockWith decodes a block with a coin's codec: header, tx count,
// txs, and an optional trailer. Each tx's Raw aliases raw.
func ParseBlockWith(raw []byte, c BlockCodec) (*bchain.Block, error) {
	if c.Header == nil {
		c.Header = DecodeHeader
	}
	if c.Tx == nil {
		c.Tx = DecodeTx
	}
	blk := &bchain.Block{}
	n, err := c.Header(raw, blk)
	if err != nil {
		return nil, fmt.Errorf("%w: block header: %v", bchain.ErrInvalidData, err)
	}
	r := bytes.NewReader(raw[n:])
	count, err := wire.ReadVarInt(r, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: block tx count: %v", bchain.ErrInvalidData, err)
	}
	off := len(raw) - r.Len()
	// Every tx takes at least 10 bytes, which bounds the allocation.
	if count == 0 || count > uint64(len(raw)-off)/10 {
		return nil, fmt.Errorf("%w: block claims %d transactions", bchain.ErrInvalidData, count)
	}
	blk.Txs = make([]bchain.Tx, count)
	for i := range blk.Txs {
		m, err := c.Tx(raw[off:], &blk.Txs[i])
		if err != nil {
			return nil, fmt.Errorf("%w: block tx %d: %v", bchain.ErrInvalidData, i, err)
		}
		end := off + m
		// Cap the capacity so appending to one tx's Raw cannot overwrite the next.
		blk.Txs[i].Raw = raw[off:end:end]
		off = end
	}
	if off != len(raw) {
		if c.Trailer == nil {
			return nil, fmt.Errorf("%w: block has %d trailing bytes", bchain.ErrInvalidData, len(raw)-off)
		}
		if err := c.Trailer(raw[off:], blk); err != nil {
			return nil, fmt.Errorf("%w: block trailer: %v", bchain.ErrInvalidData, err)
		}
	}
	blk.Size = len(raw)
	return blk, nil
}

// DecodeHeader decodes Bitcoin's 80-byte header; the block hash is the
// double SHA-256 of it.
func DecodeHeader(raw []byte, blk *bchain.Block) (int, error) {
	if len(raw) < wire.MaxBlockHeaderPayload {
		return 0, fmt.Errorf("%d bytes, want at least %d", len(raw), wire.MaxBlockHeaderPayload)
	}
	var h wire.BlockHeader
	if err := h.Deserialize(bytes.NewReader(raw[:wire.MaxBlockHeaderPayload])); err != nil {
		return 0, err
	}
	HeaderToBlock(&h, raw[:wire.MaxBlockHeaderPayload:wire.MaxBlockHeaderPayload], blk)
	blk.Hash = displayHash(h.BlockHash())
	return wire.MaxBlockHeaderPayload, nil
}

// HeaderToBlock copies a decoded 80-byte header's fields into blk; header is
// what the index stores as the block's raw header. The hash is left to the
// caller, as coins hash headers differently.
func HeaderToBlock(h *wire.BlockHeader, header []byte, blk *bchain.Block) {
	blk.Prev = displayHash(h.PrevBlock)
	blk.Time = h.Timestamp.Unix()
	blk.Version = h.Version
	blk.MerkleRoot = displayHash(h.MerkleRoot)
	blk.Nonce = h.Nonce
	blk.Bits = h.Bits
	blk.Header = header
}

// DecodeTx decodes one tx in Bitcoin's encoding (SegWit included) from the
// start of raw and returns its length.
func DecodeTx(raw []byte, tx *bchain.Tx) (int, error) {
	var mtx wire.MsgTx
	r := bytes.NewReader(raw)
	if err := mtx.Deserialize(r); err != nil {
		return 0, err
	}
	n := len(raw) - r.Len()
	TxFromWire(&mtx, raw[:n:n], tx)
	return n, nil
}

// TxFromWire fills tx from a decoded wire tx whose serialization is raw.
func TxFromWire(mtx *wire.MsgTx, raw []byte, tx *bchain.Tx) { convertTx(mtx, raw, tx) }

// DisplayHash converts a hash from internal (wire) byte order to the
// display order of explorers and RPCs.
func DisplayHash(h chainhash.Hash) bchain.Hash { return displayHash(h) }

// InternalHash converts a display-order hash to internal (wire) byte order.
func InternalHash(h bchain.Hash) chainhash.Hash { return internalHash(h) }

// ParseTxWith decodes one serialized tx with a coin's tx decoder (a
// BlockCodec.Tx); a decoder error or trailing bytes are invalid data.
func ParseTxWith(raw []byte, decode func([]byte, *bchain.Tx) (int, error)) (*bchain.Tx, error) {
	tx := new(bchain.Tx)
	n, err := decode(raw, tx)
	if err != nil {
		return nil, fmt.Errorf("%w: tx: %v", bchain.ErrInvalidData, err)
	}
	if n != len(raw) {
		return nil, fmt.Errorf("%w: tx has %d trailing bytes", bchain.ErrInvalidData, len(raw)-n)
	}
	return tx, nil
}

// MustHash parses a display-order hash constant of a coin's parameters
// (genesis hashes); it panics on a malformed constant, at init.
func MustHash(s string) *chainhash.Hash {
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		panic(err)
	}
	return h
}
