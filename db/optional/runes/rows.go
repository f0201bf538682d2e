package runes

// rows.go: the runes rows, all in the runes column family, told apart by
// their first byte. Notation as in db/schema.go; v128 is a runestone
// varint (LEB128 of up to 128 bits).
//
//	'o' ‖ u32be(height) ‖ uv(index) ‖ uv(vout) → balances   an output's runes
//	'e' ‖ u32be(height) ‖ u32be(index)          → entry      a rune, keyed by its birth
//	'n' ‖ u128be(rune)                           → uv(block) ‖ uv(tx)
//	'a' ‖ desc                                   → balances   an address's runes
//	'u' ‖ u32be(height)                          → undo       what the block's connect replaced
//	'c'                                          → uv(count)  runes etched so far
//	't' ‖ u32be(height) ‖ u32be(index)          → txrunes    what a tx's outputs received and it burned
//	'h' ‖ uv(len) ‖ desc ‖ u32be(^height) ‖ u32be(^index) → ∅  a tx that moved the address's runes
//	'i' ‖ u64be(number)                          → uv(block) ‖ uv(tx)  the rune etched number-th
//	'k' ‖ u32be(block) ‖ u32be(tx)              → uv(holders)  addresses holding the rune (absent: none)
//
// balances = uv(n) ‖ n × (uv(block) ‖ uv(tx) ‖ v128(amount)), by rune id;
// txrunes = uv(n) ‖ n × (uv(vout) ‖ balances) ‖ balances(burned).

import (
	"encoding/binary"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

const (
	kindOutput  = 'o'
	kindEntry   = 'e'
	kindName    = 'n'
	kindAddress = 'a'
	kindUndo    = 'u'
	kindCount   = 'c'
	kindTx      = 't'
	kindHistory = 'h'
	kindNumber  = 'i'
	kindHolders = 'k'
)

func outputKey(p Pos) []byte {
	k := binary.BigEndian.AppendUint32([]byte{kindOutput}, p.Height)
	k = binary.AppendUvarint(k, uint64(p.Index))
	return binary.AppendUvarint(k, uint64(p.Vout))
}

// entryKey: rune ids are block heights and tx indexes, both below 2^32 on
// any chain this index reads (mainnet's genesis rune is 1:0).
func entryKey(id RuneID) []byte {
	k := binary.BigEndian.AppendUint32([]byte{kindEntry}, uint32(id.Block))
	return binary.BigEndian.AppendUint32(k, id.Tx)
}

func nameKey(r runestone.Rune) []byte {
	k := binary.BigEndian.AppendUint64([]byte{kindName}, r.Hi)
	return binary.BigEndian.AppendUint64(k, r.Lo)
}

func addressKey(desc bchain.AddrDesc) []byte { return append([]byte{kindAddress}, desc...) }

func undoKey(height uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{kindUndo}, height)
}

var countKey = []byte{kindCount}

func txKey(height, index uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{kindTx}, height)
	return binary.BigEndian.AppendUint32(k, index)
}

// numberKey: ord's /runes pages seek by number, newest first.
func numberKey(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{kindNumber}, n) }

// holdersKey: a rune's holder count, keyed as its entry.
func holdersKey(id RuneID) []byte {
	k := binary.BigEndian.AppendUint32([]byte{kindHolders}, uint32(id.Block))
	return binary.BigEndian.AppendUint32(k, id.Tx)
}

// historyPrefix is an address's history rows' prefix: its length first,
// so no address's rows sort among another's.
func historyPrefix(desc bchain.AddrDesc) []byte {
	return append(binary.AppendUvarint([]byte{kindHistory}, uint64(len(desc))), desc...)
}

// historyKey inverts the position so that the newest tx comes first.
func historyKey(desc bchain.AddrDesc, height, index uint32) []byte {
	k := binary.BigEndian.AppendUint32(historyPrefix(desc), ^height)
	return binary.BigEndian.AppendUint32(k, ^index)
}

// historyPos reads a history key's position (its last 8 bytes).
func historyPos(k []byte) (height, index uint32, err error) {
	if len(k) < 9 {
		return 0, 0, corrupt("history key")
	}
	t := k[len(k)-8:]
	return ^binary.BigEndian.Uint32(t), ^binary.BigEndian.Uint32(t[4:]), nil
}

// reader reads a value's fields; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func corrupt(what string) error { return fmt.Errorf("%w: runes %s", db.ErrCorrupt, what) }

func (r *reader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) { // one encoding per value
		r.err = corrupt("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) u32() uint32 {
	v := r.uv()
	if v > 0xffffffff {
		r.err = corrupt("32-bit field")
	}
	return uint32(v)
}

func (r *reader) v128() U128 {
	if r.err != nil {
		return U128{}
	}
	v, n, err := runestone.DecodeVarint(r.b)
	if err != nil || n != len(runestone.AppendVarint(nil, v)) {
		r.err = corrupt("128-bit varint")
		return U128{}
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = corrupt("short value")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// done reports the first error, or trailing bytes.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = corrupt("trailing bytes")
	}
	return r.err
}

func packBalances(bs []Balance) []byte {
	v := binary.AppendUvarint(nil, uint64(len(bs)))
	for _, b := range bs {
		v = binary.AppendUvarint(v, b.ID.Block)
		v = binary.AppendUvarint(v, uint64(b.ID.Tx))
		v = runestone.AppendVarint(v, b.Amount)
	}
	return v
}

func unpackBalances(v []byte) ([]Balance, error) {
	r := &reader{b: v}
	out := r.balances()
	if out == nil && r.err == nil {
		out = []Balance{}
	}
	return out, r.done()
}

func packTxRunes(outs []OutputRunes, burned []Balance) []byte {
	v := binary.AppendUvarint(nil, uint64(len(outs)))
	for _, o := range outs {
		v = binary.AppendUvarint(v, uint64(o.Vout))
		v = append(v, packBalances(o.Balances)...)
	}
	return append(v, packBalances(burned)...)
}

func unpackTxRunes(v []byte) (outs []OutputRunes, burned []Balance, err error) {
	r := &reader{b: v}
	n := r.uv()
	if n > uint64(len(v)) {
		return nil, nil, corrupt("tx output count")
	}
	for range n {
		o := OutputRunes{Vout: r.u32()}
		o.Balances = r.balances()
		outs = append(outs, o)
	}
	burned = r.balances()
	return outs, burned, r.done()
}

// balances reads a balances list in place (unpackBalances reads a whole value).
func (r *reader) balances() []Balance {
	n := r.uv()
	if n > uint64(len(r.b)) {
		r.err = corrupt("balance count")
		return nil
	}
	var out []Balance
	for range n {
		out = append(out, Balance{ID: RuneID{Block: r.uv(), Tx: r.u32()}, Amount: r.v128()})
	}
	return out
}

func packID(id RuneID) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, id.Block), uint64(id.Tx))
}

func unpackID(v []byte) (RuneID, error) {
	r := &reader{b: v}
	id := RuneID{Block: r.uv(), Tx: r.u32()}
	return id, r.done()
}

// undo = uv(n) ‖ n × (lb(key) ‖ u8(had) ‖ [lb(old value) if had]): every
// key the block's connect wrote, with the value it replaced.
type undoRow struct {
	key []byte
	old []byte // nil: the key was absent
}

func packUndo(rows []undoRow) []byte {
	v := binary.AppendUvarint(nil, uint64(len(rows)))
	for _, u := range rows {
		v = binary.AppendUvarint(v, uint64(len(u.key)))
		v = append(v, u.key...)
		if u.old == nil {
			v = append(v, 0)
			continue
		}
		v = append(v, 1)
		v = binary.AppendUvarint(v, uint64(len(u.old)))
		v = append(v, u.old...)
	}
	return v
}

func unpackUndo(v []byte) ([]undoRow, error) {
	r := &reader{b: v}
	n := r.uv()
	if n > uint64(len(v)) {
		return nil, corrupt("undo count")
	}
	out := make([]undoRow, 0, n)
	for range n {
		u := undoRow{key: r.bytes(int(min(r.uv(), uint64(len(v)+1))))}
		switch had := r.bytes(1); {
		case had == nil:
		case had[0] == 1:
			u.old = append([]byte{}, r.bytes(int(min(r.uv(), uint64(len(v)+1))))...)
		case had[0] != 0:
			r.err = corrupt("undo flag")
		}
		out = append(out, u)
	}
	return out, r.done()
}
