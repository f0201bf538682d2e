package runes

// overlay.go: the runes rows written but not yet in the database.
//
// Unlike the write-once optional indexes, a block's runes rows depend on
// earlier ones (an output's runes come from the outputs it spends), so the
// index reads its own rows. Those of the last blocks may not be in the
// database yet: a bulk round holds many blocks' rows in memory until it is
// ingested, and a block's batch is written after ConnectBlock returns. The
// overlay keeps the rows the index has handed out, per block, until the
// database's tip shows them durable (a connect at height h once the tip is
// at h or above, a disconnect of h once it is below h; rounds and batches
// commit in order), and drops a block's rows that never landed (a failed
// write, retried) when the next call shows it. Undo rows are not kept:
// only the disconnect of their block reads them, and that runs when the
// database's tip is that block, so they are durable by then.

type ovValue struct {
	v   []byte // nil: deleted
	seq uint64 // the op that wrote it last
}

type ovOp struct {
	seq     uint64
	height  uint32
	connect bool
	rows    map[string][]byte
	bytes   int64 // memory of rows and of their entries in cur (approximate)
}

// ovEntryBytes approximates the memory of a row's two map entries (in
// ovOp.rows and overlay.cur) besides its key copies and value: headers,
// seq, and the maps' spare slots. Measured (runtime.MemStats, 100,000
// rows of 8-byte keys and 12-byte values): 211 bytes a row in all.
const ovEntryBytes = 192

type overlay struct {
	ops []*ovOp
	cur map[string]ovValue
	seq uint64
	// sum is the bytes of the ops at or above sumFrom, kept up to date by
	// set and settle so that pendingBytes, asked on every block of a bulk
	// round with the round's first height, does not walk the round's ops
	// each time (quadratic per round). walks counts the walks (tests).
	sumFrom uint32
	sum     int64
	hasSum  bool
	walks   int
}

// get returns the pending value of a key (nil if deleted); found false
// means the database has the current value.
func (o *overlay) get(k []byte) (v []byte, found bool) {
	x, ok := o.cur[string(k)]
	return x.v, ok
}

// settle drops the ops the database tip shows durable, then those that a
// new op at height (connect or disconnect) shows failed.
func (o *overlay) settle(tip uint32, hasTip bool, height uint32, connect bool) {
	for len(o.ops) > 0 {
		f := o.ops[0]
		durable := (f.connect && hasTip && tip >= f.height) || (!f.connect && (!hasTip || tip < f.height))
		if !durable {
			break
		}
		o.ops = o.ops[1:]
		o.dropBytes(f)
		for k := range f.rows {
			if o.cur[k].seq == f.seq {
				delete(o.cur, k)
			}
		}
	}
	stale := false
	for len(o.ops) > 0 {
		l := o.ops[len(o.ops)-1]
		failed := !l.connect || (connect && l.height >= height) || (!connect && l.height > height)
		if !failed {
			break
		}
		o.ops = o.ops[:len(o.ops)-1]
		o.dropBytes(l)
		stale = true
	}
	if stale || len(o.ops) == 0 {
		o.cur = map[string]ovValue{}
		for _, op := range o.ops {
			for k, v := range op.rows {
				o.cur[k] = ovValue{v: v, seq: op.seq}
			}
		}
	}
}

// begin starts the rows of a new op.
func (o *overlay) begin(height uint32, connect bool) *ovOp {
	o.seq++
	op := &ovOp{seq: o.seq, height: height, connect: connect, rows: map[string][]byte{}}
	o.ops = append(o.ops, op)
	return op
}

// set records a row of op (v nil: a delete).
func (o *overlay) set(op *ovOp, k, v []byte) {
	op.rows[string(k)] = v
	n := ovEntryBytes + 2*int64(len(k)) + int64(len(v))
	op.bytes += n
	if o.hasSum && op.height >= o.sumFrom {
		o.sum += n
	}
	if o.cur == nil {
		o.cur = map[string]ovValue{}
	}
	o.cur[string(k)] = ovValue{v: v, seq: op.seq}
}

// pendingBytes approximates the memory held for the ops at or above
// height: a bulk load counts those of the round it builds.
func (o *overlay) pendingBytes(from uint32) int64 {
	if o.hasSum && o.sumFrom == from {
		return o.sum
	}
	o.walks++
	var n int64
	for _, op := range o.ops {
		if op.height >= from {
			n += op.bytes
		}
	}
	o.sumFrom, o.sum, o.hasSum = from, n, true
	return n
}

// dropBytes takes a removed op out of the running total.
func (o *overlay) dropBytes(op *ovOp) {
	if o.hasSum && op.height >= o.sumFrom {
		o.sum -= op.bytes
	}
}
