package ltc

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// FuzzParseBlock feeds mutated Litecoin blocks (MWEB ones included) to the
// block decoder: it must return a block or an error, never panic, and a
// decoded block's txs must decode again on their own.
func FuzzParseBlock(f *testing.F) {
	for _, name := range []string{"regtest-432.hex", "regtest-437.hex", "testnet-0.hex"} {
		f.Add(btctest.ReadHex(f, name))
	}
	p := NewParser(RegtestParams)
	f.Fuzz(func(t *testing.T, raw []byte) {
		blk, err := p.ParseBlock(raw)
		if err != nil {
			return
		}
		if len(blk.Txs) == 0 {
			t.Fatal("block without txs")
		}
		for i := range blk.Txs {
			tx, err := p.ParseTx(blk.Txs[i].Raw)
			if err != nil {
				t.Fatalf("tx %d of a decoded block: %v", i, err)
			}
			if tx.Txid != blk.Txs[i].Txid {
				t.Fatalf("tx %d decodes to another txid alone", i)
			}
		}
	})
}

// FuzzParseTx feeds mutated txs in Litecoin's serialization (MWEB-only and
// HogEx ones included) to the tx decoder.
func FuzzParseTx(f *testing.F) {
	f.Add(btctest.ReadHex(f, "mwebonly-1.hex"))
	blk, _, err := parseBlock(btctest.ReadHex(f, "regtest-437.hex"))
	if err != nil {
		f.Fatal(err)
	}
	for i := range blk.Txs {
		f.Add(blk.Txs[i].Raw)
	}
	p := NewParser(RegtestParams)
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := p.ParseTx(raw)
		if err != nil {
			return
		}
		if tx.Size != len(raw) || tx.VSize <= 0 {
			t.Fatalf("size %d vsize %d of %d bytes", tx.Size, tx.VSize, len(raw))
		}
		for _, o := range tx.Vout {
			p.OutputAddresses(o.Script)
		}
	})
}
