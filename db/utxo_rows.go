package db

import (
	"sort"

	"github.com/openexplorer/blockbook/bchain"
)

// IndexedInput is an input with its previous output resolved.
type IndexedInput struct {
	Prevout
	TxAddr // descriptor and value of the previous output
}

// IndexedTx is a tx as the Bitcoin-type index sees it.
type IndexedTx struct {
	Txid     bchain.Hash
	Coinbase bool
	// Inputs has one entry per vin; a coinbase's single entry is zero.
	Inputs  []IndexedInput
	Outputs []TxAddr // Desc is nil for outputs that are not indexed
}

// IndexedBlock is everything the index derives from one block. Connecting
// builds it from the node's block and the index's prevouts; disconnecting
// rebuilds the identical value from blockTxs and txAddresses.
type IndexedBlock struct {
	Height uint32
	Meta   BlockMeta
	Txs    []IndexedTx
	// Filter is the block's Golomb filter (blockFilter), nil when filters
	// are disabled or no script of the block qualifies. Connecting computes
	// it with blockFilter; disconnecting reads back the stored row.
	Filter []byte
}

// mutation is one row change. A delete keeps the value it removes, so the
// inverse of any mutation is known without reading the database.
type mutation struct {
	cf    CF
	key   []byte
	value []byte
	del   bool
}

// balanceDelta is a signed change to an AddrBalance.
type balanceDelta struct {
	txs, sent, received, utxos int64
}

// blockRows is the complete effect of connecting one block.
type blockRows struct {
	muts     []mutation
	balances map[string]*balanceDelta
}

// invert returns the rows that undo r exactly.
func (r *blockRows) invert() *blockRows {
	inv := &blockRows{muts: make([]mutation, len(r.muts)), balances: make(map[string]*balanceDelta, len(r.balances))}
	for i, m := range r.muts {
		m.del = !m.del
		inv.muts[len(r.muts)-1-i] = m
	}
	for k, d := range r.balances {
		inv.balances[k] = &balanceDelta{txs: -d.txs, sent: -d.sent, received: -d.received, utxos: -d.utxos}
	}
	return inv
}

// sortedDescs returns the touched descriptors in byte order, so that writes
// happen in a deterministic order.
func (r *blockRows) sortedDescs() []string {
	keys := make([]string, 0, len(r.balances))
	for k := range r.balances {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// undo derives the blockTxs record of an indexed block.
func (ib *IndexedBlock) undo() BlockUndo {
	u := make(BlockUndo, len(ib.Txs))
	for i := range ib.Txs {
		tx := &ib.Txs[i]
		u[i].Txid = tx.Txid
		if !tx.Coinbase {
			u[i].Prevouts = make([]Prevout, len(tx.Inputs))
			for j := range tx.Inputs {
				u[i].Prevouts[j] = tx.Inputs[j].Prevout
			}
		}
	}
	return u
}

// blockFilter computes the Golomb filter of a block from its indexed form:
// for every tx, the descriptors of the outputs its inputs spend (a coinbase
// spends none) and of its own outputs, keyed by the block hash. blk supplies
// what the script selection needs beyond descriptors (witnesses and parent
// txids, to leave ordinal inscriptions out). Like utxoRows it does no I/O.
func blockFilter(p FilterParams, blk *bchain.Block, ib *IndexedBlock) ([]byte, error) {
	if !p.Enabled() {
		return nil, nil
	}
	b := NewFilterBuilder(p, ib.Meta.Hash)
	var descs []bchain.AddrDesc
	for i := range ib.Txs {
		tx := &ib.Txs[i]
		descs = descs[:0]
		if !tx.Coinbase {
			for j := range tx.Inputs {
				descs = append(descs, tx.Inputs[j].Desc)
			}
		}
		for n := range tx.Outputs {
			descs = append(descs, tx.Outputs[n].Desc)
		}
		b.Add(&blk.Txs[i], descs...)
	}
	return b.Filter()
}

type outpoint struct {
	txid bchain.Hash
	vout uint32
}

type pendingUtxo struct {
	desc bchain.AddrDesc
	utxo Utxo
}

// utxoRows computes every row change of connecting ib. It does no I/O: the
// same input always yields the same rows, which is what makes disconnect the
// exact mirror of connect.
func utxoRows(ib *IndexedBlock) *blockRows {
	// Sized for the block up front: growing these maps and the rows slice
	// tx by tx rehashed and copied them several times per block.
	ins, outs := 0, 0
	for i := range ib.Txs {
		ins += len(ib.Txs[i].Inputs)
		outs += len(ib.Txs[i].Outputs)
	}
	descs := ins + outs
	b := &rowBuilder{h: ib.Height,
		r:       &blockRows{muts: make([]mutation, 0, 4+2*len(ib.Txs)+2*ins+2*outs), balances: make(map[string]*balanceDelta, descs)},
		addrTxs: make(map[string][]AddrTx, descs), descOrder: make([]string, 0, descs),
		created: make(map[outpoint]*pendingUtxo, outs), createdOrder: make([]outpoint, 0, outs)}
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

// rowBuilder collects a block's rows in a fixed order: block records, then
// per tx its spends, spent UTXOs and txAddresses, then the UTXOs the block
// leaves, then the addresses rows.
type rowBuilder struct {
	h uint32
	r *blockRows
	// Per descriptor, the txs touching it in block order.
	addrTxs   map[string][]AddrTx
	descOrder []string
	// UTXOs created by the block and not (yet) spent within it.
	created      map[outpoint]*pendingUtxo
	createdOrder []outpoint
}

func (b *rowBuilder) put(cf CF, k, v []byte) {
	b.r.muts = append(b.r.muts, mutation{cf: cf, key: k, value: v})
}

// touch records that the tx at index pos of the block touches desc at
// index idx (^vin for inputs) and returns the descriptor's balance change.
func (b *rowBuilder) touch(desc bchain.AddrDesc, pos uint32, idx int32) *balanceDelta {
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
func (b *rowBuilder) spend(tx *IndexedTx, pos uint32, j int) {
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
func (b *rowBuilder) create(tx *IndexedTx, pos uint32, n int) {
	out := &tx.Outputs[n]
	if len(out.Desc) == 0 {
		return
	}
	d := b.touch(out.Desc, pos, int32(n))
	d.received += int64(out.Value)
	d.utxos++
	op := outpoint{tx.Txid, uint32(n)}
	b.created[op] = &pendingUtxo{desc: out.Desc, utxo: Utxo{Height: b.h, Txid: tx.Txid, Vout: uint32(n), Value: out.Value, Coinbase: tx.Coinbase}}
	b.createdOrder = append(b.createdOrder, op)
}

// finish adds the UTXOs the block leaves and the addresses rows.
func (b *rowBuilder) finish() *blockRows {
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
