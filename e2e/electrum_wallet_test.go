package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/electrum"
	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/electrumwallet"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// The real Electrum wallet (Debian's electrum 4.3) runs headless on
// regtest against our Electrum server and btcd: it restores a BIP84
// account of the test chain from its extended private key (a vprv) and,
// watch-only, from its vpub, and the history (txids, heights, in-block
// order, per-tx value, running balance) and balance it shows equal the
// generator's account ledger; it sees a payment sent to the node (the
// server's script hash notification is the only way it learns of it); and
// a payment it signs and broadcasts through the server reaches the node
// and, once mined, shows confirmed in both wallets (Electrum checks its
// merkle proof against the headers the server gave).
func TestElectrumWallet(t *testing.T) {
	electrumwallet.Require(t)
	st := startElectrumWalletStack(t)
	checkWalletOpenCost(t, st.inst.internal)
	for _, w := range st.wallets {
		checkElectrumWallet(t, st.d, w, st.g, st.acct, nil)
	}
	st.receive(t)
	txid, amount := st.pay(t)
	for _, w := range st.wallets {
		st.waitConfirmed(t, w, txid)
		checkElectrumWallet(t, st.d, w, st.g, st.acct, map[string]int64{txid: -amount})
	}
}

// ewStack is btcd, blockbook serving Electrum, and an Electrum daemon
// holding two synchronized wallets of one account: wallets[0] restored from
// its vprv, wallets[1] watch-only from its vpub.
type ewStack struct {
	g       *chaingen.Generator
	acct    *chaingen.HDAccount
	pending []*wire.MsgTx
	node    *regtest.Node
	inst    *instance
	d       *electrumwallet.Daemon
	wallets []string
}

func startElectrumWalletStack(t *testing.T) *ewStack {
	t.Helper()
	ctx := context.Background()
	params := &chaincfg.RegressionNetParams
	const blocks = 125
	// A tip of now: btcd leaves mined txs in its mempool while its tip is
	// over a day old.
	st := &ewStack{g: chaingen.New(params, "e2e-electrum",
		chaingen.WithTimestamps(time.Now().Add(-(blocks+10)*time.Minute), time.Minute))}
	if err := st.g.Extend(blocks, 0); err != nil {
		t.Fatal(err)
	}
	seed := chaingen.HDSeed("e2e-electrum")
	var err error
	if st.acct, err = chaingen.NewHDAccount(params, seed, chaingen.BIP84, 0); err != nil {
		t.Fatal(err)
	}
	if st.pending, err = st.g.HDScenario([]*chaingen.HDAccount{st.acct}); err != nil {
		t.Fatal(err)
	}
	st.node = startNode(t)
	submit(t, st.g, st.node, 1)
	eaddr := freePort(t)
	st.inst = startInProcess(t, writeConfig(t, st.node, nil), t.TempDir(), func(o *app.Options) { listenElectrum(o, eaddr) })
	h, hash := st.g.Tip()
	waitTip(t, st.inst.base, h, hash.String(), st.inst.logs)

	elog := &syncbuf.Buffer{}
	if st.d, err = electrumwallet.Start(ctx, electrumwallet.Options{Dir: t.TempDir(), Server: eaddr, Log: elog}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.d.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("electrum daemon log:\n%s\nblockbook log:\n%s", tail(elog.String(), 60), tail(st.inst.logs.String(), 60))
		}
	})
	vprv, err := electrumwallet.AccountKey(params, seed, chaingen.BIP84, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{vprv, st.acct.Xpub()} {
		w, err := st.d.Restore(ctx, key, fmt.Sprintf("bip84-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.d.WaitSynced(ctx, w, h, waitFor); err != nil {
			t.Fatal(err)
		}
		st.wallets = append(st.wallets, w)
	}
	return st
}

// receive sends two payments to the node: the scenario's pending one, to
// receive address 1 (which has history), and one to receive address 2,
// never used before (a script the index has never seen: only the mempool
// knows it). It waits until Electrum shows each unconfirmed.
func (st *ewStack) receive(t *testing.T) {
	t.Helper()
	pk2, err := st.acct.PkScript(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := st.g.CreatePayment([]chaingen.Output{{Script: pk2, Value: 765_432}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	st.pending = append(st.pending[:1], fresh)
	var before int64
	for i, pay := range st.pending {
		pk, _ := st.acct.PkScript(0, uint32(i+1))
		var want int64
		for _, o := range pay.TxOut {
			if bytes.Equal(o.PkScript, pk) {
				want += o.Value
			}
		}
		if want == 0 {
			t.Fatalf("pending tx %d does not pay receive address %d", i, i+1)
		}
		st.receiveOne(t, pay, before, want)
		before += want
	}
}

// receiveOne sends pay to the node and waits until every wallet shows it
// unconfirmed, with the unconfirmed balance before+want.
func (st *ewStack) receiveOne(t *testing.T, pay *wire.MsgTx, before, want int64) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	if _, err := st.node.SendRawTransaction(ctx, pay); err != nil {
		t.Fatal(err)
	}
	for _, w := range st.wallets {
		waitUntil(t, fmt.Sprintf("the unconfirmed payment %s in %s", pay.TxHash(), w), func() bool {
			b, err := st.d.Balance(ctx, w)
			return err == nil && b.Unconfirmed == before+want
		})
		t.Logf("electrum showed the payment %v after sendrawtransaction", time.Since(start).Round(time.Millisecond))
		hist, err := st.d.History(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(hist, func(x electrumwallet.Tx) bool { return x.Txid == pay.TxHash().String() })
		if i < 0 || hist[i].Height > 0 || hist[i].Value != want {
			t.Fatalf("history %+v: want the pending payment %s of %d", hist, pay.TxHash(), want)
		}
	}
}

// pay has Electrum pay an outside address through the server, checks the
// node's mempool holds the tx and mines it with the pending payments. It
// returns the txid and what the tx takes from the wallet.
func (st *ewStack) pay(t *testing.T) (string, int64) {
	t.Helper()
	ctx := context.Background()
	outside, err := st.g.Address(chaingen.P2WPKH, 41)
	if err != nil {
		t.Fatal(err)
	}
	const amount, fee = 1_234_567, 2_000
	txid, raw, err := st.d.Pay(ctx, st.wallets[0], outside, amount, fee)
	if err != nil {
		t.Fatal(err)
	}
	var sent wire.MsgTx
	rawBytes, err := hex.DecodeString(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := sent.Deserialize(bytes.NewReader(rawBytes)); err != nil || sent.TxHash().String() != txid {
		t.Fatalf("payto's tx %s does not decode to its txid: %v", txid, err)
	}
	waitUntil(t, "the node's mempool to hold Electrum's tx", func() bool {
		var pool []string
		return st.node.CallResult(ctx, &pool, "getrawmempool") == nil && slices.Contains(pool, txid)
	})
	from, _ := st.g.Tip()
	if _, err := st.g.AddBlock(append(st.pending, &sent)...); err != nil {
		t.Fatal(err)
	}
	submit(t, st.g, st.node, from+1)
	h, hash := st.g.Tip()
	waitTip(t, st.inst.base, h, hash.String(), st.inst.logs)
	return txid, amount + fee
}

// waitConfirmed waits until the wallet shows txid, its last tx, with one
// confirmation (its merkle proof verified) and is synchronized.
func (st *ewStack) waitConfirmed(t *testing.T, w, txid string) {
	t.Helper()
	ctx := context.Background()
	h, _ := st.g.Tip()
	waitUntil(t, "Electrum's payment to confirm in "+w, func() bool {
		hist, err := st.d.History(ctx, w)
		if err != nil || len(hist) == 0 {
			return false
		}
		last := hist[len(hist)-1]
		i, _ := st.d.Info(ctx)
		return i.BlockchainHeight == h && last.Txid == txid && last.Confirmations == 1
	})
	if err := st.d.WaitSynced(ctx, w, h, waitFor); err != nil {
		t.Fatal(err)
	}
}

// checkElectrumWallet compares the wallet's balance and history with the
// account's ledger under Electrum's receive gap limit (20; its change gap
// of 10 does not matter here: the change addresses used are 0 to 3).
// Every tx must be confirmed; values gives the expected value of some.
func checkElectrumWallet(t *testing.T, d *electrumwallet.Daemon, w string, g *chaingen.Generator, acct *chaingen.HDAccount, values map[string]int64) {
	t.Helper()
	ctx := context.Background()
	led, err := g.AccountLedger(acct, 20)
	if err != nil {
		t.Fatal(err)
	}
	bal, err := d.Balance(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if bal != (electrumwallet.Balance{Confirmed: led.Balance}) {
		t.Errorf("electrum balance %+v, ledger %d confirmed", bal, led.Balance)
	}
	hist, err := d.History(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	// Electrum lists txs by height, then by position in the block (from
	// the server's merkle proofs).
	want := slices.Clone(led.Txids)
	slices.SortStableFunc(want, func(a, b string) int {
		x, y := led.Txs[a], led.Txs[b]
		if x.Height != y.Height {
			return int(x.Height - y.Height)
		}
		return x.Position - y.Position
	})
	if len(want) < 6 {
		t.Fatalf("the ledger has only %d txs of the account", len(want))
	}
	if len(hist) != len(want) {
		t.Fatalf("electrum shows %d txs, the ledger %d", len(hist), len(want))
	}
	var running int64
	tip, _ := g.Tip()
	for i, id := range want {
		lt, et := led.Txs[id], hist[i]
		running += lt.Received - lt.Sent
		if et.Txid != id || et.Height != lt.Height || et.Value != lt.Received-lt.Sent || et.Balance != running ||
			et.Confirmations != int(tip-lt.Height+1) {
			t.Errorf("history %d: electrum %+v; ledger %s at %d, value %d, balance %d", i, et, id, lt.Height,
				lt.Received-lt.Sent, running)
		}
		if v, ok := values[id]; ok && et.Value != v {
			t.Errorf("tx %s: electrum value %d, want %d", id, et.Value, v)
		}
	}
	if running != led.Balance {
		t.Errorf("the ledger's txs sum to %d, its balance is %d", running, led.Balance)
	}
}

// listenElectrum has the instance serve Electrum on addr, and keeps the
// listener's announcement away from startInProcess, which waits for the
// public and internal ones only.
func listenElectrum(o *app.Options, addr string) {
	o.Electrum.TCP = addr
	announce := o.OnListen
	o.OnListen = func(name, a string) {
		if name == "public" || name == "internal" {
			announce(name, a)
		}
	}
}

// checkWalletOpenCost reads what the wallets' opening (two wallets of the
// account restored and synced, one connection) weighed against the
// per-client Electrum budget: it must stay a small part of one burst, so
// that a wallet at open never meets the rate limit.
func checkWalletOpenCost(t *testing.T, internal string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^blockbook_electrum_call_cost_total (\S+)$`).FindStringSubmatch(metricsText(t, internal))
	if m == nil {
		t.Fatal("/metrics lacks blockbook_electrum_call_cost_total")
	}
	cost, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the Electrum wallet's opening of the demo account weighed %.0f cost units (burst %d)", cost, electrum.DefaultCallBurst)
	if cost < 10 || cost > electrum.DefaultCallBurst/10 {
		t.Errorf("the wallets' opening weighed %.0f units: want a small part of the burst of %d", cost, electrum.DefaultCallBurst)
	}
}
