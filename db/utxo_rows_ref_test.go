package db

import (
	"bytes"
	"maps"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// The rows of utxoRows as they were built before its arena, flat touches
// and positions of same-block outputs (the previous commit's code, kept
// as the reference): every row and balance change must come out the same.
func TestUtxoRowsAsTheReference(t *testing.T) {
	for name, ib := range map[string]*IndexedBlock{"whale": whaleBlock(), "spends within the block": blockSpendingItself(), "coinbase only": coinbaseOnly()} {
		got, want := utxoRows(ib), refUtxoRows(ib)
		if len(got.muts) != len(want.muts) {
			t.Fatalf("%s: %d rows, want %d", name, len(got.muts), len(want.muts))
		}
		for i, m := range got.muts {
			w := want.muts[i]
			if m.cf != w.cf || m.del != w.del || !bytes.Equal(m.key, w.key) || !bytes.Equal(m.value, w.value) {
				t.Fatalf("%s: row %d is %s %x=%x del %v, want %s %x=%x del %v", name, i, m.cf, m.key, m.value, m.del, w.cf, w.key, w.value, w.del)
			}
		}
		gotBal := map[string]balanceDelta{}
		for i, k := range got.descs {
			gotBal[k] = got.deltas[i].balanceDelta
			if got.balances[k] != &got.deltas[i] {
				t.Fatalf("%s: balances[%x] is not deltas[%d]", name, k, i)
			}
		}
		wantBal := map[string]balanceDelta{}
		for k, d := range want.balances {
			wantBal[k] = *d
		}
		if !maps.Equal(gotBal, wantBal) || len(got.balances) != len(got.descs) {
			t.Fatalf("%s: balance changes %v, want %v", name, gotBal, wantBal)
		}
	}
}

// blockSpendingItself is whaleBlock with every fifth tx's first input
// spending an output of an earlier tx of the block, some of them twice
// touched descriptors, and an output without a descriptor spent too.
func blockSpendingItself() *IndexedBlock {
	ib := whaleBlock()
	ib.Txs[3].Outputs[1].Desc = nil
	for i := 5; i < len(ib.Txs); i += 5 {
		k := i - 1 - i%4
		if i == 10 {
			k = 3
		}
		v := uint32(i % 2)
		if i == 10 {
			v = 0
		}
		prev := &ib.Txs[k]
		ib.Txs[i].Inputs[0] = IndexedInput{Prevout: Prevout{Txid: prev.Txid, Vout: v, Height: ib.Height, Index: uint32(k)}, TxAddr: prev.Outputs[v]}
	}
	return ib
}

func coinbaseOnly() *IndexedBlock {
	ib := &IndexedBlock{Height: 7}
	ib.Txs = []IndexedTx{{Txid: bchain.Hash{1}, Coinbase: true, Inputs: make([]IndexedInput, 1),
		Outputs: []TxAddr{{Desc: bchain.AddrDesc{0, 1, 2}, Value: 50}, {Value: 0}, {Desc: bchain.AddrDesc{0, 1, 2}, Value: 1}}}}
	return ib
}

type refBlockRows struct {
	muts     []mutation
	balances map[string]*balanceDelta
}

type refPendingUtxo struct {
	desc bchain.AddrDesc
	utxo Utxo
}

// refUtxoRows is utxoRows as it was before its arena and positions,
// kept as the reference the new builder is compared with.
func refUtxoRows(ib *IndexedBlock) *refBlockRows {
	// Sized for the block up front: growing these maps and the rows slice
	// tx by tx rehashed and copied them several times per block.
	ins, outs := 0, 0
	for i := range ib.Txs {
		ins += len(ib.Txs[i].Inputs)
		outs += len(ib.Txs[i].Outputs)
	}
	descs := ins + outs
	b := &refRowBuilder{h: ib.Height,
		r:       &refBlockRows{muts: make([]mutation, 0, 4+2*len(ib.Txs)+2*ins+2*outs), balances: make(map[string]*balanceDelta, descs)},
		addrTxs: make(map[string][]AddrTx, descs), descOrder: make([]string, 0, descs),
		created: make(map[outpoint]*refPendingUtxo, outs), createdOrder: make([]outpoint, 0, outs)}
	b.put(CFHeight, heightKey(b.h), packBlockMeta(&ib.Meta))
	b.put(CFBlockTxs, heightKey(b.h), packBlockUndo(ib.undo()))
	putBlockTxids(b.put, b.h, ib.Txs)
	if len(ib.Filter) > 0 {
		b.put(CFBlockFilter, blockFilterKey(ib.Meta.Hash), ib.Filter)
	}
	for i := range ib.Txs {
		tx := &ib.Txs[i]
		ta := TxAddresses{Height: b.h, Index: uint32(i), Coinbase: tx.Coinbase, Prevouts: make([]Prevout, len(tx.Inputs)), Outputs: tx.Outputs}
		for j := range tx.Inputs {
			ta.Prevouts[j] = tx.Inputs[j].Prevout
			if !tx.Coinbase {
				b.spend(tx, uint32(i), j)
			}
		}
		b.put(CFTxAddresses, tx.Txid[:], packTxAddresses(&ta))
		for n := range tx.Outputs {
			b.create(tx, uint32(i), n)
		}
	}
	return b.finish()
}

// refRowBuilder collects a block's rows in a fixed order: block records, then
// per tx its spends, spent UTXOs and txAddresses, then the UTXOs the block
// leaves, then the addresses rows.
type refRowBuilder struct {
	h uint32
	r *refBlockRows
	// Per descriptor, the txs touching it in block order.
	addrTxs   map[string][]AddrTx
	descOrder []string
	// UTXOs created by the block and not (yet) spent within it.
	created      map[outpoint]*refPendingUtxo
	createdOrder []outpoint
}

func (b *refRowBuilder) put(cf CF, k, v []byte) {
	b.r.muts = append(b.r.muts, mutation{cf: cf, key: k, value: v})
}

// touch records that the tx at index pos of the block touches desc at
// index idx (^vin for inputs) and returns the descriptor's balance change.
func (b *refRowBuilder) touch(desc bchain.AddrDesc, pos uint32, idx int32) *balanceDelta {
	// Index with string(desc) directly, which does not allocate; the key
	// string is made once, for a descriptor new in the block.
	d := b.r.balances[string(desc)]
	if d == nil {
		k := string(desc)
		d = &balanceDelta{}
		b.r.balances[k] = d
		b.descOrder = append(b.descOrder, k)
		b.addrTxs[k] = []AddrTx{{Index: pos, Indexes: []int32{idx}}}
		d.txs++
		return d
	}
	list := b.addrTxs[string(desc)]
	if n := len(list); n > 0 && list[n-1].Index == pos {
		list[n-1].Indexes = append(list[n-1].Indexes, idx)
		return d
	}
	b.addrTxs[string(desc)] = append(list, AddrTx{Index: pos, Indexes: []int32{idx}})
	d.txs++
	return d
}

// spend records input j of tx (at index pos of the block): its spends
// row, keyed by the spent output's position, the sender's balance and the
// UTXO it removes.
func (b *refRowBuilder) spend(tx *IndexedTx, pos uint32, j int) {
	in := &tx.Inputs[j]
	b.put(CFSpends, spendKey(in.Height, in.Index, in.Vout), packSpend(&Spend{Height: b.h, Index: pos, Vin: uint32(j)}))
	if len(in.Desc) == 0 {
		return
	}
	d := b.touch(in.Desc, pos, ^int32(j))
	d.sent += int64(in.Value)
	d.utxos--
	op := outpoint{in.Txid, in.Vout}
	if c := b.created[op]; c != nil {
		delete(b.created, op) // created and spent within this block
		return
	}
	u := Utxo{Height: in.Height, Txid: in.Txid, Vout: in.Vout, Value: in.Value, Coinbase: in.Coinbase}
	b.r.muts = append(b.r.muts, mutation{cf: CFAddressUtxos, key: utxoKey(in.Desc, &u), value: packUtxoValue(&u), del: true})
}

// create records output n of tx (at index pos of the block): the
// receiver's balance and a new UTXO.
func (b *refRowBuilder) create(tx *IndexedTx, pos uint32, n int) {
	out := &tx.Outputs[n]
	if len(out.Desc) == 0 {
		return
	}
	d := b.touch(out.Desc, pos, int32(n))
	d.received += int64(out.Value)
	d.utxos++
	op := outpoint{tx.Txid, uint32(n)}
	b.created[op] = &refPendingUtxo{desc: out.Desc, utxo: Utxo{Height: b.h, Txid: tx.Txid, Vout: uint32(n), Value: out.Value, Coinbase: tx.Coinbase}}
	b.createdOrder = append(b.createdOrder, op)
}

// finish adds the UTXOs the block leaves and the addresses rows.
func (b *refRowBuilder) finish() *refBlockRows {
	for _, op := range b.createdOrder {
		if c := b.created[op]; c != nil {
			b.put(CFAddressUtxos, utxoKey(c.desc, &c.utxo), packUtxoValue(&c.utxo))
		}
	}
	for _, k := range b.descOrder {
		list := b.addrTxs[k]
		// Stored newest first: later txs in the block come first.
		for a, z := 0, len(list)-1; a < z; a, z = a+1, z-1 {
			list[a], list[z] = list[z], list[a]
		}
		b.put(CFAddresses, addressesKey(bchain.AddrDesc(k), b.h), packAddrTxs(list))
	}
	return b.r
}
