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

// A blockTxids value is #tx × txid, the block's txids in block order (every
// height of the active chain, not only the rollback window). The count is
// the length / 32: a block has at least one tx.
func packBlockTxids(txids []bchain.Hash) []byte {
	e := encoder{b: make([]byte, 0, 32*len(txids))}
	for i := range txids {
		e.hash(txids[i])
	}
	return e.b
}

func unpackBlockTxids(b []byte) ([]bchain.Hash, error) {
	d := newDecoder("blockTxids", b)
	if len(b) == 0 || len(b)%32 != 0 {
		d.fail("length %d is not a positive multiple of 32", len(b))
		return nil, d.done()
	}
	out := make([]bchain.Hash, len(b)/32)
	for i := range out {
		out[i] = d.hash()
	}
	return out, d.done()
}

// blockTxids lists an indexed block's txids in block order.
func (ib *IndexedBlock) blockTxids() []bchain.Hash {
	out := make([]bchain.Hash, len(ib.Txs))
	for i := range ib.Txs {
		out[i] = ib.Txs[i].Txid
	}
	return out
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
	v, err := r.get(CFBlockTxids, heightKey(height))
	if err != nil || v == nil {
		return nil, err
	}
	txids, err := unpackBlockTxids(v)
	if err != nil {
		return nil, fmt.Errorf("txids of block %d: %w", height, err)
	}
	return txids, nil
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
	return r.iterate(CFAddresses, nil, descPrefix(desc, 0), func(k, v []byte) (bool, error) {
		_, h, err := unpackAddressesKey(k)
		if err != nil {
			return false, err
		}
		txs, err := unpackAddrTxs(v)
		if err != nil {
			return false, fmt.Errorf("address %s height %d: %w", desc, h, err)
		}
		return fn(h, txs)
	})
}
