package db

// schema_shared.go: the rows and keys both chain types write alike (see
// schema.go for the column families and the notation). The value layouts
// of one chain type alone are in schema.go (Bitcoin-type) and
// schema_eth.go (Ethereum-type).

import "github.com/openexplorer/blockbook/bchain"

// ---- height ------------------------------------------------------------

// BlockMeta is the height column's value: hash ‖ uv(time) ‖ uv(txs) ‖
// uv(size) [‖ lb(header)]. The serialized header, as the parser gives it,
// is there for chains whose parser provides one (Bitcoin-type, 80 bytes for
// Bitcoin); it is absent, not empty, otherwise, so one block has one
// encoding.
type BlockMeta struct {
	Hash    bchain.Hash
	Time    int64
	TxCount uint32
	Size    uint32
	Header  []byte
}

// maxHeaderLen bounds a stored header (Bitcoin's is 80 bytes; chains with
// proof-of-work solutions in the header have longer ones).
const maxHeaderLen = 4096

func heightKey(height uint32) []byte {
	e := encoder{b: make([]byte, 0, 4)}
	e.u32be(height)
	return e.b
}

func unpackHeightKey(k []byte) (uint32, error) {
	d := newDecoder("height key", k)
	h := d.u32be()
	return h, d.done()
}

func packBlockMeta(m *BlockMeta) []byte {
	e := encoder{b: make([]byte, 0, 50+len(m.Header))}
	e.hash(m.Hash)
	e.uvarint(uint64(m.Time))
	e.uvarint(uint64(m.TxCount))
	e.uvarint(uint64(m.Size))
	if len(m.Header) > 0 {
		e.lenBytes(m.Header)
	}
	return e.b
}

func unpackBlockMeta(b []byte) (*BlockMeta, error) {
	d := newDecoder("height", b)
	m := &BlockMeta{Hash: d.hash()}
	t := d.uvarint()
	if t > 1<<62 {
		d.fail("time %d out of range", t)
	}
	m.Time = int64(t)
	m.TxCount = d.uvarint32()
	m.Size = d.uvarint32()
	if d.more() {
		if m.Header = d.lenBytes(maxHeaderLen); d.e == nil && len(m.Header) == 0 {
			d.fail("empty header")
		}
	}
	return m, d.done()
}

// ---- addresses: the key ------------------------------------------------

// Both chain types key addresses rows alike; the values differ (AddrTx
// in schema.go, EthAddrTx in schema_eth.go).

// descPrefix is the key prefix of all rows of one descriptor. The length
// prefix keeps one descriptor's rows from matching a longer descriptor that
// happens to start with the same bytes.
func descPrefix(desc bchain.AddrDesc, extra int) []byte {
	e := encoder{b: make([]byte, 0, len(desc)+2+extra)}
	e.lenBytes(desc)
	return e.b
}

func addressesKey(desc bchain.AddrDesc, height uint32) []byte {
	return appendAddressesKey(make([]byte, 0, len(desc)+6), desc, height)
}

// appendAddressesKey appends addressesKey(desc, height) to b.
func appendAddressesKey(b []byte, desc bchain.AddrDesc, height uint32) []byte {
	e := encoder{b: b}
	e.lenBytes(desc)
	e.u32be(^height)
	return e.b
}

// unpackAddressesKey returns the descriptor and height of an addresses key.
func unpackAddressesKey(k []byte) (bchain.AddrDesc, uint32, error) {
	d := newDecoder("addresses key", k)
	desc := d.lenBytes(maxDescLen)
	h := ^d.u32be()
	return desc, h, d.done()
}

// ---- transactions (cache) ------------------------------------------------------

// The transactions column maps txid → the raw serialized tx exactly as the
// node returned it. It is filled on demand by the API and dropped for the
// txs of a disconnected block.
func txCacheKey(txid bchain.Hash) []byte { return txid[:] }
