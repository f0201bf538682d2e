package pushdata

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/optindex"
)

// testChain is the demo chain (every script kind) and a fork of it that
// replaces its last blocks, parsed by the real parser; built once.
type testChain struct {
	main, fork []*bchain.Block
	mainRaw    []*wire.MsgBlock
	forkAt     int // the last block both share
}

var (
	chainOnce sync.Once
	chain     *testChain
	chainErr  error
)

func demoChains(t *testing.T) *testChain {
	t.Helper()
	chainOnce.Do(func() { chain, chainErr = buildChains() })
	if chainErr != nil {
		t.Fatal(chainErr)
	}
	return chain
}

func buildChains() (*testChain, error) {
	params := &chaincfg.RegressionNetParams
	g := chaingen.New(params, "pushdata")
	if err := g.Demo(chaingen.DemoSpec{Blocks: 118, TxsPerBlock: 2}); err != nil {
		return nil, err
	}
	c := &testChain{forkAt: int(g.Height()) - 4}
	f, err := g.Fork(int32(c.forkAt), "pushdata-fork")
	if err != nil {
		return nil, err
	}
	if err := f.Extend(6, 3); err != nil {
		return nil, err
	}
	c.mainRaw = g.Blocks()
	if c.main, err = optindex.Parse(c.mainRaw); err != nil {
		return nil, err
	}
	if c.fork, err = optindex.Parse(f.Blocks()); err != nil {
		return nil, err
	}
	return c, nil
}

// refill serves blocks of both branches by hash, as a node keeping stale
// blocks does.
func (c *testChain) refill(height uint32, hash bchain.Hash) (*bchain.Block, error) {
	for _, branch := range [][]*bchain.Block{c.main, c.fork} {
		if int(height) < len(branch) && branch[height].Hash == hash {
			return branch[height], nil
		}
	}
	return nil, bchain.ErrBlockNotFound
}

// newIndex opens an empty in-memory index with the pushdata index on.
func newIndex(t *testing.T, keep int) *db.UtxoIndex { return optindex.New(t, Index{}, keep) }

func connect(t *testing.T, x *db.UtxoIndex, blocks []*bchain.Block) { optindex.Connect(t, x, blocks) }

func requireIdentical(t *testing.T, a, b *db.UtxoIndex) { optindex.RequireIdentical(t, a, b) }

// oracleRows computes every pushdata row of the blocks independently of
// the index: txscript.PushedData over the wire blocks, the spent output's
// script looked up among the chain's earlier outputs.
func oracleRows(t *testing.T, blocks []*wire.MsgBlock) []Ref {
	t.Helper()
	outs := map[wire.OutPoint][]byte{}
	var refs []Ref
	add := func(h, i, n int, input bool, data ...[]byte) {
		for _, d := range data {
			if l := len(d); l == 20 || l == 32 || l == 33 || l == 65 {
				refs = append(refs, Ref{Hash: sha256.Sum256(d), Height: uint32(h), Index: uint32(i), N: uint32(n), Input: input})
			}
		}
	}
	pushed := func(script []byte) [][]byte {
		p, err := txscript.PushedData(script)
		if err != nil {
			t.Fatalf("script %x: %v", script, err)
		}
		return p
	}
	for h, mb := range blocks {
		for i, tx := range mb.Transactions {
			for n, o := range tx.TxOut {
				add(h, i, n, false, pushed(o.PkScript)...)
				outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o.PkScript
			}
			if i == 0 {
				continue
			}
			for j, in := range tx.TxIn {
				sig := pushed(in.SignatureScript)
				add(h, i, j, true, sig...)
				add(h, i, j, true, in.Witness...)
				prev := outs[in.PreviousOutPoint]
				wsh := txscript.IsPayToWitnessScriptHash(prev)
				if txscript.IsPayToScriptHash(prev) {
					add(h, i, j, true, pushed(sig[len(sig)-1])...)
					wsh = txscript.IsPayToWitnessScriptHash(sig[len(sig)-1])
				}
				if wsh {
					add(h, i, j, true, pushed(in.Witness[len(in.Witness)-1])...)
				}
			}
		}
	}
	slices.SortFunc(refs, func(a, b Ref) int { return bytes.Compare(rowKey(a), rowKey(b)) })
	return slices.CompactFunc(refs, func(a, b Ref) bool { return a == b })
}

func storedRows(t *testing.T, x *db.UtxoIndex) []Ref {
	t.Helper()
	var refs []Ref
	if err := db.Iterate(x.DB(), db.CFPushdata, nil, nil, func(k, v []byte) (bool, error) {
		r, err := unpackRow(k, v)
		refs = append(refs, r)
		return true, err
	}); err != nil {
		t.Fatal(err)
	}
	return refs
}

// The index holds exactly the oracle's rows, which cover every script
// kind of the demo; Find lists a hash's rows.
func TestRowsMatchOracle(t *testing.T) {
	c := demoChains(t)
	x := newIndex(t, 300)
	connect(t, x, c.main)
	want, got := oracleRows(t, c.mainRaw), storedRows(t, x)
	if !slices.Equal(got, want) {
		t.Fatalf("%d rows, oracle %d", len(got), len(want))
	}
	inputs := 0
	for _, r := range want {
		if r.Input {
			inputs++
		}
	}
	if inputs < 100 || len(want)-inputs < 100 {
		t.Fatalf("oracle has %d input and %d output rows: too few to test", inputs, len(want)-inputs)
	}
	refs, more, err := Find(x.DB(), want[0].Hash, 1000)
	if err != nil || more || len(refs) == 0 || refs[0] != want[0] {
		t.Fatalf("find: %v %v %v", refs, more, err)
	}
	if refs, more, err := Find(x.DB(), want[0].Hash, 0); err != nil || !more || len(refs) != 0 {
		t.Fatalf("find with limit 0: %v %v %v", refs, more, err)
	}
}

// Disconnecting the blocks above the fork returns every column family to
// its bytes before them, and connecting the fork then ends byte-identical
// to a fresh sync of the fork (the disconnects fetch the stale blocks by
// hash from the "node").
func TestReorgExact(t *testing.T) {
	c := demoChains(t)
	for _, keep := range []int{3, 300} { // window refill, and not
		x := newIndex(t, keep)
		connect(t, x, c.main[:c.forkAt+1])
		before := newIndex(t, keep)
		connect(t, before, c.main[:c.forkAt+1])
		connect(t, x, c.main[c.forkAt+1:])
		for {
			tip, _, err := x.Tip()
			if err != nil {
				t.Fatal(err)
			}
			if int(tip.Height) == c.forkAt {
				break
			}
			if _, _, err := x.DisconnectTip(c.refill); err != nil {
				t.Fatal(err)
			}
		}
		requireIdentical(t, x, before)
		connect(t, x, c.fork[c.forkAt+1:])
		fresh := newIndex(t, keep)
		connect(t, fresh, c.fork)
		requireIdentical(t, x, fresh)
	}
}

// A bulk load writes the rows per-block connects write.
func TestBulkEqualsPerBlock(t *testing.T) {
	c := demoChains(t)
	optindex.RequireBulkEqualsPerBlock(t, Index{}, c.main, 100)
}

// A disconnect without a source of blocks fails before writing.
func TestDisconnectNeedsTheBlock(t *testing.T) {
	c := demoChains(t)
	x := newIndex(t, 300)
	connect(t, x, c.main[:5])
	if _, _, err := x.DisconnectTip(nil); err == nil {
		t.Fatal("disconnected without the node's block")
	}
	if tip, _, _ := x.Tip(); tip.Height != 4 {
		t.Fatalf("tip %d after a failed disconnect", tip.Height)
	}
}

// BenchmarkTxPushes measures the pushes of one tx of the demo chain (the
// cost per pending tx of a search's mempool part, and per tx of a sync).
func BenchmarkTxPushes(b *testing.B) {
	c, err := buildChains()
	if err != nil {
		b.Fatal(err)
	}
	var txs []*bchain.Tx
	for _, blk := range c.main {
		for i := range blk.Txs {
			txs = append(txs, &blk.Txs[i])
		}
	}
	none := func(int) []byte { return nil }
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		TxPushes(txs[i%len(txs)], none)
	}
}
