package e2e

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

// runesLedger is what the test meant each address to hold, by rune id.
type runesLedger map[string]map[string]uint64

func (l runesLedger) move(addr, id string, v int64) {
	if l[addr] == nil {
		l[addr] = map[string]uint64{}
	}
	l[addr][id] = uint64(int64(l[addr][id]) + v)
	if l[addr][id] == 0 {
		delete(l[addr], id)
	}
}

func (l runesLedger) clone() runesLedger {
	out := runesLedger{}
	for k, v := range l {
		out[k] = maps.Clone(v)
	}
	return out
}

// runesChain adds runestone txs to a generator's chain.
type runesChain struct {
	t     *testing.T
	g     *chaingen.Generator
	addrs []string
	pk    [][]byte
}

func (c *runesChain) spend(ins []chaingen.Coin, outs ...chaingen.Output) *wire.MsgTx {
	c.t.Helper()
	tx, err := c.g.Spend(ins, outs, 2)
	if err != nil {
		c.t.Fatal(err)
	}
	return tx
}

func (c *runesChain) mine(txs ...*wire.MsgTx) {
	c.t.Helper()
	if _, err := c.g.AddBlock(txs...); err != nil {
		c.t.Fatal(err)
	}
}

func (c *runesChain) pay(i int) chaingen.Output {
	return chaingen.Output{Script: c.pk[i], Value: 10_000}
}

// small pays from a 10,000-sat rune output, leaving room for the fee.
func (c *runesChain) small(i int) chaingen.Output {
	return chaingen.Output{Script: c.pk[i], Value: 3_000}
}

func stone(r *runestone.Runestone) chaingen.Output {
	return chaingen.Output{Script: r.Encipher(), Value: 0}
}

// coin is output vout of tx.
func coin(tx *wire.MsgTx, vout uint32) chaingen.Coin {
	o := tx.TxOut[vout]
	return chaingen.Coin{OutPoint: wire.OutPoint{Hash: tx.TxHash(), Index: vout}, Value: o.Value, PkScript: o.PkScript}
}

// The Runes index end to end on btcd regtest: runestone txs in blocks of
// the demo chain's generator etch a rune (unnamed: a named one needs a
// taproot commitment, checked in db/optional/runes), mint it, move it by
// edict, burn it with a cenotaph, and a reorg replaces the last blocks;
// every address's runes=true answer and the rune's entry equal the
// generator's ledger, before and after, and the reorged index equals a
// fresh sync of the final chain.
func TestE2ERunes(t *testing.T) {
	ordAddr := make(chan string, 1)
	st := startDemoStackWith(t, map[string]any{"runes_index": true}, func(o *app.Options) {
		o.Ord.Addr = "127.0.0.1:0"
		captureListen(o, "ord", ordAddr)
	})
	ordBase := "http://" + <-ordAddr
	node, g, inst := st.node, st.g, st.inst
	c := &runesChain{t: t, g: g}
	hd, err := chaingen.NewHDAccount(g.Params(), chaingen.HDSeed("e2e-runes"), chaingen.BIP84, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		a, err := g.Address(chaingen.P2WPKH, uint64(300+i))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := g.PkScript(chaingen.P2WPKH, uint64(300+i))
		c.addrs, c.pk = append(c.addrs, a), append(c.pk, s)
	}
	start := g.Height()
	fund, err := g.CreatePayment([]chaingen.Output{{Script: c.pk[0], Value: 50_000}, {Script: c.pk[1], Value: 50_000},
		{Script: c.pk[2], Value: 50_000}, {Script: c.pk[3], Value: 50_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	c.mine(fund)

	premine, div, sym := runestone.U64(1000), uint8(1), 'R'
	amount, capv := runestone.U64(10), runestone.U64(2)
	etch := c.spend([]chaingen.Coin{coin(fund, 0)}, c.pay(0), stone(&runestone.Runestone{Etching: &runestone.Etching{
		Premine: &premine, Divisibility: &div, Symbol: &sym, Terms: &runestone.Terms{Amount: &amount, Cap: &capv}}}))
	c.mine(etch)
	id := runestone.RuneID{Block: uint64(g.Height()), Tx: 1}
	rid := id.String()
	ledger := runesLedger{}
	ledger.move(c.addrs[0], rid, 1000)
	hist := runesHistory{}
	hist.add(etch, c.addrs[0])

	mint := stone(&runestone.Runestone{Mint: &id})
	mb := c.spend([]chaingen.Coin{coin(fund, 1)}, mint, c.pay(1))
	mc := c.spend([]chaingen.Coin{coin(fund, 2)}, c.pay(2), mint)
	c.mine(mb, mc)
	ledger.move(c.addrs[1], rid, 10)
	ledger.move(c.addrs[2], rid, 10)
	hist.add(mb, c.addrs[1])
	hist.add(mc, c.addrs[2])
	forkAt := g.Height()
	forkLedger, forkHist := ledger.clone(), hist.clone()

	// The transfer also pays two addresses of an account (receive and
	// change), for the xpub answers.
	hdAddrs, hdOuts := make([]string, 2), make([]chaingen.Output, 2)
	for i := range hdAddrs {
		hdAddrs[i], _ = hd.Address(uint32(i), 0)
		s, _ := hd.PkScript(uint32(i), 0)
		hdOuts[i] = chaingen.Output{Script: s, Value: 1_000}
	}
	tr := c.spend([]chaingen.Coin{coin(etch, 0)}, stone(&runestone.Runestone{Edicts: []runestone.Edict{
		{ID: id, Amount: runestone.U64(300), Output: 2}, {ID: id, Amount: runestone.U64(50), Output: 3},
		{ID: id, Amount: runestone.U64(25), Output: 4}}}),
		c.small(0), c.small(3), hdOuts[0], hdOuts[1])
	c.mine(tr)
	ledger.move(c.addrs[0], rid, -375)
	ledger.move(c.addrs[3], rid, 300)
	ledger.move(hdAddrs[0], rid, 50)
	ledger.move(hdAddrs[1], rid, 25)
	hist.add(tr, c.addrs[0], c.addrs[3], hdAddrs[0], hdAddrs[1])
	ceno := c.spend([]chaingen.Coin{coin(mc, 0)}, c.small(2), chaingen.Output{Script: runestone.Script([]byte{0x18, 0x01})})
	c.mine(ceno)
	ledger.move(c.addrs[2], rid, -10)
	hist.add(ceno, c.addrs[2])
	all := append(slices.Clone(c.addrs), hdAddrs...)
	ra := runesAnswers{t: t, base: inst.base, addrs: all, xpub: hd.Xpub(), hdAddrs: hdAddrs}

	submit(t, g, node, start+1)
	h, hash := g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	checkRunes(t, inst.base, all, ledger, rid, "2", "10")
	ra.check(ledger, hist)
	ra.checkTxs(rid, etch, tr, ceno)
	ra.checkOrd(ordBase, ledger, rid, etch, tr)
	t.Run("explorer", func(t *testing.T) {
		ra := ra
		ra.t = t
		start := time.Now()
		pages := ra.checkExplorer(ledger, rid, fund, etch, mb, tr, ceno)
		pages = append(pages, ra.checkRuneList(ordBase, ledger)...)
		noInlineStyleOrScript(t, pages)
		t.Logf("pages checked in %s", time.Since(start))
		validateHTML(t, pages)
		t.Logf("html-validate done at %s", time.Since(start))
		// one page of each new kind (the account page shares the address's
		// rune table, the 404 page is the explorer's own)
		checkRunesBrowser(t, inst.base, []string{"/rune/" + rid, "/tx/" + etch.TxHash().String(), "/tx/" + tr.TxHash().String(),
			"/tx/" + ceno.TxHash().String(), "/address/" + c.addrs[0], "/runes"})
		t.Logf("browser done at %s", time.Since(start))
	})

	// Goldens (e2e/testdata/runes), checked against the OpenAPI document
	// by TestOpenAPIGoldens: the rune's entry by id and by name's absence.
	gs := newGoldenSet(t, filepath.Join(goldenDir, "runes"), "TestE2ERunes")
	gs.check("rune-by-id", fetchGolden(t, inst.base+"/api/v2/rune/"+rid, 200))
	gs.check("error-rune-unknown", fetchGolden(t, inst.base+"/api/v2/rune/999999:9", 400))
	gs.check("tx-runes", fetchGolden(t, inst.base+"/api/v2/tx/"+tr.TxHash().String()+"?runes=true", 200))
	gs.check("utxo-runes", fetchGolden(t, inst.base+"/api/v2/utxo/"+c.addrs[3]+"?runes=true", 200))
	gs.check("xpub-runes", fetchGolden(t, inst.base+"/api/v2/xpub/"+hd.Xpub()+"?runes=true&details=basic", 200))
	// with a to-height, the address and the account both answer no
	// pending runes, as their unconfirmedBalance is 0
	to := "&to=" + strconv.Itoa(int(h))
	gs.check("address-runes-to", fetchGolden(t, inst.base+"/api/v2/address/"+c.addrs[3]+"?runes=true&details=basic"+to, 200))
	gs.check("xpub-runes-to", fetchGolden(t, inst.base+"/api/v2/xpub/"+hd.Xpub()+"?runes=true&details=basic"+to, 200))
	gs.check("rune-history", fetchGolden(t, inst.base+"/api/v2/rune-history/"+c.addrs[0], 200))
	gs.check("rune-history-txs", fetchGolden(t, inst.base+"/api/v2/rune-history/"+c.addrs[3]+"?details=txs", 200))
	gs.check("error-rune-history-address", fetchGolden(t, inst.base+"/api/v2/rune-history/nope", 400))
	gs.finish()

	t.Run("bad input and the route's answers", func(t *testing.T) {
		var e struct{ Error string }
		getJSON(t, inst.base+"/api/v2/rune/A%E2%80%A2%E2%80%A2B", 400, &e)
		getJSON(t, inst.base+"/api/v2/rune/999999:9", 400, &e)
		if e.Error == "" {
			t.Error("no error text for an unknown rune")
		}
	})

	// A transfer in the mempool: pending on the runes=true answers and the
	// rune history, then confirmed once a block holds it.
	pendStart := time.Now()
	pend := c.spend([]chaingen.Coin{coin(tr, 2)}, chaingen.Output{Script: c.pk[3], Value: 800},
		stone(&runestone.Runestone{Edicts: []runestone.Edict{{ID: id, Amount: runestone.U64(100), Output: 2}}}),
		chaingen.Output{Script: c.pk[1], Value: 800})
	ra.checkPending(node, pend, rid, c.addrs[3], c.addrs[1], ordBase, ledger)
	t.Run("explorer pending", func(t *testing.T) {
		ra := ra
		ra.t = t
		start := time.Now()
		pages := ra.checkPendingPages(pend.TxHash().String(), ledger, c.addrs[3], c.addrs[1])
		validateHTML(t, pages)
		checkRunesBrowser(t, inst.base, []string{"/address/" + c.addrs[3]})
		t.Logf("pending pages checked in %s", time.Since(start))
	})
	c.mine(pend)
	submit(t, g, node, h+1)
	h, hash = g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	ledger.move(c.addrs[3], rid, -100)
	ledger.move(c.addrs[1], rid, 100)
	hist.add(pend, c.addrs[3], c.addrs[1])
	checkRunes(t, inst.base, all, ledger, rid, "2", "10")
	ra.check(ledger, hist)
	var mined api.Tx
	getJSON(t, inst.base+"/api/v2/tx/"+pend.TxHash().String()+"?runes=true", 200, &mined)
	if mined.BlockHeight != int64(h) || len(mined.Vout) < 3 || len(mined.Vout[2].Runes) != 1 || mined.Vout[2].Runes[0].Amount != "100" {
		t.Errorf("the mined transfer: %+v", mined)
	}
	t.Logf("pending then mined transfer: %v", time.Since(pendStart).Round(time.Millisecond))
	// a chain of 2,100 pending rune txs to one address, half of it then
	// mined; the reorg below takes it all back to the mempool
	manyStart := time.Now()
	many := pendingMany(t, c, node, inst)
	t.Logf("%d pending rune txs: %v", manyPending, time.Since(manyStart).Round(time.Millisecond))

	// a fresh sync of the final chain (kept past the reorg subtest), its tip
	ref, refHash, refH := filepath.Join(t.TempDir(), "reference"), "", int32(0)
	t.Run("after a reorg", func(t *testing.T) {
		f, err := g.Fork(forkAt, "runes-reorg")
		if err != nil {
			t.Fatal(err)
		}
		fc := &runesChain{t: t, g: f, addrs: c.addrs, pk: c.pk}
		back := fc.spend([]chaingen.Coin{coin(etch, 0)}, fc.small(1))
		fc.mine(back)
		// past the main chain's transfer, cenotaph, pending transfer and
		// the many pending txs' blocks
		for range 3 + many.blocks {
			fc.mine()
		}
		forkLedger.move(c.addrs[0], rid, -1000)
		forkLedger.move(c.addrs[1], rid, 1000)
		forkHist.add(back, c.addrs[0], c.addrs[1])
		submit(t, f, node, forkAt+1)
		h, hash := f.Tip()
		waitTip(t, inst.base, h, hash.String(), inst.logs)
		checkRunes(t, inst.base, all, forkLedger, rid, "2", "0")
		ra.check(forkLedger, forkHist)
		ra.checkOrdAddresses(ordBase, forkLedger)
		rr := ra
		rr.t = t
		rr.checkRuneList(ordBase, forkLedger) // the holders after the reorg
		many.afterReorg(t)
		// and the index equals a fresh sync of the final chain, byte for byte
		inst.stop(t)
		fresh := referenceIndex(t, st.cfg, h, hash.String())
		compareIndexes(t, st.dataDir, fresh)
		copyDir(t, fresh, ref)
		refH, refHash = h, hash.String()
	})

	// kill -9 while syncing the final chain with the Runes index: the
	// result equals the fresh sync too
	t.Run("kill -9 mid-sync", func(t *testing.T) {
		if refHash == "" {
			t.Skip("no reference index: the reorg subtest failed")
		}
		runesKillRuns(t, st.cfg, ref, refH, refHash, uint32(start+1))
	})

}

// checkRunes compares each address's runes with the ledger and the rune's
// entry with its mints and burns.
func checkRunes(t *testing.T, base string, addrs []string, ledger runesLedger, rid, mints, burned string) {
	t.Helper()
	held := 0
	for _, a := range addrs {
		var got api.Address
		getJSON(t, base+"/api/v2/address/"+a+"?runes=true&details=basic", 200, &got)
		have := map[string]uint64{}
		if got.Runes == nil {
			t.Fatalf("%s: no runes field with runes=true", a)
		}
		for _, b := range *got.Runes {
			v, err := strconv.ParseUint(b.Amount, 10, 64)
			if err != nil {
				t.Fatalf("%s: amount %q: %v", a, b.Amount, err)
			}
			have[b.ID] = v
		}
		want := ledger[a]
		if want == nil {
			want = map[string]uint64{}
		}
		if !maps.Equal(have, want) {
			t.Errorf("%s: runes %v, ledger %v", a, have, want)
		}
		held += len(want)
		var plain api.Address
		getJSON(t, base+"/api/v2/address/"+a+"?details=basic", 200, &plain)
		if plain.Runes != nil {
			t.Errorf("%s: runes answered without runes=true", a)
		}
	}
	if held == 0 {
		t.Fatal("the ledger holds no runes: the test proves little")
	}
	// the answers as the OpenAPI document describes them
	l := &liveCheck{t: t, c: openAPIChecker(t), base: base, asked: map[openapicheck.Op]int{}}
	l.get("/api/v2/rune/"+rid, 200)
	l.get("/api/v2/address/"+addrs[0]+"?runes=true", 200)
	var r api.RuneInfo
	getJSON(t, base+"/api/v2/rune/"+rid, 200, &r)
	if r.Mints != mints || r.Burned != burned || r.Premine != "1000" || r.Divisibility != 1 || r.Symbol != "R" {
		t.Errorf("rune %s: %+v, want mints %s burned %s", rid, r, mints, burned)
	}
	var byName api.RuneInfo
	getJSON(t, base+"/api/v2/rune/"+r.Name, 200, &byName)
	if byName.ID != rid {
		t.Errorf("rune by name %s: %+v", r.Name, byName)
	}
}
