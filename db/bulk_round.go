package db

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/openexplorer/blockbook/bchain"
)

// cfRows collects one column family's rows of a round in chunked arenas,
// the rows' bytes and their references alike (growing never copies: a
// profile of the sync's bound had the references' growslice, copying and
// clearing, as the largest part of a quarter of row building in memmove
// and memclr), to be sorted and written as one staged run.
type cfRows struct {
	chunks [][]byte
	refs   [][]rowRef // refChunk each; row i is refs[i/refChunk][i%refChunk]
	n      int
}

// refChunk is the references per chunk (32 bytes each: 1 MiB); the
// first chunk grows up to it.
const refChunk = 1 << 15

// len is the number of rows added.
func (c *cfRows) len() int { return c.n }

// row is row i, as returned by add.
func (c *cfRows) row(i int) *rowRef { return &c.refs[i/refChunk][i%refChunk] }

// rowRef locates a row. prefix holds the key's first 8 bytes (big-endian,
// zero-padded) so that most comparisons of the sort never touch the arena.
type rowRef struct {
	prefix     uint64
	chunk, off int32
	klen, vlen int32
	op         rowOp
	dead       bool // cancelled within the round (a UTXO created and spent)
}

// rowOp is what a row of a run does to the stored row of its key.
type rowOp uint8

const (
	opPut rowOp = iota
	opDelete
	opMerge // a merge operand (CF.Merger)
)

func putOrDelete(del bool) rowOp {
	if del {
		return opDelete
	}
	return opPut
}

// The arena's chunks double from firstArenaChunk to arenaChunk, so that a
// column family with a few rows holds a few KiB, not 1 MiB: a round counts
// its chunks against RoundBytes, and with whole 1 MiB chunks the twenty-odd
// families one block touches filled a small budget's round (64 MB: 14 MiB
// a round) at every block, one round per block.
const (
	firstArenaChunk = 16 << 10
	arenaChunk      = 1 << 20
)

func (c *cfRows) add(key, value []byte, op rowOp) int {
	need := len(key) + len(value)
	if n := len(c.chunks); n == 0 || len(c.chunks[n-1])+need > cap(c.chunks[n-1]) {
		size := firstArenaChunk
		if n > 0 {
			size = min(arenaChunk, 2*cap(c.chunks[n-1]))
		}
		c.chunks = append(c.chunks, make([]byte, 0, max(size, need)))
	}
	ci := len(c.chunks) - 1
	chunk := c.chunks[ci]
	off := len(chunk)
	c.chunks[ci] = append(append(chunk, key...), value...)
	var p [8]byte
	copy(p[:], key)
	if c.n%refChunk == 0 {
		// The first chunk grows as a slice does (a small round stays
		// small), the later ones are whole.
		c.refs = append(c.refs, make([]rowRef, 0, min(refChunk, max(c.n, 256))))
	}
	last := &c.refs[len(c.refs)-1]
	*last = append(*last, rowRef{prefix: binary.BigEndian.Uint64(p[:]), chunk: int32(ci), off: int32(off),
		klen: int32(len(key)), vlen: int32(len(value)), op: op})
	c.n++
	return c.n - 1
}

func (c *cfRows) key(r rowRef) []byte {
	return c.chunks[r.chunk][r.off : r.off+r.klen]
}

func (c *cfRows) value(r rowRef) []byte {
	return c.chunks[r.chunk][r.off+r.klen : r.off+r.klen+r.vlen]
}

// bytes approximates the memory the rows hold.
func (c *cfRows) bytes() int64 {
	refs := 0
	for _, r := range c.refs {
		refs += cap(r)
	}
	arena := 0
	for _, ch := range c.chunks {
		arena += cap(ch)
	}
	return int64(arena) + int64(refs)*int64(unsafe.Sizeof(rowRef{}))
}

// round accumulates the rows of consecutive blocks between two ingests.
type round struct {
	from, to uint32
	toHash   bchain.Hash
	cfs      [numCF]cfRows
	balances map[string]*balanceDelta
	deltas   []balanceDelta // the chunk balances' new entries are cut from (keepDelta)
	// puts: per block of the round (puts[h-from]), the addressUtxos row
	// of each output it created, to cancel the row if the output is
	// spent within the round; found by position, not hashed by outpoint.
	puts      []roundPuts
	putsBytes int64
	undo      map[uint32][]byte
	undoBytes int64
	keep      uint32
	blocks    int
	rowsCount int
	opt       *optionalSet // the enabled optional indexes, for their balance-following rows
	// The entries the balances were sized for (newRound).
	balHint int
}

// roundPuts are one block's outputs: outStart numbers them across its txs
// (blockRows.outStart), and rows[o] is output o's addressUtxos row in the
// round (-1: none, or cancelled).
type roundPuts struct {
	outStart []int
	rows     []int32
}

// newRound starts a round; prev, the round before it (nil for the
// first), sizes its maps: rounds of one session are alike, and growing the
// maps entry by entry rehashed them a dozen times a round (a fifth of the
// round's map time in a profile of the whale chain's sync).
func newRound(from, keep uint32, prev *round) *round {
	r := &round{from: from, keep: keep}
	if prev != nil {
		r.balHint = len(prev.balances)
	}
	r.balances = make(map[string]*balanceDelta, r.balHint)
	r.undo = make(map[uint32][]byte)
	return r
}

// bytes approximates the round's memory; maps sized up front count at
// their size from the start.
func (r *round) bytes() int64 {
	var n int64
	for i := range r.cfs {
		n += r.cfs[i].bytes()
	}
	return n + int64(max(len(r.balances), r.balHint))*96 + r.putsBytes + r.undoBytes
}

// add takes the rows of one more block.
func (r *round) add(height uint32, hash bchain.Hash, rows *blockRows) {
	r.to, r.toHash = height, hash
	r.blocks++
	if int(height-r.from) != len(r.puts) {
		// puts[height-from] must be this block's table: a gap would make
		// putOf cancel another output's row.
		panic(fmt.Sprintf("db: round from %d given block %d after %d blocks", r.from, height, len(r.puts)))
	}
	r.addPuts(rows)
	for _, m := range rows.muts {
		r.rowsCount++
		switch {
		case m.cf == CFBlockTxs:
			// Undo data is kept only for the window below the round's
			// last block; decided at flush.
			r.undo[height] = m.value
			r.undoBytes += int64(len(m.value))
			if len(r.undo) > int(r.keep) {
				r.undoBytes -= int64(len(r.undo[height-r.keep]))
				delete(r.undo, height-r.keep)
			}
		case m.cf == CFAddressUtxos && m.del:
			if p := r.putOf(utxoKeyHeight(m.key), &m); p != nil && *p >= 0 {
				c := &r.cfs[CFAddressUtxos]
				// The position names the row; its key must be the one
				// spent, or a live UTXO would vanish without a trace.
				if row := c.row(int(*p)); bytes.Equal(c.key(*row), m.key) {
					row.dead = true // created and spent within the round
					*p = -1
					continue
				}
			}
			r.cfs[m.cf].add(m.key, nil, opDelete)
		case m.cf == CFAddressUtxos:
			i := r.cfs[m.cf].add(m.key, m.value, opPut)
			if p := r.putOf(height, &m); p != nil {
				*p = int32(i)
			}
		default:
			r.cfs[m.cf].add(m.key, m.value, putOrDelete(m.del))
		}
	}
	for i, k := range rows.descs {
		d := &rows.deltas[i]
		if acc := r.balances[k]; acc != nil {
			acc.txs += d.txs
			acc.sent += d.sent
			acc.received += d.received
			acc.utxos += d.utxos
		} else {
			r.balances[k] = r.keepDelta(d.balanceDelta)
		}
	}
}

// addPuts starts the table of the outputs of the block rows are of.
func (r *round) addPuts(rows *blockRows) {
	p := roundPuts{outStart: rows.outStart}
	if n := len(rows.outStart); n > 0 {
		p.rows = make([]int32, rows.outStart[n-1])
		for i := range p.rows {
			p.rows[i] = -1
		}
	}
	r.puts = append(r.puts, p)
	r.putsBytes += int64(4*len(p.rows) + 8*len(p.outStart) + 48)
}

// putOf returns where the round keeps the addressUtxos row of the output
// an addressUtxos mutation names, created at height h by the tx at m.pos
// of its block (nil: not an output of the round's blocks).
func (r *round) putOf(h uint32, m *mutation) *int32 {
	if h < r.from || int(h-r.from) >= len(r.puts) {
		return nil
	}
	p := &r.puts[h-r.from]
	if int(m.pos)+1 >= len(p.outStart) {
		return nil
	}
	o := p.outStart[m.pos] + int(utxoKeyVout(m.key))
	if o >= p.outStart[m.pos+1] {
		return nil
	}
	return &p.rows[o]
}

// keepDelta returns a copy of d in the round's own chunks of deltas (one
// allocation per deltaChunk addresses new to the round; a chunk never
// grows, since the map points into it): the block's deltas, one array
// per block, are dropped after add.
func (r *round) keepDelta(d balanceDelta) *balanceDelta {
	if len(r.deltas) == cap(r.deltas) {
		r.deltas = make([]balanceDelta, 0, deltaChunk)
	}
	r.deltas = append(r.deltas, d)
	return &r.deltas[len(r.deltas)-1]
}

const deltaChunk = 4096

// finalRows adds the rows decided at the end of the round: the balances
// of the addresses it touched, and the undo window moved from
// (prevTip-keep, prevTip] to (to-keep, to].
func (r *round) finalRows(bc *balanceCache, prevTip uint32, hadTip bool) error {
	var bk, v []byte // reused: add copies the row
	err := bc.each(r.balances, func(k string, d *balanceDelta, cur *AddrBalance) error {
		desc := bchain.AddrDesc(k)
		bk = appendBalanceKey(bk[:0], desc)
		if cur == nil {
			// Unknown: the engine adds the change to the stored balance.
			// The address may be new, which the optional indexes that
			// follow balance rows hear.
			v = appendBalanceChange(v[:0], d)
			r.cfs[CFAddressBalance].add(bk, v, opMerge)
			r.opt.balanceRow(roundWriter{r}, desc, BalanceMayCreate)
			return nil
		}
		next, err := applyBalanceDelta(cur, d)
		if err != nil {
			return fmt.Errorf("address %x: %w", k, err)
		}
		bc.put(k, next)
		switch {
		case next.Txs == 0:
			r.cfs[CFAddressBalance].add(bk, nil, opDelete)
			r.opt.balanceRow(roundWriter{r}, desc, BalanceDeleted)
		case cur.Txs == 0:
			v = appendAddrBalance(v[:0], next)
			r.cfs[CFAddressBalance].add(bk, v, opPut)
			r.opt.balanceRow(roundWriter{r}, desc, BalanceCreated)
		default:
			v = appendAddrBalance(v[:0], next)
			r.cfs[CFAddressBalance].add(bk, v, opPut)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for cf := range r.cfs {
		if CF(cf).Merger() != nil && r.cfs[cf].len() > 0 {
			r.cfs[cf].add(mergeRunMark(r.to), heightKey(r.to), opPut)
		}
	}
	low := func(h uint32) uint32 { // lowest height of the window ending at h
		if h+1 > r.keep {
			return h + 1 - r.keep
		}
		return 0
	}
	if hadTip {
		for h := low(prevTip); h <= prevTip && h < low(r.to); h++ {
			r.cfs[CFBlockTxs].add(heightKey(h), nil, opDelete)
		}
	}
	for h, v := range r.undo {
		if h >= low(r.to) {
			r.cfs[CFBlockTxs].add(heightKey(h), v, opPut)
		}
	}
	return nil
}

// balanceCache keeps the balances a bulk session has written, so that a
// round writes whole balances where it can, and merge operands only for
// the addresses whose balance it does not know. It is touched only by the
// (sequential) flushes, and bounded like the UTXO cache: when full, the
// older half is dropped. An address the cache has lost never enters it
// again (its stored balance is unknown from then on), so the cache never
// holds a balance that operands have since changed.
type balanceCache struct {
	cur, old map[string]AddrBalance
	max      int // entries per generation
	// written filters the addresses the session wrote a balance for, when
	// it started on an empty index (nil otherwise): the other addresses
	// have none, and start from zero. An address gets a merge operand only
	// when the filter may have it, so the filter holds it already.
	written *writtenFilter
	// What each found the balances in: the cache, the filter (new
	// addresses), neither (merged).
	hits, skipped, merged int64
}

// newBalanceCache returns a cache of about maxBytes; on an empty index a
// quarter of them, at most maxWrittenFilterBytes, go to the filter of
// written addresses.
func newBalanceCache(maxBytes int64, indexEmpty bool) *balanceCache {
	c := &balanceCache{cur: make(map[string]AddrBalance)}
	if indexEmpty {
		c.written = newWrittenFilter(min(maxBytes/4, maxWrittenFilterBytes))
		maxBytes -= c.written.bytes()
	}
	c.max = int(max(maxBytes/balanceEntryBytes/2, 1024))
	return c
}

const balanceEntryBytes = 128

// maxWrittenFilterBytes bounds the filter of written addresses: 1 GiB
// holds 860 M addresses at 10 bits each. The filter is allocated whole, so
// a quarter of a huge cache (syncbench's lower bound asks for 1 TiB) must
// not become a filter larger than the machine.
const maxWrittenFilterBytes = 1 << 30

// each calls fn with every address of deltas, its change and its current
// balance: from the cache, zero when the session never wrote the address
// (the filter), nil when unknown (the index is not read: the caller writes
// a merge operand). fn may put into the cache, and must not keep cur.
func (c *balanceCache) each(deltas map[string]*balanceDelta, fn func(desc string, d *balanceDelta, cur *AddrBalance) error) error {
	var b AddrBalance // one for every call
	for k, d := range deltas {
		cur := &b
		var ok bool
		// An address the filter never saw was never put in the cache
		// either (put adds it to the filter while there is one): a new
		// address costs no lookup.
		if c.written != nil && !c.written.mayHave(k) {
			b = AddrBalance{}
			c.skipped++
		} else if b, ok = c.cur[k]; ok {
			c.hits++
		} else if b, ok = c.old[k]; ok {
			c.hits++
		} else {
			c.merged++
			cur = nil
		}
		if err := fn(k, d, cur); err != nil {
			return err
		}
	}
	return nil
}

func (c *balanceCache) put(desc string, b *AddrBalance) {
	if len(c.cur) >= c.max {
		c.old, c.cur = c.cur, make(map[string]AddrBalance, c.max)
	}
	if c.written != nil {
		c.written.add(desc)
	}
	c.cur[desc] = *b
}

// filterRetired reports, once, that the filter of written addresses has
// retired (and drops it, which reads as no filter): from then on, every
// address missing from the cache gets a merge operand. It returns the number of
// addresses the filter held.
func (c *balanceCache) filterRetired() (int, bool) {
	if c.written == nil || !c.written.retired() {
		return 0, false
	}
	n := c.written.n
	c.written = nil
	return n, true
}

// writeFiles sorts each column family's rows and writes them as staged
// runs, several column families at a time.
func (r *round) writeFiles(d *DB, workers int) ([]BulkFile, error) {
	var (
		mu    sync.Mutex
		files []BulkFile
		errs  []error
		wg    sync.WaitGroup
		sem   = make(chan struct{}, max(workers, 1))
	)
	for cf := CF(1); cf < numCF; cf++ {
		if r.cfs[cf].len() == 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			name := fmt.Sprintf("%d-%d-%s.sst", r.from, r.to, cf)
			staged, err := r.writeFile(d, cf, name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if staged {
				files = append(files, BulkFile{CF: cf, Name: name})
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	slices.SortFunc(files, func(a, b BulkFile) int { return int(a.CF) - int(b.CF) })
	return files, d.syncRuns()
}

// writeFile stages one column family's run; staged is false when every row
// was cancelled within the round (an engine refuses an empty run).
func (r *round) writeFile(d *DB, cf CF, name string) (staged bool, err error) {
	c := &r.cfs[cf]
	rows := c.sorted(true)
	if len(rows) == 0 {
		return false, nil
	}
	f, err := d.newRun(cf, name, len(rows))
	if err != nil {
		return false, err
	}
	for _, row := range rows {
		if err := f.add(d, c.key(row), c.value(row), row.op); err != nil {
			f.w.Abort()
			return false, err
		}
	}
	if err := f.finish(d); err != nil {
		f.w.Abort()
		return false, err
	}
	return true, nil
}
