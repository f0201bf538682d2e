package db

// schema_script.go: the Bitcoin-type rows that serve queries by script
// (Electrum's script hashes, Esplora's block txids, merkle proofs), added in
// format version 3. Notation as in schema.go.

import (
	"crypto/sha256"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// ---- blockTxids ------------------------------------------------------------

// A blockTxids row is one tx of the active chain (every height, not only
// the rollback window): key u32be(height) ‖ u32be(index in block), value
// the 32-byte txid. It is where every other row that names a tx by its
// position finds the txid, and a prefix scan on u32be(height) lists a
// block's txids in block order.
func blockTxidKey(height, index uint32) []byte {
	e := encoder{b: make([]byte, 0, 8)}
	e.u32be(height)
	e.u32be(index)
	return e.b
}

func unpackBlockTxidKey(k []byte) (height, index uint32, err error) {
	d := newDecoder("blockTxids key", k)
	height, index = d.u32be(), d.u32be()
	return height, index, d.done()
}

func unpackBlockTxid(v []byte) (bchain.Hash, error) {
	d := newDecoder("blockTxids", v)
	h := d.hash()
	return h, d.done()
}

// ---- scriptHashes ----------------------------------------------------------

// ScriptHash is the sha256 of an output script in the byte order sha256
// produces (Electrum displays it reversed).
type ScriptHash [32]byte

// scriptHashKey is the key of desc's scriptHashes row: sha256(desc). The
// value is desc itself. The row exists exactly while the descriptor has an
// addressBalance row: it is written when that row is created and deleted
// with it, so a reorged index has the same rows as a fresh sync.
func scriptHashKey(desc bchain.AddrDesc) []byte {
	h := sha256.Sum256(desc)
	return h[:]
}

// unpackScriptHash checks a scriptHashes row: a 32-byte key, a non-empty
// descriptor of at most maxDescLen bytes whose sha256 is the key.
func unpackScriptHash(key, val []byte) (bchain.AddrDesc, error) {
	d := newDecoder("scriptHashes", val)
	switch {
	case len(key) != 32:
		d.fail("key of %d bytes", len(key))
	case len(val) == 0 || len(val) > maxDescLen:
		d.fail("descriptor of %d bytes", len(val))
	case sha256.Sum256(val) != [32]byte(key):
		d.fail("descriptor does not hash to its key")
	}
	if d.e != nil {
		return nil, d.e
	}
	return bchain.AddrDesc(val), nil
}

// ---- accessors ---------------------------------------------------------------

// ReadBlockTxids returns the txids of the block at height in block order
// (nil when the index has no block there).
func ReadBlockTxids(r Reader, height uint32) ([]bchain.Hash, error) {
	var out []bchain.Hash
	err := r.iterate(CFBlockTxids, nil, heightKey(height), func(k, v []byte) (bool, error) {
		_, i, err := unpackBlockTxidKey(k)
		if err == nil && int64(i) != int64(len(out)) {
			err = fmt.Errorf("%w: blockTxids: index %d where %d was expected", ErrCorrupt, i, len(out))
		}
		var txid bchain.Hash
		if err == nil {
			txid, err = unpackBlockTxid(v)
		}
		if err != nil {
			return false, fmt.Errorf("txids of block %d: %w", height, err)
		}
		out = append(out, txid)
		return true, nil
	})
	return out, err
}

// ReadTxidAt returns the txid of the tx at (height, index); ok is false
// when the index holds no tx there.
func ReadTxidAt(r Reader, height, index uint32) (txid bchain.Hash, ok bool, err error) {
	v, err := r.get(CFBlockTxids, blockTxidKey(height, index))
	if err != nil || v == nil {
		return bchain.Hash{}, false, err
	}
	if txid, err = unpackBlockTxid(v); err != nil {
		return bchain.Hash{}, false, fmt.Errorf("tx %d of block %d: %w", index, height, err)
	}
	return txid, true, nil
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

// FillTxids sets the Txid of each entry (txs of one descriptor's row, or
// a subset of them, in any order) from its position at height. The
// positions are read together (one MultiGet on RocksDB): a row of a busy
// address names tens of the block's txs, and a point read each, or a scan
// of the block's range between them, costs several calls into C per tx.
func FillTxids(r Reader, height uint32, txs []AddrTx) error {
	if len(txs) == 1 {
		var err error
		txs[0].Txid, err = txidAt(r, height, txs[0].Index)
		return err
	}
	keys := make([][]byte, len(txs))
	for i := range txs {
		keys[i] = blockTxidKey(height, txs[i].Index)
	}
	vals, err := getMany(r, CFBlockTxids, keys)
	if err != nil {
		return err
	}
	for i, v := range vals {
		if v == nil {
			return fmt.Errorf("%w: no tx %d in block %d", ErrCorrupt, txs[i].Index, height)
		}
		if txs[i].Txid, err = unpackBlockTxid(v); err != nil {
			return fmt.Errorf("tx %d of block %d: %w", txs[i].Index, height, err)
		}
	}
	return nil
}

// ReadScriptByHash returns the descriptor whose sha256 is sh, nil when no
// indexed tx has paid or spent it.
func ReadScriptByHash(r Reader, sh ScriptHash) (bchain.AddrDesc, error) {
	v, err := r.get(CFScriptHashes, sh[:])
	if err != nil || v == nil {
		return nil, err
	}
	desc, err := unpackScriptHash(sh[:], v)
	if err != nil {
		return nil, fmt.Errorf("script hash %x: %w", sh, err)
	}
	return desc, nil
}

// IterateAddrRows visits all of a descriptor's addresses rows, newest
// block first, each row's txs as stored: in reverse block order, per tx
// its input codes (^vin) then its output codes (vout). Reversing the whole
// sequence gives the descriptor's history in chain order.
func IterateAddrRows(r Reader, desc bchain.AddrDesc, fn func(height uint32, txs []AddrTx) (bool, error)) error {
	return scanAddrRows(r, desc, ^uint32(0), 0, true, fn)
}
