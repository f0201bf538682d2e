package runes

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// gen builds blocks of runestone txs by hand (the index needs no valid
// signatures or proof of work), and keeps the ledger of what it meant
// each address to hold: the expectation the index is checked against.
type gen struct {
	blocks []*bchain.Block
	txs    []bchain.Tx
	seq    uint32
	ledger map[string]map[RuneID]uint64 // address script → rune → amount
	burned map[RuneID]uint64
}

type outpoint struct {
	txid   bchain.Hash
	vout   uint32
	script []byte
}

func newGen() *gen {
	g := &gen{ledger: map[string]map[RuneID]uint64{}, burned: map[RuneID]uint64{}}
	g.mine() // block 0
	return g
}

func addr(i byte) []byte { return append([]byte{0x00, 0x14}, append(make([]byte, 19), i)...) }

func taproot(i byte) []byte { return append([]byte{0x51, 0x20}, append(make([]byte, 31), i)...) }

func (g *gen) hash(tag string) bchain.Hash {
	g.seq++
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], g.seq)
	return sha256.Sum256(append([]byte(tag), b[:]...))
}

// tx adds a tx of the block being built and returns its outputs.
func (g *gen) tx(ins []outpoint, witness [][][]byte, outs ...[]byte) []outpoint {
	t := bchain.Tx{Txid: g.hash("tx")}
	for i, in := range ins {
		v := bchain.Vin{PrevTxid: in.txid, PrevVout: in.vout}
		if i < len(witness) {
			v.Witness = witness[i]
		}
		t.Vin = append(t.Vin, v)
	}
	var ops []outpoint
	for i, s := range outs {
		t.Vout = append(t.Vout, bchain.Vout{Value: 1000, Script: s})
		ops = append(ops, outpoint{t.Txid, uint32(i), s})
	}
	g.txs = append(g.txs, t)
	return ops
}

// mine ends the block: a coinbase paying addr(99) and the txs added.
func (g *gen) mine() []outpoint {
	h := uint32(len(g.blocks))
	cb := bchain.Tx{Txid: g.hash("coinbase"), Vin: []bchain.Vin{{Coinbase: true, ScriptSig: []byte{byte(h), 1}}},
		Vout: []bchain.Vout{{Value: 5000, Script: addr(99)}, {Value: 5000, Script: addr(98)}}}
	b := &bchain.Block{BlockHeader: bchain.BlockHeader{Hash: g.hash("block"), Height: h, Time: int64(1700000000 + h)},
		Txs: append([]bchain.Tx{cb}, g.txs...)}
	if h > 0 {
		b.Prev = g.blocks[h-1].Hash
	}
	g.blocks = append(g.blocks, b)
	g.txs = nil
	return []outpoint{{cb.Txid, 0, cb.Vout[0].Script}, {cb.Txid, 1, cb.Vout[1].Script}}
}

// fork starts a branch of g keeping blocks up to height at (its ledger is
// the caller's to set).
func (g *gen) fork(at int) *gen {
	f := &gen{blocks: append([]*bchain.Block(nil), g.blocks[:at+1]...), seq: g.seq + 1000,
		ledger: map[string]map[RuneID]uint64{}, burned: map[RuneID]uint64{}}
	return f
}

func (g *gen) credit(script []byte, id RuneID, v int64) {
	m := g.ledger[string(script)]
	if m == nil {
		m = map[RuneID]uint64{}
		g.ledger[string(script)] = m
	}
	m[id] = uint64(int64(m[id]) + v)
	if m[id] == 0 {
		delete(m, id)
	}
}

// reveal is a script-path witness whose tapscript pushes the name's
// commitment (the signature and control block are dummies).
func reveal(name runestone.Rune) [][]byte {
	c := name.Commitment()
	ts := append([]byte{0x20}, make([]byte, 32)...)
	ts = append(ts, 0xac, 0x00, 0x63, byte(len(c)))
	ts = append(append(ts, c...), 0x68)
	return [][]byte{make([]byte, 64), ts, append([]byte{0xc0}, make([]byte, 32)...)}
}
