package db

import (
	"bytes"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// An output created and spent within a round leaves no addressUtxos row
// in it (its put is cancelled, found by the spent output's position); one
// created before the round is deleted.
func TestRoundCancelsUtxosSpentWithinIt(t *testing.T) {
	d, e := bchain.AddrDesc{0x51, 1}, bchain.AddrDesc{0x51, 2}
	a := &IndexedBlock{Height: 10, Txs: []IndexedTx{
		{Txid: bchain.Hash{1}, Coinbase: true, Inputs: make([]IndexedInput, 1), Outputs: []TxAddr{{Desc: e, Value: 1}}},
		{Txid: bchain.Hash{2}, Inputs: []IndexedInput{{Prevout: Prevout{Txid: bchain.Hash{9}, Height: 3}, TxAddr: TxAddr{Desc: e, Value: 9}}},
			Outputs: []TxAddr{{Desc: e, Value: 2}, {Desc: d, Value: 7}}},
	}}
	b := &IndexedBlock{Height: 11, Txs: []IndexedTx{
		{Txid: bchain.Hash{3}, Coinbase: true, Inputs: make([]IndexedInput, 1)},
		{Txid: bchain.Hash{4}, Inputs: []IndexedInput{{Prevout: Prevout{Txid: bchain.Hash{2}, Vout: 1, Height: 10, Index: 1}, TxAddr: TxAddr{Desc: d, Value: 7}}},
			Outputs: []TxAddr{{Desc: e, Value: 7}}},
	}}
	spent := utxoKey(d, &Utxo{Height: 10, Txid: bchain.Hash{2}, Vout: 1})
	rows := func(r *round) (puts, dels int, spentRow bool) {
		c := &r.cfs[CFAddressUtxos]
		for _, row := range c.sorted(true) {
			if row.op == opDelete {
				dels++
			} else {
				puts++
			}
			spentRow = spentRow || bytes.Equal(c.key(row), spent)
		}
		return puts, dels, spentRow
	}
	both := newRound(10, 5, nil)
	both.add(10, bchain.Hash{10}, utxoRows(a))
	both.add(11, bchain.Hash{11}, utxoRows(b))
	// a's UTXOs but the spent one (2), and b's output.
	if puts, dels, spentRow := rows(both); puts != 3 || dels != 1 || spentRow {
		t.Fatalf("round of both blocks: %d puts, %d deletes, row of the output spent within it: %v; want 3, 1 (a's input), false", puts, dels, spentRow)
	}
	later := newRound(11, 5, nil)
	later.add(11, bchain.Hash{11}, utxoRows(b))
	if puts, dels, spentRow := rows(later); puts != 1 || dels != 1 || !spentRow {
		t.Fatalf("round of the second block: %d puts, %d deletes, row of the spent output: %v; want 1, 1, true", puts, dels, spentRow)
	}
}

// A spend whose position names a round's output but whose key is another
// (inconsistent input data) cancels nothing: the live row stays and the
// delete is written as it is.
func TestRoundCancelsOnlyTheSameKey(t *testing.T) {
	d, e := bchain.AddrDesc{0x51, 1}, bchain.AddrDesc{0x51, 2}
	a := &IndexedBlock{Height: 10, Txs: []IndexedTx{
		{Txid: bchain.Hash{1}, Coinbase: true, Inputs: make([]IndexedInput, 1)},
		{Txid: bchain.Hash{2}, Inputs: []IndexedInput{{Prevout: Prevout{Txid: bchain.Hash{9}, Height: 3}, TxAddr: TxAddr{Desc: e, Value: 9}}},
			Outputs: []TxAddr{{Desc: e, Value: 2}, {Desc: d, Value: 7}}},
	}}
	// Names output 1 of tx 1 at height 10 (d's) with e's descriptor.
	b := &IndexedBlock{Height: 11, Txs: []IndexedTx{
		{Txid: bchain.Hash{3}, Coinbase: true, Inputs: make([]IndexedInput, 1)},
		{Txid: bchain.Hash{4}, Inputs: []IndexedInput{{Prevout: Prevout{Txid: bchain.Hash{2}, Vout: 1, Height: 10, Index: 1}, TxAddr: TxAddr{Desc: e, Value: 7}}}},
	}}
	r := newRound(10, 5, nil)
	r.add(10, bchain.Hash{10}, utxoRows(a))
	r.add(11, bchain.Hash{11}, utxoRows(b))
	live := utxoKey(d, &Utxo{Height: 10, Txid: bchain.Hash{2}, Vout: 1})
	c := &r.cfs[CFAddressUtxos]
	found := false
	for _, row := range c.sorted(true) {
		found = found || row.op == opPut && bytes.Equal(c.key(row), live)
	}
	if !found {
		t.Fatal("the live output's row was cancelled by a spend of another key")
	}
}
