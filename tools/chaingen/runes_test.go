package chaingen

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// The runes scenario: etchings, mints and transfers, each with a valid
// runestone (no cenotaph), mixed with payments.
func TestRunesScenario(t *testing.T) {
	g := New(&chaincfg.RegressionNetParams, "runes-test")
	st, err := g.Runes(RunesSpec{Blocks: int(scriptStart(g.params)) + 10, Payments: 5, RuneTxs: 20})
	if err != nil {
		t.Fatal(err)
	}
	if st.Etchings == 0 || st.Mints == 0 || st.Transfers == 0 || st.Payments == 0 {
		t.Fatalf("stats %+v: a kind is missing", st)
	}
	stones := 0
	for _, b := range g.Blocks() {
		for _, tx := range b.Transactions {
			outs := make([][]byte, len(tx.TxOut))
			for i, o := range tx.TxOut {
				outs[i] = o.PkScript
			}
			a := runestone.Decipher(outs)
			if a == nil {
				continue
			}
			if a.Cenotaph != nil {
				t.Fatalf("tx %s: a cenotaph (%v)", tx.TxHash(), a.Cenotaph.Flaw)
			}
			stones++
		}
	}
	if want := st.Etchings + st.Mints + st.Transfers; stones != want {
		t.Errorf("%d runestones, want %d (%+v)", stones, want, st)
	}
}
