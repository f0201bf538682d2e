package db

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// testClassifier indexes every script except data carriers and empty ones.
type testClassifier struct{}

func (testClassifier) OutputAddrDesc(s []byte) bchain.AddrDesc {
	if len(s) == 0 || s[0] == 0x6a {
		return nil
	}
	return s
}

// filterVariants are the block filter settings the index tests run with:
// off, Blockbook's production selection keyed by the block hash, and every
// script with the zeroed key (so that most blocks have a filter row).
var filterVariants = []struct {
	name string
	p    FilterParams
}{
	{"nofilters", FilterParams{}},
	{"taproot-noordinals", FilterParams{P: 20, Scripts: FilterScriptsTaprootNoOrdinals}},
	{"all", FilterParams{P: 19, Scripts: FilterScriptsAll, ZeroedKey: true}},
}

func newTestIndex(t testing.TB, d *DB, keep int, f FilterParams) *UtxoIndex {
	t.Helper()
	x, err := NewUtxoIndex(d, testClassifier{}, keep, f)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// countRows counts the rows of a column family.
func countRows(t testing.TB, d *DB, cf CF) int {
	t.Helper()
	n, err := d.countKeys(cf, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func openTestDB(t testing.TB) *DB {
	t.Helper()
	d, err := Open(Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// synthChain builds a random but valid-looking chain of blocks: coinbases
// paying a few scripts, txs spending earlier outputs (including outputs of
// the same block), address reuse, data carriers.
type synthChain struct {
	rng    *rand.Rand
	blocks []*bchain.Block
	utxos  []synthUtxo
}

type synthUtxo struct {
	txid  bchain.Hash
	vout  uint32
	value uint64
}

func newSynthChain(seed int64) *synthChain { return &synthChain{rng: rand.New(rand.NewSource(seed))} }

func synthHash(parts ...any) bchain.Hash {
	return sha256.Sum256([]byte(fmt.Sprint(parts...)))
}

func (c *synthChain) script() []byte {
	switch n := c.rng.Intn(12); {
	case n == 0:
		return []byte{0x6a, 0x04, 'd', 'a', 't', 'a'}
	case n == 1:
		return nil
	case n <= 3:
		// P2TR, a few distinct keys so that taproot scripts are reused.
		return append([]byte{0x51, 0x20}, bytes.Repeat([]byte{byte(c.rng.Intn(5))}, 32)...)
	default:
		// A handful of distinct scripts so that addresses are reused.
		return []byte{0x00, 0x14, byte(n), byte(c.rng.Intn(3))}
	}
}

// next appends a block; salt makes competing branches differ.
func (c *synthChain) next(salt string) *bchain.Block {
	h := uint32(len(c.blocks))
	blk := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: h, Time: int64(1_600_000_000 + h*600), Size: 1000 + int(h)}}
	blk.Hash = synthHash("block", h, salt)
	hdr := synthHash("header", h, salt)
	blk.Header = bytes.Repeat(hdr[:], 3)[:80] // stored in the height row
	if h > 0 {
		blk.Prev = c.blocks[h-1].Hash
	}
	cb := bchain.Tx{Txid: synthHash("cb", h, salt), Vin: []bchain.Vin{{Coinbase: true}}}
	for i := 0; i < 1+c.rng.Intn(3); i++ {
		cb.Vout = append(cb.Vout, bchain.Vout{Value: uint64(1000 + c.rng.Intn(5000)), Script: c.script()})
	}
	blk.Txs = append(blk.Txs, cb)
	c.addOutputs(&cb)
	for t := 0; t < c.rng.Intn(6) && len(c.utxos) > 0; t++ {
		tx := bchain.Tx{Txid: synthHash("tx", h, t, salt)}
		var total uint64
		for i := 0; i < 1+c.rng.Intn(3) && len(c.utxos) > 0; i++ {
			k := c.rng.Intn(len(c.utxos))
			u := c.utxos[k]
			c.utxos = append(c.utxos[:k], c.utxos[k+1:]...)
			tx.Vin = append(tx.Vin, bchain.Vin{PrevTxid: u.txid, PrevVout: u.vout})
			total += u.value
		}
		if c.rng.Intn(8) == 0 {
			// An ordinal inscription reveal: the taproot-noordinals filter
			// leaves this tx and the txs it spends out.
			tx.Vin[0].Witness = [][]byte{{1}, append([]byte{0x20, 0xac}, inscriptionEnvelope...), {0xc0}}
		}
		for i := 0; i < 1+c.rng.Intn(3); i++ {
			v := total / 3
			tx.Vout = append(tx.Vout, bchain.Vout{Value: v, Script: c.script()})
		}
		blk.Txs = append(blk.Txs, tx)
		c.addOutputs(&tx) // later txs of this block may spend these
	}
	c.blocks = append(c.blocks, blk)
	return blk
}

func (c *synthChain) addOutputs(tx *bchain.Tx) {
	for n, o := range tx.Vout {
		if len(o.Script) > 0 && o.Script[0] == 0x6a {
			continue // unspendable
		}
		c.utxos = append(c.utxos, synthUtxo{txid: tx.Txid, vout: uint32(n), value: o.Value})
	}
}

// fork returns a chain equal to c up to height (inclusive).
func (c *synthChain) fork(height uint32, seed int64) *synthChain {
	f := newSynthChain(seed)
	// Rebuild the UTXO set by replaying the kept blocks.
	spent := map[[36]byte]bool{}
	for _, b := range c.blocks[:height+1] {
		f.blocks = append(f.blocks, b)
		for i := range b.Txs {
			for _, in := range b.Txs[i].Vin {
				if !in.Coinbase {
					var k [36]byte
					copy(k[:], in.PrevTxid[:])
					binary.BigEndian.PutUint32(k[32:], in.PrevVout)
					spent[k] = true
				}
			}
		}
	}
	for _, b := range f.blocks {
		for i := range b.Txs {
			tx := &b.Txs[i]
			for n, o := range tx.Vout {
				var k [36]byte
				copy(k[:], tx.Txid[:])
				binary.BigEndian.PutUint32(k[32:], uint32(n))
				if !spent[k] && !(len(o.Script) > 0 && o.Script[0] == 0x6a) {
					f.utxos = append(f.utxos, synthUtxo{txid: tx.Txid, vout: uint32(n), value: o.Value})
				}
			}
		}
	}
	return f
}

// refill serves blocks by hash from every branch built from c, like a node
// that keeps stale blocks.
func (c *synthChain) refill(height uint32, hash bchain.Hash) (*bchain.Block, error) {
	if int(height) < len(c.blocks) && c.blocks[height].Hash == hash {
		return c.blocks[height], nil
	}
	return nil, bchain.ErrBlockNotFound
}

func connectAll(t testing.TB, x *UtxoIndex, blocks []*bchain.Block) {
	t.Helper()
	for _, b := range blocks {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatalf("connect %d: %v", b.Height, err)
		}
	}
}

func assertIdentical(t *testing.T, a, b *DB) {
	t.Helper()
	diffs, err := Diff(a, b, ColumnFamilies(bchain.ChainBitcoinType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// Connect then disconnect returns every column to its prior bytes, including
// the bottom of the rollback window, which is refilled from the chain; with
// the refill, disconnecting deeper than the window stays exact.
func TestDisconnectMirrorsConnect(t *testing.T) {
	for _, fv := range filterVariants {
		for _, keep := range []int{1, 3, 300} {
			t.Run(fmt.Sprintf("%s/keep=%d", fv.name, keep), func(t *testing.T) {
				testDisconnectMirrorsConnect(t, keep, fv.p)
			})
		}
	}
}

func testDisconnectMirrorsConnect(t *testing.T, keep int, f FilterParams) {
	chain := newSynthChain(1)
	for i := 0; i < 40; i++ {
		chain.next("")
	}
	for _, depth := range []int{1, 12, 40} {
		a := newTestIndex(t, openTestDB(t), keep, f)
		connectAll(t, a, chain.blocks)
		if n := countRows(t, a.db, CFBlockFilter); f.Enabled() != (n > 0) {
			t.Fatalf("%d filter rows with filters enabled=%v", n, f.Enabled())
		}
		for i := 0; i < depth; i++ {
			if _, _, err := a.DisconnectTip(chain.refill); err != nil {
				t.Fatalf("depth %d: disconnect %d: %v", depth, i, err)
			}
		}
		b := newTestIndex(t, openTestDB(t), keep, f)
		connectAll(t, b, chain.blocks[:40-depth])
		assertIdentical(t, a.db, b.db)
	}
	// Without the block that re-enters the window, disconnect refuses
	// and changes nothing.
	a := newTestIndex(t, openTestDB(t), keep, f)
	connectAll(t, a, chain.blocks)
	noNode := func(uint32, bchain.Hash) (*bchain.Block, error) { return nil, bchain.ErrNodeUnavailable }
	if _, _, err := a.DisconnectTip(noNode); keep < 40 && !errors.Is(err, bchain.ErrNodeUnavailable) {
		t.Fatalf("disconnect without refill source: %v", err)
	}
	if tip, _, _ := a.Tip(); keep < 40 && tip.Height != 39 {
		t.Fatalf("failed disconnect moved the tip to %d", tip.Height)
	}
}

// A reorg onto a competing branch ends byte-identical to a fresh sync of it.
func TestReorgEndsIdenticalToFreshSync(t *testing.T) {
	chain := newSynthChain(7)
	for i := 0; i < 30; i++ {
		chain.next("")
	}
	f := filterVariants[1].p
	x := newTestIndex(t, openTestDB(t), 20, f)
	connectAll(t, x, chain.blocks)

	branch := chain.fork(19, 99)
	for i := 0; i < 14; i++ {
		branch.next("b")
	}
	for {
		tip, _, _ := x.Tip()
		if tip.Height == 19 {
			break
		}
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	connectAll(t, x, branch.blocks[20:])

	fresh := newTestIndex(t, openTestDB(t), 20, f)
	connectAll(t, fresh, branch.blocks)
	assertIdentical(t, x.db, fresh.db)
	// The removal log, left out of the comparison, holds the 10 removed
	// blocks from the top down; the fresh sync's has none.
	rm, err := ReadRemovals(x.db)
	if err != nil {
		t.Fatal(err)
	}
	var want []Removal
	for h := 29; h >= 20; h-- {
		want = append(want, Removal{Height: uint32(h), Hash: chain.blocks[h].Hash})
	}
	if !slices.Equal(rm, want) {
		t.Errorf("removal log %v, want %v", rm, want)
	}
	if rm, err := ReadRemovals(fresh.db); err != nil || len(rm) != 0 {
		t.Errorf("a fresh sync's removal log: %v %v", rm, err)
	}
}

func TestConnectRejectsNonExtendingBlock(t *testing.T) {
	chain := newSynthChain(3)
	for i := 0; i < 3; i++ {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 10, FilterParams{})
	if err := x.ConnectBlock(chain.blocks[1]); !errors.Is(err, ErrNotNextBlock) {
		t.Fatalf("block 1 on empty index: %v", err)
	}
	connectAll(t, x, chain.blocks[:2])
	other := *chain.blocks[2]
	other.Prev = synthHash("elsewhere")
	if err := x.ConnectBlock(&other); !errors.Is(err, ErrNotNextBlock) {
		t.Fatalf("wrong parent: %v", err)
	}
}

// Balances, tx lists and UTXOs agree with a direct computation.
func TestBalancesMatchReplay(t *testing.T) {
	chain := newSynthChain(11)
	for i := 0; i < 60; i++ {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 300, FilterParams{})
	connectAll(t, x, chain.blocks)

	type acc struct {
		received, sent uint64
		txs            map[bchain.Hash]bool
		utxos          int
	}
	want := map[string]*acc{}
	outs := map[[36]byte]bchain.Vout{}
	get := func(s []byte) *acc {
		a := want[string(s)]
		if a == nil {
			a = &acc{txs: map[bchain.Hash]bool{}}
			want[string(s)] = a
		}
		return a
	}
	for _, b := range chain.blocks {
		for i := range b.Txs {
			tx := &b.Txs[i]
			for _, in := range tx.Vin {
				if in.Coinbase {
					continue
				}
				var k [36]byte
				copy(k[:], in.PrevTxid[:])
				binary.BigEndian.PutUint32(k[32:], in.PrevVout)
				o := outs[k]
				delete(outs, k)
				if d := (testClassifier{}).OutputAddrDesc(o.Script); d != nil {
					a := get(d)
					a.sent += o.Value
					a.txs[tx.Txid] = true
					a.utxos--
				}
			}
			for n, o := range tx.Vout {
				var k [36]byte
				copy(k[:], tx.Txid[:])
				binary.BigEndian.PutUint32(k[32:], uint32(n))
				outs[k] = o
				if d := (testClassifier{}).OutputAddrDesc(o.Script); d != nil {
					a := get(d)
					a.received += o.Value
					a.txs[tx.Txid] = true
					a.utxos++
				}
			}
		}
	}
	for desc, w := range want {
		got, err := ReadAddrBalance(x.db, bchain.AddrDesc(desc))
		if err != nil || got == nil {
			t.Fatalf("%x: %v %v", desc, got, err)
		}
		if got.Received() != w.received || got.Sent != w.sent || int(got.Txs) != len(w.txs) || int(got.Utxos) != w.utxos {
			t.Errorf("%x: got %+v, want received %d sent %d txs %d utxos %d", desc, got, w.received, w.sent, len(w.txs), w.utxos)
		}
		var sum uint64
		n := 0
		if err := IterateUtxos(x.db, bchain.AddrDesc(desc), func(u *Utxo) (bool, error) { sum += u.Value; n++; return true, nil }); err != nil {
			t.Fatal(err)
		}
		if sum != got.Balance || n != int(got.Utxos) {
			t.Errorf("%x: utxos sum %d count %d, balance %d count %d", desc, sum, n, got.Balance, got.Utxos)
		}
		seen := 0
		last := uint32(1 << 31)
		err = IterateAddrTxs(x.db, bchain.AddrDesc(desc), ^uint32(0), 0, func(row AddrTxsAt) (bool, error) {
			if row.Height >= last {
				t.Errorf("%x: rows not newest first: %d after %d", desc, row.Height, last)
			}
			last = row.Height
			seen += len(row.Txs)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen != len(w.txs) {
			t.Errorf("%x: %d tx entries, want %d", desc, seen, len(w.txs))
		}
	}
	checkReadAddrBalances(t, x.db, want)
}

// checkReadAddrBalances reads the balances of want's descriptors and of one
// never used in one MultiGet (through a snapshot) and checks them against
// one point read each.
func checkReadAddrBalances[T any](t *testing.T, d *DB, want map[string]T) {
	t.Helper()
	descs := []bchain.AddrDesc{bchain.AddrDesc("never used")}
	for desc := range want {
		descs = append(descs, bchain.AddrDesc(desc))
	}
	snap, err := d.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	got, err := ReadAddrBalances(snap, descs)
	if err != nil || len(got) != len(descs) {
		t.Fatalf("ReadAddrBalances: %d records, %v", len(got), err)
	}
	for i, desc := range descs {
		one, err := ReadAddrBalance(d, desc)
		if err != nil {
			t.Fatal(err)
		}
		if (one == nil) != (got[i] == nil) || one != nil && *one != *got[i] {
			t.Errorf("%x: MultiGet %+v, point read %+v", []byte(desc), got[i], one)
		}
	}
	if got[0] != nil {
		t.Errorf("a descriptor never used has a balance: %+v", got[0])
	}
}
