package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // hash160 of P2PK keys, as the chain defines it

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
)

// The independent lower bound shares none of the sync's code: blocks are
// decoded by btcd's wire package, the rows of the index's families
// (docs/schema.md: height, blockTxids, txAddresses, addresses, spends,
// addressUtxos, addressBalance, blockTxs, blockFilter) are built here from
// a map of in-memory prevouts, sorted with the standard library, written as
// one SST file per family and ingested into an empty RocksDB, all on one
// core (GOMAXPROCS 1). Only the storage engine is the index's. It builds
// the same kinds and numbers of rows the sync does, not necessarily the
// same bytes (block filters leave out Blockbook's ordinal-inscription
// rule), so it bounds the work, and the sync's own bound (lowerBound)
// shows what its code costs beyond it.

// indepFamilies are the families the independent bound writes.
var indepFamilies = []db.CF{db.CFHeight, db.CFBlockTxids, db.CFTxAddresses, db.CFAddresses, db.CFSpends,
	db.CFAddressUtxos, db.CFAddressBalance, db.CFBlockTxs, db.CFBlockFilter}

type indepTimes struct{ decode, build, sort, ingest time.Duration }

func (t indepTimes) total() time.Duration { return t.decode + t.build + t.sort + t.ingest }

// rowSet collects one family's rows in an arena.
type rowSet struct {
	arena []byte
	rows  []rowRef
}

type rowRef struct{ k, v, end int } // key arena[k:v], value arena[v:end]

func (s *rowSet) add(key, value []byte) {
	k := len(s.arena)
	s.arena = append(append(s.arena, key...), value...)
	s.rows = append(s.rows, rowRef{k, k + len(key), len(s.arena)})
}

func (s *rowSet) key(r rowRef) []byte { return s.arena[r.k:r.v] }

type prevout struct {
	height, index uint32
	value         int64
	desc          []byte
	coinbase      bool
}

type balance struct {
	txs, sent, balance, utxos int64
	lastH, lastI              uint32 // the last tx counted, +1 (0: none)
}

// indepBuilder holds the state of one pass over the chain.
type indepBuilder struct {
	cfs      map[db.CF]*rowSet
	prevouts map[wire.OutPoint]prevout
	balances map[string]*balance
	keep     uint32 // blocks of undo data (block_addresses_to_keep)
	tip      uint32
	filters  bool
	k, v     []byte // scratch
}

func independentBound(raws [][]byte, dir string, filters bool) (indepTimes, int, error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var t indepTimes
	start := time.Now()
	blocks := make([]*wire.MsgBlock, len(raws))
	txids := make([][]chainhash.Hash, len(raws))
	for h, raw := range raws {
		blocks[h] = new(wire.MsgBlock)
		if err := blocks[h].Deserialize(bytes.NewReader(raw)); err != nil {
			return t, 0, fmt.Errorf("block %d: %w", h, err)
		}
		txids[h] = make([]chainhash.Hash, len(blocks[h].Transactions))
		for i, tx := range blocks[h].Transactions {
			txids[h][i] = tx.TxHash()
		}
	}
	t.decode = time.Since(start)

	start = time.Now()
	b := &indepBuilder{cfs: map[db.CF]*rowSet{}, prevouts: map[wire.OutPoint]prevout{}, balances: map[string]*balance{},
		keep: 300, tip: uint32(len(raws) - 1), filters: filters}
	for _, cf := range indepFamilies {
		b.cfs[cf] = &rowSet{}
	}
	for h, blk := range blocks {
		b.block(uint32(h), blk, txids[h], len(raws[h]))
	}
	b.finish()
	t.build = time.Since(start)

	start = time.Now()
	rows := 0
	for _, s := range b.cfs {
		slices.SortFunc(s.rows, func(x, y rowRef) int { return bytes.Compare(s.key(x), s.key(y)) })
		rows += len(s.rows)
	}
	t.sort = time.Since(start)

	start = time.Now()
	err := ingestRows(dir, b.cfs)
	t.ingest = time.Since(start)
	return t, rows, err
}

// ingestRows writes each family's sorted rows as a run and ingests it.
func ingestRows(dir string, cfs map[db.CF]*rowSet) error {
	e, err := rocksdb.OpenEngine(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer e.Close() //nolint:errcheck // a bench's scratch database; a failed write or ingest is reported
	for cf, s := range cfs {
		if len(s.rows) == 0 {
			continue
		}
		w, err := e.NewRun(cf, "indep-"+strconv.Itoa(int(cf))+".sst")
		if err != nil {
			return err
		}
		for _, r := range s.rows {
			if err := w.Add(s.arena[r.k:r.v], s.arena[r.v:r.end], false); err != nil {
				w.Abort()
				return fmt.Errorf("%s: %w", cf, err)
			}
		}
		if err := w.Finish(); err != nil {
			return err
		}
	}
	if err := e.SyncRuns(); err != nil {
		return err
	}
	for cf, s := range cfs {
		if len(s.rows) == 0 {
			continue
		}
		if _, err := e.IngestRun(cf, "indep-"+strconv.Itoa(int(cf))+".sst"); err != nil {
			return err
		}
	}
	return nil
}

// addrAcc is one descriptor's entries in a block: per tx its index and
// codes, in block order.
type addrAcc struct {
	txs   []uint32 // tx index per entry
	ends  []int    // end of the entry's codes in codes
	codes []uint32
}

func (a *addrAcc) event(txIndex, code uint32) {
	if n := len(a.txs); n == 0 || a.txs[n-1] != txIndex {
		a.txs = append(a.txs, txIndex)
		a.ends = append(a.ends, len(a.codes))
	}
	a.codes = append(a.codes, code)
	a.ends[len(a.ends)-1] = len(a.codes)
}

// blockRows holds a block's rows that are written once its txs are done.
type blockRows struct {
	h       uint32
	addrs   map[string]*addrAcc
	order   []string // descriptors in first-seen order (map order would vary)
	undo    []byte
	taproot map[string]struct{} // nil without filters
}

func (b *indepBuilder) block(h uint32, blk *wire.MsgBlock, txids []chainhash.Hash, size int) {
	hash := blk.BlockHash()
	var hdr bytes.Buffer
	_ = blk.Header.Serialize(&hdr)
	v := display(hash)
	v = binary.AppendUvarint(v, uint64(blk.Header.Timestamp.Unix()))
	v = binary.AppendUvarint(v, uint64(len(txids)))
	v = binary.AppendUvarint(v, uint64(size))
	v = append(binary.AppendUvarint(v, uint64(hdr.Len())), hdr.Bytes()...)
	b.cfs[db.CFHeight].add(binary.BigEndian.AppendUint32(nil, h), v)
	for c := 0; c*64 < len(txids); c++ {
		v = v[:0]
		for _, id := range txids[c*64 : min(len(txids), c*64+64)] {
			v = append(v, display(id)...)
		}
		b.cfs[db.CFBlockTxids].add(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, h), uint32(c)), v)
	}
	r := &blockRows{h: h, addrs: map[string]*addrAcc{}, undo: binary.AppendUvarint(nil, uint64(len(txids)))}
	if b.filters {
		r.taproot = map[string]struct{}{}
	}
	for i, tx := range blk.Transactions {
		b.tx(r, uint32(i), tx, txids[i])
	}
	if h+b.keep > b.tip {
		b.cfs[db.CFBlockTxs].add(binary.BigEndian.AppendUint32(nil, h), r.undo)
	}
	b.addressRows(r)
	b.filterRow(r, hash)
}

// touch records that tx i of the block touches desc with code, and counts
// the tx once in the descriptor's balance.
func (b *indepBuilder) touch(r *blockRows, desc []byte, i, code uint32) *balance {
	a := r.addrs[string(desc)]
	if a == nil {
		a = &addrAcc{}
		r.addrs[string(desc)] = a
		r.order = append(r.order, string(desc))
	}
	a.event(i, code)
	bal := b.balances[string(desc)]
	if bal == nil {
		bal = &balance{}
		b.balances[string(desc)] = bal
	}
	if bal.lastH != r.h+1 || bal.lastI != i {
		bal.txs++
		bal.lastH, bal.lastI = r.h+1, i
	}
	if r.taproot != nil && isP2TR(desc) {
		r.taproot[string(desc)] = struct{}{}
	}
	return bal
}

// tx builds the rows of tx i: its txAddresses and spends rows, and its
// part of the block's address rows, undo data and balances.
func (b *indepBuilder) tx(r *blockRows, i uint32, tx *wire.MsgTx, txid chainhash.Hash) {
	h, coinbase := r.h, i == 0
	ta := binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(h)), uint64(i)), b2u(coinbase))
	if coinbase {
		ta = binary.AppendUvarint(ta, 0)
		r.undo = binary.AppendUvarint(r.undo, 0)
	} else {
		ta = binary.AppendUvarint(ta, uint64(len(tx.TxIn)))
		r.undo = binary.AppendUvarint(r.undo, uint64(len(tx.TxIn)))
		for j, in := range tx.TxIn {
			po, ok := b.prevouts[in.PreviousOutPoint]
			vout := in.PreviousOutPoint.Index
			if ok {
				delete(b.prevouts, in.PreviousOutPoint)
				bal := b.touch(r, po.desc, i, uint32(j)<<1|1)
				bal.sent += po.value
				bal.balance -= po.value
				bal.utxos--
			}
			ta = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(ta, uint64(h-po.height)), uint64(po.index)), uint64(vout))
			r.undo = binary.AppendUvarint(binary.AppendUvarint(r.undo, uint64(po.height)), uint64(po.index))
			r.undo = binary.AppendUvarint(r.undo, uint64(vout)<<1|b2u(po.coinbase))
			b.k = binary.AppendUvarint(binary.AppendUvarint(binary.BigEndian.AppendUint32(b.k[:0], po.height), uint64(po.index)), uint64(vout))
			b.v = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(b.v[:0], uint64(h)), uint64(i)), uint64(j))
			b.cfs[db.CFSpends].add(b.k, b.v)
		}
	}
	ta = binary.AppendUvarint(ta, uint64(len(tx.TxOut)))
	for k, out := range tx.TxOut {
		desc := descriptor(out.PkScript)
		ta = append(binary.AppendUvarint(ta, uint64(len(desc))), desc...)
		ta = binary.AppendUvarint(ta, uint64(out.Value))
		if len(desc) == 0 {
			continue
		}
		b.prevouts[wire.OutPoint{Hash: txid, Index: uint32(k)}] = prevout{height: h, index: i, value: out.Value, desc: desc, coinbase: coinbase}
		bal := b.touch(r, desc, i, uint32(k)<<1)
		bal.balance += out.Value
		bal.utxos++
	}
	b.cfs[db.CFTxAddresses].add(display(txid), ta)
}

// addressRows writes one row per descriptor the block touches, its txs
// newest first.
func (b *indepBuilder) addressRows(r *blockRows) {
	for _, desc := range r.order {
		a := r.addrs[desc]
		b.k = binary.BigEndian.AppendUint32(append(binary.AppendUvarint(b.k[:0], uint64(len(desc))), desc...), ^r.h)
		b.v = b.v[:0]
		for e := len(a.txs) - 1; e >= 0; e-- {
			from := 0
			if e > 0 {
				from = a.ends[e-1]
			}
			b.v = binary.AppendUvarint(binary.AppendUvarint(b.v, uint64(a.txs[e])), uint64(a.ends[e]-from))
			for _, c := range a.codes[from:a.ends[e]] {
				b.v = binary.AppendUvarint(b.v, uint64(c))
			}
		}
		b.cfs[db.CFAddresses].add(b.k, b.v)
	}
}

// filterRow writes the block's filter of the taproot scripts it touches
// (P 20, zeroed key, as the bench's sync).
func (b *indepBuilder) filterRow(r *blockRows, hash chainhash.Hash) {
	if len(r.taproot) == 0 {
		return
	}
	data := make([][]byte, 0, len(r.taproot))
	for d := range r.taproot {
		data = append(data, []byte(d))
	}
	var key [gcs.KeySize]byte
	if f, err := gcs.BuildGCSFilter(20, 1<<20, key, data); err == nil {
		if nb, err := f.NBytes(); err == nil {
			b.cfs[db.CFBlockFilter].add(display(hash), nb)
		}
	}
}

// finish writes the rows only the end of the load knows: unspent outputs
// and balances.
func (b *indepBuilder) finish() {
	for op, po := range b.prevouts {
		b.k = binary.BigEndian.AppendUint32(append(binary.AppendUvarint(b.k[:0], uint64(len(po.desc))), po.desc...), ^po.height)
		b.k = binary.BigEndian.AppendUint32(append(b.k, display(op.Hash)...), op.Index)
		b.v = append(binary.AppendUvarint(b.v[:0], uint64(po.value)), byte(b2u(po.coinbase)))
		b.cfs[db.CFAddressUtxos].add(b.k, b.v)
	}
	for desc, bal := range b.balances {
		sum := sha256.Sum256([]byte(desc))
		b.k = append(append(b.k[:0], sum[:8]...), desc...)
		b.v = binary.AppendUvarint(binary.AppendUvarint(b.v[:0], uint64(bal.txs)), uint64(bal.sent))
		b.v = binary.AppendUvarint(binary.AppendUvarint(b.v, uint64(bal.balance)), uint64(bal.utxos))
		b.cfs[db.CFAddressBalance].add(b.k, b.v)
	}
}

// descriptor is the output script, except that a P2PK output is filed
// under its key's P2PKH script, and outputs that pay no one (OP_RETURN,
// empty) have none.
func descriptor(script []byte) []byte {
	switch {
	case len(script) == 0 || script[0] == 0x6a:
		return nil
	case (len(script) == 35 && script[0] == 33 || len(script) == 67 && script[0] == 65) && script[len(script)-1] == 0xac:
		sha := sha256.Sum256(script[1 : len(script)-1])
		r := ripemd160.New()
		r.Write(sha[:])
		return append(append([]byte{0x76, 0xa9, 20}, r.Sum(nil)...), 0x88, 0xac)
	}
	return script
}

func isP2TR(d []byte) bool { return len(d) == 34 && d[0] == 0x51 && d[1] == 0x20 }

// display is a hash in display byte order (reversed), as keys hold it.
func display(h chainhash.Hash) []byte {
	out := make([]byte, 32)
	for i := range h {
		out[31-i] = h[i]
	}
	return out
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// rowCounts counts each family's rows in the two bounds' databases, to
// show that the independent bound builds the rows the sync's does.
func rowCounts(syncBound, indep string) (string, error) {
	counts := make([]map[db.CF]int, 2)
	for i, dir := range []string{syncBound, indep} {
		var err error
		if counts[i], err = countRows(dir); err != nil {
			return "", err
		}
	}
	var out []string
	for _, cf := range indepFamilies {
		out = append(out, fmt.Sprintf("%s %d/%d", cf, counts[0][cf], counts[1][cf]))
	}
	return strings.Join(out, ", "), nil
}

// countRows counts the rows of the independent bound's families in dir.
func countRows(dir string) (map[db.CF]int, error) {
	e, err := rocksdb.OpenEngine(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, ReadOnly: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer e.Close() //nolint:errcheck // read only
	n := map[db.CF]int{}
	for _, cf := range indepFamilies {
		if err := e.Iterate(cf, nil, nil, func(_, _ []byte) (bool, error) { n[cf]++; return true, nil }); err != nil {
			return nil, err
		}
	}
	return n, nil
}
