package zec

import (
	"encoding/hex"
	"testing"
)

// FuzzParseTx: any input decodes or fails cleanly, never panics, and what
// decodes re-decodes from its own Raw to the same txid.
func FuzzParseTx(f *testing.F) {
	for _, bt := range blockbookTxs {
		raw, _ := hex.DecodeString(bt.hex)
		f.Add(raw)
	}
	for _, name := range []string{"block-main-0-419-201", "block-main-1-687-107", "block-test-1-842-421"} {
		blk, err := mainParser().ParseBlock(readBlock(f, name))
		if err != nil {
			f.Fatal(err)
		}
		for i := range blk.Txs {
			f.Add(blk.Txs[i].Raw)
		}
	}
	p := mainParser()
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := p.ParseTx(raw)
		if err != nil {
			return
		}
		again, err := p.ParseTx(tx.Raw)
		if err != nil || again.Txid != tx.Txid || tx.Size != len(raw) {
			t.Fatalf("re-decode: %v", err)
		}
		for _, o := range tx.Vout {
			p.OutputAddresses(o.Script)
		}
		_, _ = p.ParseBlock(raw)
	})
}
