package db

import (
	"encoding/binary"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// whaleBlock is a synthetic block shaped like one of the whale-heavy bench
// chain's: 200 txs of 2 inputs and 2 outputs, a third of them touching one
// of three hot descriptors, the rest fresh ones.
func whaleBlock() *IndexedBlock {
	ib := &IndexedBlock{Height: 500}
	desc := func(i int) bchain.AddrDesc {
		d := make(bchain.AddrDesc, 22)
		d[0], d[1] = 0x00, 0x14
		binary.BigEndian.PutUint32(d[2:], uint32(i))
		return d
	}
	for i := range 200 {
		var tx IndexedTx
		binary.BigEndian.PutUint32(tx.Txid[:], uint32(i+1))
		for j := range 2 {
			var in IndexedInput
			binary.BigEndian.PutUint32(in.Txid[:], uint32(1_000_000+2*i+j))
			in.Height, in.Value, in.Desc = 400, 100_000, desc(10_000+2*i+j)
			if i%3 == 0 {
				in.Desc = desc(i % 9 / 3)
			}
			tx.Inputs = append(tx.Inputs, in)
			o := TxAddr{Desc: desc(20_000 + 2*i + j), Value: 40_000}
			if i%3 == 1 && j == 0 {
				o.Desc = desc(i % 9 / 3)
			}
			tx.Outputs = append(tx.Outputs, o)
		}
		ib.Txs = append(ib.Txs, tx)
	}
	return ib
}

// BenchmarkUtxoRows measures building one block's rows, the per-block
// share of the lower bound's "build rows".
func BenchmarkUtxoRows(b *testing.B) {
	ib := whaleBlock()
	b.ReportAllocs()
	for b.Loop() {
		utxoRows(ib)
	}
}
