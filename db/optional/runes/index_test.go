package runes

import (
	"fmt"
	"log/slog"
	"maps"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
	"github.com/openexplorer/blockbook/tools/optindex"
)

func newIndex(t *testing.T) *db.UtxoIndex {
	t.Helper()
	x, _ := newIndexAndRunes(t)
	return x
}

func newIndexAndRunes(t *testing.T) (*db.UtxoIndex, *Index) {
	t.Helper()
	return newIndexOver(t, nil)
}

// newIndexOver opens an in-memory regtest index with runes on, over
// wrap(the engine) when wrap is set.
func newIndexOver(t *testing.T, wrap func(db.Engine) db.Engine) (*db.UtxoIndex, *Index) {
	t.Helper()
	o := db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
		Log: slog.New(slog.DiscardHandler)}
	var e db.Engine = memdb.NewEngine(o.Path, db.ColumnFamilies(o.ChainType))
	if wrap != nil {
		e = wrap(e)
	}
	d, err := db.OpenEngine(e, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	x, err := db.NewUtxoIndex(d, btc.NewParser(&chaincfg.RegressionNetParams), 10, db.FilterParams{})
	if err != nil {
		t.Fatal(err)
	}
	idx := New(d, runestone.Regtest)
	if on, err := x.EnableOptional(idx, true); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	return x, idx
}

const testName = "GENERATORRUNETEST"

// scenario builds the main chain: an etching with a commitment, mints,
// edict transfers (one spending an output of its own block), a cenotaph
// burn and a burn by pointer to an OP_RETURN; then a fork replacing the
// last two blocks. Each branch's ledger is what the generator meant.
func scenario() (main, fork *gen, id RuneID) {
	name, _ := runestone.ParseRune(testName)
	g := newGen()
	fund := g.tx(nil, nil, addr(1), addr(2), addr(3), addr(4), addr(5), addr(6))
	commit := g.tx(nil, nil, taproot(7))
	g.mine() // 1
	for range 4 {
		g.mine() // 2..5
	}
	one, ptr0 := runestone.U64(1000), uint32(0)
	et := &runestone.Runestone{Pointer: &ptr0, Etching: &runestone.Etching{Rune: &name, Premine: &one, Divisibility: new(uint8),
		Terms: &runestone.Terms{Amount: u(10), Cap: u(3)}}}
	etched := g.tx(commit, [][][]byte{reveal(name)}, addr(1), et.Encipher())
	g.mine() // 6: the commit has 6 confirmations
	id = RuneID{Block: 6, Tx: 1}
	g.credit(addr(1), id, 1000)

	mint := (&runestone.Runestone{Mint: &id}).Encipher()
	mb := g.tx(fund[1:2], nil, mint, addr(2))
	mc := g.tx(fund[2:3], nil, addr(3), mint)
	g.mine() // 7
	g.credit(addr(2), id, 10)
	g.credit(addr(3), id, 10)
	forkAt := 7

	f := g.fork(forkAt)
	maps.Copy(f.ledger, cloneLedger(g.ledger))

	tr := g.tx(etched[:1], nil, (&runestone.Runestone{Edicts: []runestone.Edict{{ID: id, Amount: runestone.U64(300), Output: 2}}}).Encipher(), addr(1), addr(3))
	g.tx([]outpoint{tr[2], mb[1]}, nil, addr(4)) // spends an output of its own block
	g.mine()                                     // 8
	g.credit(addr(1), id, -300)
	g.credit(addr(3), id, 300)
	g.credit(addr(3), id, -300)
	g.credit(addr(2), id, -10)
	g.credit(addr(4), id, 310)

	d4 := outpoint{g.blocks[8].Txs[2].Txid, 0, addr(4)}
	g.tx([]outpoint{d4}, nil, addr(4), runestone.Script([]byte{0x18, 0x01})) // cenotaph: even tag 24
	p1 := uint32(1)
	g.tx(mc[:1], nil, addr(3), (&runestone.Runestone{Pointer: &p1}).Encipher()) // pointer at the OP_RETURN
	g.mine()                                                                    // 9
	g.credit(addr(4), id, -310)
	g.credit(addr(3), id, -10)
	g.burned[id] = 320

	// the fork: a split of the premine over every output, then a third mint
	f.tx(etched[:1], nil, addr(5), (&runestone.Runestone{Edicts: []runestone.Edict{{ID: id, Output: 3}}}).Encipher(), addr(6))
	f.mine() // 8'
	f.credit(addr(1), id, -1000)
	f.credit(addr(5), id, 500)
	f.credit(addr(6), id, 500)
	f.tx(fund[5:6], nil, mint, addr(6))
	f.tx(fund[4:5], nil, mint, addr(6)) // past the cap of 3: nothing
	f.mine()                            // 9'
	f.mine()                            // 10'
	f.credit(addr(6), id, 10)
	return g, f, id
}

func cloneLedger(l map[string]map[RuneID]uint64) map[string]map[RuneID]uint64 {
	out := map[string]map[RuneID]uint64{}
	for k, v := range l {
		out[k] = maps.Clone(v)
	}
	return out
}

// checkLedger compares every address's stored balances with the ledger.
func checkLedger(t *testing.T, x *db.UtxoIndex, g *gen) {
	t.Helper()
	held := 0
	for i := byte(1); i <= 7; i++ {
		got, err := ReadAddress(x.DB(), addr(i))
		if err != nil {
			t.Fatal(err)
		}
		want := map[RuneID]uint64{}
		maps.Copy(want, g.ledger[string(addr(i))])
		have := map[RuneID]uint64{}
		for _, b := range got {
			have[b.ID] = b.Amount.Lo
		}
		if fmt.Sprint(have) != fmt.Sprint(want) {
			t.Errorf("address %d: %v, ledger %v", i, have, want)
		}
		held += len(want)
	}
	if held == 0 {
		t.Fatalf("the ledger holds runes at %d addresses: the scenario proves little", held)
	}
	checkHolders(t, x, g)
}

// checkHolders compares each rune's stored holder count with the
// addresses of the ledger holding it.
func checkHolders(t *testing.T, x *db.UtxoIndex, g *gen) {
	t.Helper()
	want := map[RuneID]uint64{}
	for _, m := range g.ledger {
		for id := range m {
			want[id]++
		}
	}
	ids, err := ReadEntryIDs(x.DB())
	if err != nil || len(ids) == 0 {
		t.Fatalf("entries %v: %v", ids, err)
	}
	for _, id := range ids {
		n, err := ReadHolders(x.DB(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n != want[id] {
			t.Errorf("rune %s: %d holders, the ledger %d", id, n, want[id])
		}
	}
}

func connectAll(t *testing.T, x *db.UtxoIndex, blocks []*bchain.Block) {
	t.Helper()
	for _, b := range blocks {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatalf("connect %d: %v", b.Height, err)
		}
	}
}

func TestIndexLedgerAndReorg(t *testing.T) {
	g, f, id := scenario()
	x := newIndex(t)
	connectAll(t, x, g.blocks)
	checkLedger(t, x, g)
	e, err := ReadEntry(x.DB(), id)
	if err != nil || e == nil {
		t.Fatalf("entry: %v %v", e, err)
	}
	if e.Mints != *u(2) || e.Burned != *u(320) || e.Supply() != *u(1020) {
		t.Errorf("entry mints %s burned %s supply %s", e.Mints, e.Burned, e.Supply())
	}
	name, _ := runestone.ParseRune(testName)
	if byName, err := ReadEntryByName(x.DB(), name); err != nil || byName == nil || byName.ID != id {
		t.Errorf("by name: %+v %v", byName, err)
	}

	// reorg to the fork: disconnect 9 and 8, connect 8', 9', 10'
	all := append(append([]*bchain.Block(nil), g.blocks...), f.blocks[8:]...)
	refill := func(h uint32, hash bchain.Hash) (*bchain.Block, error) {
		for _, b := range all {
			if b.Height == h && b.Hash == hash {
				return b, nil
			}
		}
		return nil, bchain.ErrBlockNotFound
	}
	for range 2 {
		if _, _, err := x.DisconnectTip(refill); err != nil {
			t.Fatal(err)
		}
	}
	connectAll(t, x, f.blocks[8:])
	checkLedger(t, x, f)
	if e, _ := ReadEntry(x.DB(), id); e == nil || e.Mints != *u(3) || !e.Burned.IsZero() {
		t.Errorf("fork entry %+v", e)
	}
	fresh := newIndex(t)
	connectAll(t, fresh, f.blocks)
	optindex.RequireIdentical(t, x, fresh)
}

// A bulk load in rounds small enough to split the scenario reads the rows
// of earlier, unwritten blocks and ends identical to per-block connects.
func TestIndexBulkEqualsPerBlock(t *testing.T) {
	g, _, _ := scenario()
	want := newIndex(t)
	connectAll(t, want, g.blocks)
	for _, rb := range []int64{1, 1 << 30} {
		x := newIndex(t)
		l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: rb, CacheBytes: 1 << 20, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range g.blocks {
			if err := l.ConnectBlock(b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Finish(); err != nil {
			t.Fatal(err)
		}
		checkLedger(t, x, g)
		optindex.RequireIdentical(t, x, want)
	}
}
