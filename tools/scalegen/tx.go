package scalegen

import "encoding/binary"

// txBuilder serializes one transaction twice: without witness (for the
// txid) and, when an input needs one, with it (the block's bytes).
type txBuilder struct {
	base, full []byte
}

// build serializes ins -> outs and returns the tx bytes and its txid.
func (b *txBuilder) build(ins []utxo, outs []txOut, coinbaseHeight int) ([]byte, [32]byte) {
	witness := false
	for _, in := range ins {
		witness = witness || isWitness(in.kind)
	}
	p := b.base[:0]
	p = binary.LittleEndian.AppendUint32(p, 2)
	if coinbaseHeight >= 0 {
		p = appendVarInt(p, 1)
		p = append(p, make([]byte, 32)...)
		p = binary.LittleEndian.AppendUint32(p, 0xffffffff)
		var h [4]byte
		binary.LittleEndian.PutUint32(h[:], uint32(coinbaseHeight))
		p = append(p, 13, 4) // BIP34 height push, then an extra nonce
		p = append(p, h[:]...)
		p = append(p, 7, 's', 'c', 'a', 'l', 'e', 'g', 'n')
		p = binary.LittleEndian.AppendUint32(p, 0xffffffff)
	} else {
		p = appendVarInt(p, uint64(len(ins)))
		for _, in := range ins {
			p = append(p, in.txid[:]...)
			p = binary.LittleEndian.AppendUint32(p, in.vout)
			p = appendScriptSig(p, in.kind, in.addr)
			p = binary.LittleEndian.AppendUint32(p, 0xfffffffd)
		}
	}
	p = appendVarInt(p, uint64(len(outs)))
	for _, o := range outs {
		p = binary.LittleEndian.AppendUint64(p, uint64(o.value))
		if o.data {
			p = append(p, 42, 0x6a, 40)
			var d [40]byte
			keyBytes(d[:], o.addr)
			p = append(p, d[:]...)
			continue
		}
		p = appendVarInt(p, uint64(pkScriptLen(o.kind)))
		p = appendPkScript(p, o.kind, o.addr)
	}
	bodyEnd := len(p)
	p = binary.LittleEndian.AppendUint32(p, 0)
	b.base = p
	txid := dsha(p)
	if !witness {
		return p, txid
	}
	f := b.full[:0]
	f = append(f, p[:4]...)
	f = append(f, 0x00, 0x01)
	f = append(f, p[4:bodyEnd]...)
	for _, in := range ins {
		f = appendWitness(f, in.kind, in.addr)
	}
	f = binary.LittleEndian.AppendUint32(f, 0)
	b.full = f
	return f, txid
}
