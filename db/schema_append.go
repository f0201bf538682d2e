package db

import "github.com/openexplorer/blockbook/bchain"

// Row encoders that append to a buffer, for builders that cut many rows
// from one arena (utxoRows) or reuse one buffer (a round's balances); the
// pack functions of schema.go allocate each row with them.

// appendUtxoKey appends utxoKey(desc, u) to b.
func appendUtxoKey(b []byte, desc bchain.AddrDesc, u *Utxo) []byte {
	e := encoder{b: b}
	e.lenBytes(desc)
	e.u32be(^u.Height)
	e.hash(u.Txid)
	e.u32be(u.Vout)
	return e.b
}

// appendUtxoValue appends packUtxoValue(u) to b.
func appendUtxoValue(b []byte, u *Utxo) []byte {
	e := encoder{b: b}
	e.uvarint(u.Value)
	flags := byte(0)
	if u.Coinbase {
		flags = 1
	}
	e.b = append(e.b, flags)
	return e.b
}

// txAddressesSize bounds the bytes of packTxAddresses(ta) from above
// (varints at their longest), so that a row never outgrows the block's
// arena mid-row, which would copy the arena's chunk.
func txAddressesSize(ta *TxAddresses) int {
	size := 16 + 15*len(ta.Prevouts)
	for i := range ta.Outputs {
		size += len(ta.Outputs[i].Desc) + 13
	}
	return size
}

// appendTxAddresses appends packTxAddresses(ta) to b.
func appendTxAddresses(b []byte, ta *TxAddresses) []byte {
	e := encoder{b: b}
	e.uvarint(uint64(ta.Height))
	e.uvarint(uint64(ta.Index))
	flags := uint64(0)
	if ta.Coinbase {
		flags = 1
	}
	e.uvarint(flags)
	e.uvarint(uint64(len(ta.Prevouts)))
	for i := 0; i < len(ta.Prevouts) && !ta.Coinbase; i++ {
		p := &ta.Prevouts[i]
		e.uvarint(uint64(ta.Height - p.Height))
		e.uvarint(uint64(p.Index))
		e.uvarint(uint64(p.Vout))
	}
	e.uvarint(uint64(len(ta.Outputs)))
	for i := range ta.Outputs {
		e.lenBytes(ta.Outputs[i].Desc)
		e.uvarint(ta.Outputs[i].Value)
	}
	return e.b
}

// appendSpendKey appends spendKey(height, index, vout) to b.
func appendSpendKey(b []byte, height, index, vout uint32) []byte {
	e := encoder{b: b}
	e.u32be(height)
	e.uvarint(uint64(index))
	e.uvarint(uint64(vout))
	return e.b
}

// appendSpend appends packSpend(s) to b.
func appendSpend(b []byte, s *Spend) []byte {
	e := encoder{b: b}
	e.uvarint(uint64(s.Height))
	e.uvarint(uint64(s.Index))
	e.uvarint(uint64(s.Vin))
	return e.b
}

// appendAddrBalance appends packAddrBalance(ab) to b.
func appendAddrBalance(b []byte, ab *AddrBalance) []byte {
	e := encoder{b: b}
	e.uvarint(uint64(ab.Txs))
	e.uvarint(ab.Sent)
	e.uvarint(ab.Balance)
	e.uvarint(uint64(ab.Utxos))
	return e.b
}
