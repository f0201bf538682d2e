package db

import (
	"slices"

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
	// pos: for an addressUtxos row, the index of the output's tx in its
	// block (a bulk round finds the put of an output spent within it
	// by position).
	pos uint32
}

// balanceDelta is a signed change to an AddrBalance.
type balanceDelta struct {
	txs, sent, received, utxos int64
}

// descDelta is a descriptor's balance change in one block.
type descDelta struct {
	balanceDelta
	// While the rows are built: 1 + the index of the last tx touching
	// the descriptor (to count each tx once), and its index in descs.
	last uint32
	at   int32
}

// blockRows is the complete effect of connecting one block.
type blockRows struct {
	muts []mutation
	// The touched descriptors in the order first touched, their balance
	// changes (deltas[i] is descs[i]'s), and the changes by descriptor.
	descs    []string
	deltas   []descDelta
	balances map[string]*descDelta
	// outStart numbers the block's outputs across its txs: tx i's start
	// at outStart[i] (len(txs)+1 entries).
	outStart []int
}

// invert returns the rows that undo r exactly.
func (r *blockRows) invert() *blockRows {
	inv := &blockRows{muts: make([]mutation, len(r.muts)), descs: r.descs, deltas: make([]descDelta, len(r.deltas)), outStart: r.outStart,
		balances: make(map[string]*descDelta, len(r.descs))}
	for i, m := range r.muts {
		m.del = !m.del
		inv.muts[len(r.muts)-1-i] = m
	}
	for i, k := range r.descs {
		d := &r.deltas[i]
		inv.deltas[i].balanceDelta = balanceDelta{txs: -d.txs, sent: -d.sent, received: -d.received, utxos: -d.utxos}
		inv.balances[k] = &inv.deltas[i]
	}
	return inv
}

// sortedDescs returns the touched descriptors in byte order, so that writes
// happen in a deterministic order.
func (r *blockRows) sortedDescs() []string {
	keys := slices.Clone(r.descs)
	slices.Sort(keys)
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

// utxoRows computes every row change of connecting ib. It does no I/O: the
// same input always yields the same rows, which is what makes disconnect the
// exact mirror of connect.
func utxoRows(ib *IndexedBlock) *blockRows {
	// Sized for the block up front: growing these maps and slices tx by
	// tx rehashed and copied them several times per block.
	ins, outs := 0, 0
	for i := range ib.Txs {
		ins += len(ib.Txs[i].Inputs)
		outs += len(ib.Txs[i].Outputs)
	}
	touches := ins + outs // bounds the descriptors too: deltas never grows
	b := &rowBuilder{h: ib.Height, txs: ib.Txs,
		r: &blockRows{muts: make([]mutation, 0, 4+2*len(ib.Txs)+2*ins+2*outs),
			descs: make([]string, 0, touches), deltas: make([]descDelta, 0, touches), balances: make(map[string]*descDelta, touches)},
		touches: make([]addrTouch, 0, touches), outStart: make([]int, len(ib.Txs)+1), live: make([]bool, outs),
		chunk: min(max(64*len(ib.Txs)+96*touches, 4<<10), 1<<20)}
	for i := range ib.Txs {
		b.outStart[i+1] = b.outStart[i] + len(ib.Txs[i].Outputs)
	}
	b.r.outStart = b.outStart
	b.put(CFHeight, heightKey(b.h), packBlockMeta(&ib.Meta))
	b.put(CFBlockTxs, heightKey(b.h), packBlockUndo(ib.undo()))
	putBlockTxids(b.put, b.h, ib.Txs)
	if len(ib.Filter) > 0 {
		b.put(CFBlockFilter, blockFilterKey(ib.Meta.Hash), ib.Filter)
	}
	var prevouts []Prevout // one tx's at a time: its row is a copy
	for i := range ib.Txs {
		tx := &ib.Txs[i]
		prevouts = prevouts[:0]
		for j := range tx.Inputs {
			prevouts = append(prevouts, tx.Inputs[j].Prevout)
			if !tx.Coinbase {
				b.spend(tx, uint32(i), j)
			}
		}
		ta := TxAddresses{Height: b.h, Index: uint32(i), Coinbase: tx.Coinbase, Prevouts: prevouts, Outputs: tx.Outputs}
		at := b.mark(txAddressesSize(&ta))
		b.buf = appendTxAddresses(b.buf, &ta)
		b.put(CFTxAddresses, tx.Txid[:], b.cut(at))
		for n := range tx.Outputs {
			b.create(tx, uint32(i), n)
		}
	}
	return b.finish()
}

// rowBuilder collects a block's rows in a fixed order: block records, then
// per tx its spends, spent UTXOs and txAddresses, then the UTXOs the block
// leaves, then the addresses rows. The rows' keys and values are cut from
// a few arena chunks, not allocated one by one.
type rowBuilder struct {
	h   uint32
	txs []IndexedTx
	r   *blockRows
	// Every input and output of an indexed descriptor, in block order.
	touches []addrTouch
	// The block's outputs numbered across its txs (tx i's start at
	// outStart[i]); live: created by the block and not spent within it.
	outStart []int
	live     []bool
	// The arena: rows are appended to buf and cut from it; a new chunk of
	// about chunk bytes starts when one is full.
	buf   []byte
	chunk int
}

// addrTouch is a tx (pos, its index in the block) touching the descriptor
// descs[desc] at index idx (^vin for inputs).
type addrTouch struct {
	desc int32
	pos  uint32
	idx  int32
}

// mark makes room for about n more bytes in the arena and returns where
// the next row starts. A row that outgrows the room moves buf to a new
// array; the rows cut before stay in the old one, unchanged.
func (b *rowBuilder) mark(n int) int {
	if cap(b.buf)-len(b.buf) < n {
		b.buf = make([]byte, 0, max(n, b.chunk))
	}
	return len(b.buf)
}

// cut returns the bytes appended to the arena since at, capped so that
// nothing appended later can overwrite them.
func (b *rowBuilder) cut(at int) []byte { return b.buf[at:len(b.buf):len(b.buf)] }

func (b *rowBuilder) put(cf CF, k, v []byte) {
	b.r.muts = append(b.r.muts, mutation{cf: cf, key: k, value: v})
}

// touch records that the tx at index pos of the block touches desc at
// index idx (^vin for inputs) and returns the descriptor's balance change.
func (b *rowBuilder) touch(desc bchain.AddrDesc, pos uint32, idx int32) *descDelta {
	// Index with string(desc) directly, which does not allocate; the key
	// string is made once, for a descriptor new in the block.
	d := b.r.balances[string(desc)]
	if d == nil {
		k := string(desc)
		if len(b.r.deltas) == cap(b.r.deltas) {
			// The map and the callers hold pointers into deltas: it must
			// never move (sized for every input and output up front).
			panic("db: more descriptors than the block's inputs and outputs")
		}
		b.r.descs = append(b.r.descs, k)
		b.r.deltas = append(b.r.deltas, descDelta{at: int32(len(b.r.deltas))})
		d = &b.r.deltas[len(b.r.deltas)-1]
		b.r.balances[k] = d
	}
	if d.last != pos+1 {
		d.last = pos + 1
		d.txs++
	}
	b.touches = append(b.touches, addrTouch{desc: d.at, pos: pos, idx: idx})
	return d
}

// spend records input j of tx (at index pos of the block): its spends
// row, keyed by the spent output's position, the sender's balance and the
// UTXO it removes.
func (b *rowBuilder) spend(tx *IndexedTx, pos uint32, j int) {
	in := &tx.Inputs[j]
	at := b.mark(32) // the spend key and value, varints at their longest
	b.buf = appendSpendKey(b.buf, in.Height, in.Index, in.Vout)
	key := b.cut(at)
	at = len(b.buf)
	b.buf = appendSpend(b.buf, &Spend{Height: b.h, Index: pos, Vin: uint32(j)})
	b.put(CFSpends, key, b.cut(at))
	if len(in.Desc) == 0 {
		return
	}
	d := b.touch(in.Desc, pos, ^int32(j))
	d.sent += int64(in.Value)
	d.utxos--
	// An output of an earlier tx of this block: its position says which.
	if in.Height == b.h && int(in.Index) < len(b.txs) && int(in.Vout) < len(b.txs[in.Index].Outputs) {
		if o := b.outStart[in.Index] + int(in.Vout); b.live[o] {
			b.live[o] = false // created and spent within this block
			return
		}
	}
	b.utxo(in.Desc, &Utxo{Height: in.Height, Txid: in.Txid, Vout: in.Vout, Value: in.Value, Coinbase: in.Coinbase}, in.Index, true)
}

// utxo adds the addressUtxos row of u, created by the tx at index pos of
// its block: put, or deleted (del).
func (b *rowBuilder) utxo(desc bchain.AddrDesc, u *Utxo, pos uint32, del bool) {
	at := b.mark(len(desc) + 56)
	b.buf = appendUtxoKey(b.buf, desc, u)
	key := b.cut(at)
	at = len(b.buf)
	b.buf = appendUtxoValue(b.buf, u)
	b.r.muts = append(b.r.muts, mutation{cf: CFAddressUtxos, key: key, value: b.cut(at), del: del, pos: pos})
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
	b.live[b.outStart[pos]+n] = true
}

// finish adds the UTXOs the block leaves and the addresses rows.
func (b *rowBuilder) finish() *blockRows {
	for i := range b.txs {
		tx := &b.txs[i]
		for n := range tx.Outputs {
			if b.live[b.outStart[i]+n] {
				b.utxo(tx.Outputs[n].Desc, &Utxo{Height: b.h, Txid: tx.Txid, Vout: uint32(n), Value: tx.Outputs[n].Value, Coinbase: tx.Coinbase}, uint32(i), false)
			}
		}
	}
	// The touches grouped by descriptor, in block order within each (a
	// counting sort): after it, descriptor i's are byDesc[end[i-1]:end[i]].
	end := make([]int32, len(b.r.descs))
	for _, t := range b.touches {
		end[t.desc]++
	}
	sum := int32(0)
	for i, n := range end {
		end[i], sum = sum, sum+n
	}
	byDesc := make([]addrTouch, len(b.touches))
	for _, t := range b.touches {
		byDesc[end[t.desc]] = t
		end[t.desc]++
	}
	from := int32(0)
	for i, k := range b.r.descs {
		at := b.mark(len(k) + 6 + 15*int(end[i]-from)) // a touch: position, count, index, varints at their longest
		b.buf = appendAddressesKey(b.buf, bchain.AddrDesc(k), b.h)
		key := b.cut(at)
		at = len(b.buf)
		b.buf = appendAddrTouches(b.buf, byDesc[from:end[i]])
		b.put(CFAddresses, key, b.cut(at))
		from = end[i]
	}
	return b.r
}

// appendAddrTouches appends the addresses row of one descriptor's touches
// (in block order) to dst: packAddrTxs of its txs, newest first, each tx's
// indexes in block order.
func appendAddrTouches(dst []byte, touches []addrTouch) []byte {
	e := encoder{b: dst}
	for end := len(touches); end > 0; {
		pos, begin := touches[end-1].pos, end-1
		for begin > 0 && touches[begin-1].pos == pos {
			begin--
		}
		e.uvarint(uint64(pos))
		e.uvarint(uint64(end - begin))
		for _, t := range touches[begin:end] {
			if t.idx >= 0 {
				e.uvarint(uint64(t.idx) << 1)
			} else {
				e.uvarint(uint64(^t.idx)<<1 | 1)
			}
		}
		end = begin
	}
	return e.b
}
