package db

// schema_script.go: the Bitcoin-type rows that serve queries by script
// (Electrum's script hashes, Esplora's block txids, merkle proofs), added in
// format version 3. Notation as in schema.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// ---- blockTxids ------------------------------------------------------------

// txidsPerRow is how many consecutive txids of a block one blockTxids row
// holds. A row per tx cost ~14 bytes of key and entry overhead per tx on
// disk, and a busy address's history page then needed a point read per
// tx; a row per block made a read of one position copy a whole block's
// txids (80 KB on mainnet). 64 txids (2 KB) per row keeps both small.
const txidsPerRow = 64

// A blockTxids row holds txs chunk*64 … chunk*64+63 of the block at
// height (every height of the active chain, not only the rollback window):
// key u32be(height) ‖ u32be(chunk), value their 32-byte txids in block
// order, 64 of them except in the block's last row (at least one). It is
// where every other row that names a tx by its position finds the txid,
// and a prefix scan on u32be(height) lists a block's txids in block order.
func blockTxidKey(height, chunk uint32) []byte {
	e := encoder{b: make([]byte, 0, 8)}
	e.u32be(height)
	e.u32be(chunk)
	return e.b
}

// blockTxidPos is the key of the row holding the tx at (height, index) and
// the tx's place in that row.
func blockTxidPos(height, index uint32) (key []byte, at int) {
	return blockTxidKey(height, index/txidsPerRow), int(index % txidsPerRow)
}

func unpackBlockTxidKey(k []byte) (height, chunk uint32, err error) {
	d := newDecoder("blockTxids key", k)
	height, chunk = d.u32be(), d.u32be()
	return height, chunk, d.done()
}

// unpackBlockTxids checks a row's value: 1 to 64 whole txids.
func unpackBlockTxids(v []byte) ([]bchain.Hash, error) {
	d := newDecoder("blockTxids", v)
	n := len(v) / 32
	if len(v)%32 != 0 || n == 0 || n > txidsPerRow {
		d.fail("value of %d bytes", len(v))
		return nil, d.e
	}
	out := make([]bchain.Hash, n)
	for i := range out {
		out[i] = d.hash()
	}
	return out, d.done()
}

// putBlockTxids adds the blockTxids rows of a block's txs with put.
func putBlockTxids(put func(cf CF, k, v []byte), height uint32, txs []IndexedTx) {
	for c := 0; c*txidsPerRow < len(txs); c++ {
		part := txs[c*txidsPerRow : min(len(txs), (c+1)*txidsPerRow)]
		v := make([]byte, 0, 32*len(part))
		for i := range part {
			v = append(v, part[i].Txid[:]...)
		}
		put(CFBlockTxids, blockTxidKey(height, uint32(c)), v)
	}
}

// ---- addressBalance keys ------------------------------------------------

// ScriptHash is the sha256 of an output script in the byte order sha256
// produces (Electrum displays it reversed).
type ScriptHash [32]byte

// scriptHashPrefixLen is how many bytes of sha256(desc) begin an
// addressBalance key. Eight tell apart all but a handful of mainnet's
// billions of scripts; the descriptor after them settles those, since a
// lookup by script hash checks the hash of every descriptor under the
// prefix.
const scriptHashPrefixLen = 8

// balanceKey is desc's addressBalance key, sha256(desc)[:8] ‖ desc: the
// hash first, so that an Electrum script hash finds the row
// (ReadScriptByHash) with no second copy of every descriptor.
func balanceKey(desc bchain.AddrDesc) []byte {
	h := sha256.Sum256(desc)
	return append(h[:scriptHashPrefixLen:scriptHashPrefixLen], desc...)
}

// appendBalanceKey appends balanceKey(desc) to b.
func appendBalanceKey(b []byte, desc bchain.AddrDesc) []byte {
	h := sha256.Sum256(desc)
	return append(append(b, h[:scriptHashPrefixLen]...), desc...)
}

// unpackBalanceKey checks an addressBalance key and returns its
// descriptor: non-empty, at most maxDescLen bytes, after the first bytes
// of its sha256.
func unpackBalanceKey(key []byte) (bchain.AddrDesc, error) {
	d := newDecoder("addressBalance key", key)
	desc := key[min(len(key), scriptHashPrefixLen):]
	switch {
	case len(desc) == 0 || len(desc) > maxDescLen:
		d.fail("descriptor of %d bytes", len(desc))
	default:
		if h := sha256.Sum256(desc); !bytes.Equal(h[:scriptHashPrefixLen], key[:scriptHashPrefixLen]) {
			d.fail("descriptor does not hash to its key")
		}
	}
	if d.e != nil {
		return nil, d.e
	}
	return bchain.AddrDesc(desc), nil
}

// ---- accessors ---------------------------------------------------------------

// ReadBlockTxids returns the txids of the block at height in block order
// (nil when the index has no block there).
func ReadBlockTxids(r Reader, height uint32) ([]bchain.Hash, error) {
	var out []bchain.Hash
	full := true // every row but the block's last holds txidsPerRow txids
	err := r.iterate(CFBlockTxids, nil, heightKey(height), func(k, v []byte) (bool, error) {
		_, c, err := unpackBlockTxidKey(k)
		if err == nil && (!full || int64(c)*txidsPerRow != int64(len(out))) {
			err = fmt.Errorf("%w: blockTxids: row %d where row %d was expected", ErrCorrupt, c, len(out)/txidsPerRow)
		}
		var txids []bchain.Hash
		if err == nil {
			txids, err = unpackBlockTxids(v)
		}
		if err != nil {
			return false, fmt.Errorf("txids of block %d: %w", height, err)
		}
		full = len(txids) == txidsPerRow
		out = append(out, txids...)
		return true, nil
	})
	return out, err
}

// ReadTxidAt returns the txid of the tx at (height, index); ok is false
// when the index holds no tx there.
func ReadTxidAt(r Reader, height, index uint32) (txid bchain.Hash, ok bool, err error) {
	key, at := blockTxidPos(height, index)
	v, err := r.get(CFBlockTxids, key)
	if err != nil || v == nil {
		return bchain.Hash{}, false, err
	}
	return txidInRow(v, height, index, at)
}

// txidInRow picks the txid at place `at` of a blockTxids row, checking
// the row's framing as unpackBlockTxids does without copying the others.
func txidInRow(v []byte, height, index uint32, at int) (bchain.Hash, bool, error) {
	if n := len(v) / 32; len(v)%32 != 0 || n == 0 || n > txidsPerRow {
		_, err := unpackBlockTxids(v)
		return bchain.Hash{}, false, fmt.Errorf("tx %d of block %d: %w", index, height, err)
	}
	if at >= len(v)/32 {
		return bchain.Hash{}, false, nil
	}
	return bchain.Hash(v[32*at : 32*at+32]), true, nil
}

// txidAt is ReadTxidAt for a position another row refers to: a missing
// tx there means the index is damaged.
func txidAt(r Reader, height, index uint32) (bchain.Hash, error) {
	txid, ok, err := ReadTxidAt(r, height, index)
	if err == nil && !ok {
		err = fmt.Errorf("%w: no tx %d in block %d", ErrCorrupt, index, height)
	}
	return txid, err
}

// fillTxids sets the Txid of each entry (txs of one descriptor's row, or
// a subset of them, in any order) from its position at height.
func fillTxids(r Reader, height uint32, txs []AddrTx) error {
	if len(txs) == 1 {
		var err error
		txs[0].Txid, err = txidAt(r, height, txs[0].Index)
		return err
	}
	return FillRowsTxids(r, []AddrTxsAt{{Height: height, Txs: txs}})
}

// FillRowsTxids is fillTxids for the entries of several rows at once: the
// blockTxids rows they lie in are read together (one MultiGet on RocksDB),
// each once, and only the txids wanted are copied out of them. A page of
// a busy address's history names tens of txs in each of tens of blocks,
// which share a few blockTxids rows per block. On a snapshot with a txid
// cache (UseTxidCache) the rows come from it when it holds them, and
// those read are kept there.
func FillRowsTxids(r Reader, rows []AddrTxsAt) error {
	var cache *BoundTxids
	if s, ok := r.(*Snapshot); ok {
		cache = s.txids
	}
	type rowKey struct{ height, chunk uint32 }
	// The entries in each blockTxids row to read, chained from heads[key].
	type entry struct{ row, tx, next int32 }
	var keys [][]byte
	var rowKeys []rowKey
	var heads []int32
	var ents []entry
	var place map[rowKey]int32 // made at the first row read: none when the cache holds all
	// Runs of entries share a row: last's place in keys (lastAt), or its
	// cached copy (lastRow).
	var last rowKey
	var lastRow []byte
	lastAt := int32(-1)
	for ri, row := range rows {
		for ti := range row.Txs {
			t := &row.Txs[ti]
			k := rowKey{row.Height, t.Index / txidsPerRow}
			if k != last || (lastAt < 0 && lastRow == nil) {
				last, lastRow, lastAt = k, nil, -1
				if at, ok := place[k]; ok {
					lastAt = at
				} else if lastRow = cache.row(k.height, k.chunk); lastRow == nil {
					if place == nil {
						place = make(map[rowKey]int32)
					}
					lastAt = int32(len(keys))
					place[k] = lastAt
					keys, heads = append(keys, blockTxidKey(k.height, k.chunk)), append(heads, -1)
					rowKeys = append(rowKeys, k)
				}
			}
			if lastRow != nil {
				if err := setTxid(t, lastRow, row.Height); err != nil {
					return err
				}
				continue
			}
			ents = append(ents, entry{int32(ri), int32(ti), heads[lastAt]})
			heads[lastAt] = int32(len(ents) - 1)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return visitMany(r, CFBlockTxids, keys, func(at int, v []byte) error {
		for e := heads[at]; e >= 0; e = ents[e].next {
			row := &rows[ents[e].row]
			if err := setTxid(&row.Txs[ents[e].tx], v, row.Height); err != nil {
				return err
			}
		}
		cache.keep(rowKeys[at].height, rowKeys[at].chunk, v)
		return nil
	})
}

// setTxid sets t's txid from v, the blockTxids row at height holding it
// (nil: absent, the index is damaged).
func setTxid(t *AddrTx, v []byte, height uint32) error {
	ok := false
	if v != nil {
		var err error
		if t.Txid, ok, err = txidInRow(v, height, t.Index, int(t.Index%txidsPerRow)); err != nil {
			return err
		}
	}
	if !ok {
		return fmt.Errorf("%w: no tx %d in block %d", ErrCorrupt, t.Index, height)
	}
	return nil
}

// ReadScriptByHash returns the descriptor whose sha256 is sh, nil when no
// indexed tx has paid or spent it.
func ReadScriptByHash(r Reader, sh ScriptHash) (bchain.AddrDesc, error) {
	var found bchain.AddrDesc
	err := r.iterate(CFAddressBalance, nil, sh[:scriptHashPrefixLen], func(k, _ []byte) (bool, error) {
		desc, err := unpackBalanceKey(k)
		if err != nil {
			return false, err
		}
		if sha256.Sum256(desc) == sh { // else another script shares the prefix
			found = bytes.Clone(desc)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("script hash %x: %w", sh, err)
	}
	return found, nil
}

// IterateAddrRows visits all of a descriptor's addresses rows, newest
// block first, each row's txs as stored: in reverse block order, per tx
// its input codes (^vin) then its output codes (vout). Reversing the whole
// sequence gives the descriptor's history in chain order.
func IterateAddrRows(r Reader, desc bchain.AddrDesc, fn func(height uint32, txs []AddrTx) (bool, error)) error {
	return scanAddrRows(r, desc, ^uint32(0), 0, true, 0, fn)
}

// ReadBlockHeaders returns the headers of n blocks from start, in order,
// read with one range scan (a header chunk of 2,016 blocks was 2,016 point
// reads, a third of the server's CPU under Electrum's header calls). It
// stops early at a missing height; the caller checks the count.
func ReadBlockHeaders(r Reader, start uint32, n int) ([][]byte, error) {
	out := make([][]byte, 0, n)
	next := start
	err := r.iterate(CFHeight, heightKey(start), nil, func(k, v []byte) (bool, error) {
		if len(out) >= n || len(k) != 4 || binary.BigEndian.Uint32(k) != next {
			return false, nil
		}
		m, err := unpackBlockMeta(v)
		if err != nil {
			return false, fmt.Errorf("height %d: %w", next, err)
		}
		out = append(out, bytes.Clone(m.Header)) // v is the iterator's, valid only in fn
		next++
		return len(out) < n, nil
	})
	return out, err
}
