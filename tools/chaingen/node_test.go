package chaingen

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// TestDemoChainMatchesBtcd submits the default demo to btcd and checks the
// ledger against btcd's own address index and UTXO set.
func TestDemoChainMatchesBtcd(t *testing.T) {
	n := startNode(t, regtest.Options{TxIndex: true, ExtraArgs: []string{"--addrindex"}})
	g := demoChain(t)
	ctx := testCtx(t)
	if err := g.Submit(ctx, n, 1); err != nil {
		t.Fatal(err)
	}
	assertNodeTip(t, n, g)
	l := g.Ledger()
	if _, hash := g.Tip(); l.TipHash != hash.String() || l.TipHeight != g.Height() {
		t.Fatalf("ledger tip %d %s, generator tip %v", l.TipHeight, l.TipHash, hash)
	}

	addrs := make([]string, 0, len(l.Addresses))
	for a := range l.Addresses {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	utxos := 0
	for _, addr := range addrs {
		a := l.Addresses[addr]
		var raws []string
		// verbose=0, skip=0, count, vinextra=0, reverse=true (newest first).
		// btcd preallocates count entries, so keep it tight.
		if err := n.CallResult(ctx, &raws, "searchrawtransactions", addr, 0, 0, len(a.Txids)+1, 0, true); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		got := make([]string, len(raws))
		for i, r := range raws {
			got[i] = decodeTx(t, r).TxHash().String()
		}
		// btcd lists newest first by position; the ledger in Blockbook's
		// order, which differs inside a block.
		newest := slices.Clone(a.Txids)
		slices.SortStableFunc(newest, func(x, y string) int {
			tx, ty := l.Txs[x], l.Txs[y]
			if tx.Height != ty.Height {
				return int(ty.Height - tx.Height)
			}
			return ty.Position - tx.Position
		})
		if !slices.Equal(got, newest) {
			t.Fatalf("%s: btcd addrindex txids\n%v\nledger\n%v", addr, got, a.Txids)
		}
		for _, u := range a.Utxos {
			var out *struct {
				Confirmations int64   `json:"confirmations"`
				Value         float64 `json:"value"`
				Coinbase      bool    `json:"coinbase"`
			}
			if err := n.CallResult(ctx, &out, "gettxout", u.Txid, u.Vout, false); err != nil {
				t.Fatal(err)
			}
			if out == nil {
				t.Fatalf("%s: ledger utxo %s:%d is spent on btcd", addr, u.Txid, u.Vout)
			}
			if v := int64(math.Round(out.Value * 1e8)); v != u.Value || out.Coinbase != u.Coinbase ||
				out.Confirmations != int64(l.TipHeight-u.Height+1) {
				t.Fatalf("%s: utxo %+v, btcd %+v", addr, u, *out)
			}
			utxos++
		}
	}
	// Everything the last blocks spent must be gone from btcd's UTXO set.
	spent := 0
	for _, b := range g.Blocks()[g.Height()-4:] {
		for _, tx := range b.Transactions[1:] {
			for _, in := range tx.TxIn {
				var out any
				if err := n.CallResult(ctx, &out, "gettxout", in.PreviousOutPoint.Hash.String(),
					in.PreviousOutPoint.Index, false); err != nil {
					t.Fatal(err)
				}
				if out != nil {
					t.Fatalf("spent output %v still unspent on btcd", in.PreviousOutPoint)
				}
				spent++
			}
		}
	}
	t.Logf("checked %d addresses, %d utxos, %d spent outputs against btcd", len(addrs), utxos, spent)
}

// TestForkReorgs makes btcd reorganise to a longer fork and back again.
func TestForkReorgs(t *testing.T) {
	n := startNode(t, regtest.Options{})
	g := demoChain(t)
	ctx := testCtx(t)
	if err := g.Submit(ctx, n, 1); err != nil {
		t.Fatal(err)
	}
	tip := g.Height()
	forkAt := tip - 10
	f, err := g.Fork(forkAt, "fork-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Extend(11, 3); err != nil {
		t.Fatal(err)
	}
	gb, fb := g.Blocks(), f.Blocks()
	for h := range fb {
		same := h <= int(forkAt)
		if h <= int(tip) && (gb[h].BlockHash() == fb[h].BlockHash()) != same {
			t.Fatalf("block %d: shared=%v, want %v", h, !same, same)
		}
	}
	if err := f.Submit(ctx, n, forkAt+1); err != nil {
		t.Fatal(err)
	}
	assertNodeTip(t, n, f)

	lf := f.Ledger()
	for _, b := range gb[forkAt+1:] {
		for _, tx := range b.Transactions {
			if _, ok := lf.Txs[tx.TxHash().String()]; ok {
				t.Fatalf("fork ledger contains tx %s of the abandoned branch", tx.TxHash())
			}
		}
	}

	f2, err := g.Fork(forkAt, "fork-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := f2.Extend(11, 3); err != nil {
		t.Fatal(err)
	}
	_, h1 := f.Tip()
	_, h2 := f2.Tip()
	if h1 != h2 {
		t.Fatal("forking twice with the same salt gave different chains")
	}

	// The original branch grows longer again: btcd must switch back.
	back, err := g.Fork(tip, "main-continued")
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Extend(2, 2); err != nil {
		t.Fatal(err)
	}
	if err := back.Submit(ctx, n, tip+1); err != nil {
		t.Fatal(err)
	}
	assertNodeTip(t, n, back)
}

// TestCreatePaymentViaMempool sends a wallet payment through btcd's mempool
// and mines it with AddBlock.
func TestCreatePaymentViaMempool(t *testing.T) {
	n := startNode(t, regtest.Options{})
	ctx := testCtx(t)
	// btcd only updates its mempool for connected blocks while its tip is
	// less than 24h old, so this chain is stamped near the present.
	g := New(params, "payment-test", WithTimestamps(time.Now().Add(-time.Hour), time.Second))
	if err := g.Extend(int(params.CoinbaseMaturity)+5, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.Submit(ctx, n, 1); err != nil {
		t.Fatal(err)
	}
	ext, err := New(params, "someone-else").Address(P2TR, 1)
	if err != nil {
		t.Fatal(err)
	}
	self, err := g.Address(P2SHP2WPKH, 3)
	if err != nil {
		t.Fatal(err)
	}

	tx1, err := g.CreatePayment([]Output{{Address: ext, Value: 150_000_000}, {Address: self, Value: 20_000_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	tx2, err := g.CreatePayment([]Output{{Address: ext, Value: 10_000_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range tx2.TxIn {
		if slices.ContainsFunc(tx1.TxIn, func(o *wire.TxIn) bool { return o.PreviousOutPoint == in.PreviousOutPoint }) {
			t.Fatalf("second payment reuses input %v", in.PreviousOutPoint)
		}
	}
	for _, tx := range []*wire.MsgTx{tx1, tx2} {
		txid, err := n.SendRawTransaction(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		if txid != tx.TxHash().String() {
			t.Fatalf("sendrawtransaction returned %s, want %s", txid, tx.TxHash())
		}
	}
	var mempool []string
	if err := n.CallResult(ctx, &mempool, "getrawmempool"); err != nil {
		t.Fatal(err)
	}
	if len(mempool) != 2 {
		t.Fatalf("mempool %v, want both payments", mempool)
	}

	blk, err := g.AddBlock(tx1, tx2)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SubmitBlock(ctx, blk); err != nil {
		t.Fatal(err)
	}
	assertNodeTip(t, n, g)
	if err := n.CallResult(ctx, &mempool, "getrawmempool"); err != nil || len(mempool) != 0 {
		t.Fatalf("mempool after mining: %v %v", mempool, err)
	}

	l := g.Ledger()
	a := l.Addresses[ext]
	// Both pay to ext: newest first (Blockbook's order within a block).
	want := []string{tx2.TxHash().String(), tx1.TxHash().String()}
	if a == nil || a.Balance != 160_000_000 || !slices.Equal(a.Txids, want) {
		t.Fatalf("external address ledger %+v, want 1.6 BTC from %v", a, want)
	}
	info := l.Txs[tx1.TxHash().String()]
	if v := vsize(tx1); info.Fee < 3*v || info.Fee > 3*(v+4*int64(len(tx1.TxIn))) {
		t.Fatalf("fee %d for vsize %d at 3 sat/vB", info.Fee, v)
	}
	// The wallet tracks the output it paid to itself.
	if !slices.ContainsFunc(g.wallet.pool, func(u *utxo) bool { return u.info.address == self && u.value == 20_000_000 }) {
		t.Fatal("wallet did not pick up its own payment output")
	}
	if _, err := g.CreatePayment([]Output{{Address: ext, Value: 1e15}}, 1); !errors.Is(err, errInsufficient) {
		t.Fatalf("oversized payment: %v", err)
	}
}
