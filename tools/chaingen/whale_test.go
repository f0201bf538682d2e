package chaingen

import (
	"testing"
)

// TestWhaleMix generates a small whale-heavy chain and checks its shape
// from the independent ledger: the largest whale is the busiest address,
// whale spends take many inputs, and some txs spend a same-block parent.
func TestWhaleMix(t *testing.T) {
	g := New(params, "whale-test")
	spec := WhaleBenchSpec(params, 200, 12_000)
	if err := g.Whale(spec); err != nil {
		t.Fatal(err)
	}
	l := g.Ledger()
	whale, err := g.Address(WhaleKinds[0], WhaleBase)
	if err != nil {
		t.Fatal(err)
	}
	w := l.Addresses[whale]
	if w == nil {
		t.Fatal("whale 0 has no history")
	}
	for addr, a := range l.Addresses {
		if addr != whale && a.TxCount() > w.TxCount() {
			t.Fatalf("address %s has %d txs, more than whale 0's %d", addr, a.TxCount(), w.TxCount())
		}
	}
	whaleScript, _ := g.PkScript(WhaleKinds[0], WhaleBase)
	owner := map[string]bool{} // outpoints of whale 0, "txid:vout"
	var sweeps, children, txs int
	for _, b := range g.Blocks()[1:] {
		inBlock := map[string]bool{}
		for _, tx := range b.Transactions {
			txs++
			whaleIns := 0
			for _, in := range tx.TxIn {
				if owner[in.PreviousOutPoint.String()] {
					whaleIns++
				}
				if inBlock[in.PreviousOutPoint.Hash.String()] {
					children++
				}
			}
			if whaleIns >= 10 {
				sweeps++
			}
			id := tx.TxHash()
			inBlock[id.String()] = true
			for i, o := range tx.TxOut {
				if string(o.PkScript) == string(whaleScript) {
					owner[id.String()+":"+itoa(i)] = true
				}
			}
		}
	}
	t.Logf("%d txs, whale 0: %d txs, %d utxos; %d sweeps of >=10 whale inputs; %d same-block children",
		txs, w.TxCount(), len(w.Utxos), sweeps, children)
	if txs < 8_000 || w.TxCount() < txs/10 || sweeps == 0 || children == 0 || len(w.Utxos) < 50 {
		t.Fatal("whale chain lacks its mix")
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
