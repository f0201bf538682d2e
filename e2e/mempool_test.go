package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Unconfirmed txs show in the REST answers where a user expects them, and
// leave the mempool when confirmed, replaced or reorganized away.

// mempoolAddr is a fresh wallet address per index that the demo chain never
// touched.
func mempoolAddr(t testing.TB, g *chaingen.Generator, kind chaingen.ScriptKind, index uint64) string {
	t.Helper()
	a, err := g.Address(kind, 9000+index)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func sendTx(t testing.TB, st *demoStack, tx *wire.MsgTx) string {
	t.Helper()
	txid, err := st.node.SendRawTransaction(context.Background(), tx)
	if err != nil {
		t.Fatalf("sendrawtransaction: %v\n%s", err, st.node.LogTail(10))
	}
	return txid
}

// waitAddress polls an address until check accepts it (a failure guard,
// not a speed assertion).
func waitAddress(t testing.TB, base, addr string, check func(*api.Address) bool) *api.Address {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var a api.Address
		getJSON(t, base+"/api/v2/address/"+addr+"?details=txids", 200, &a)
		if check(&a) {
			return &a
		}
		if time.Now().After(deadline) {
			t.Fatalf("address %s never reached the expected state; last %+v", addr, a)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func amount(a *api.Amount) string { return a.String() }

// waitStatus polls the status until check accepts it (a failure guard).
func waitStatus(t testing.TB, base string, check func(*api.SystemInfo) bool) api.SystemInfo {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var sys api.SystemInfo
		getJSON(t, base+"/api/v2", 200, &sys)
		if check(&sys) {
			return sys
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never reached the expected state; last %+v", sys.Blockbook)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMempoolInRESTAnswers(t *testing.T) {
	st := startDemoStack(t, wsFilterConfig)
	g, base := st.g, st.inst.base
	z := mempoolAddr(t, g, chaingen.P2TR, 1)
	w := mempoolAddr(t, g, chaingen.P2WPKH, 2)
	w2 := mempoolAddr(t, g, chaingen.P2PKH, 3)

	// T1 pays z.
	t1, err := g.CreatePayment([]chaingen.Output{{Address: z, Value: 700_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	id1 := sendTx(t, st, t1)
	a := waitAddress(t, base, z, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
	if amount(a.UnconfirmedBalance) != "700000" || amount(a.Balance) != "0" || a.Txs != 0 || !slices.Equal(a.Txids, []string{id1}) {
		t.Fatalf("address with one pending payment: %+v", a)
	}
	var tx api.Tx
	getJSON(t, base+"/api/v2/tx/"+id1, 200, &tx)
	if tx.BlockHeight != -1 || tx.Confirmations != 0 || tx.BlockTime < time.Now().Add(-time.Hour).Unix() || tx.Fees == nil || tx.ValueIn == nil {
		t.Fatalf("pending tx: %+v", tx)
	}
	var utxos []api.Utxo
	getJSON(t, base+"/api/v2/utxo/"+z, 200, &utxos)
	if len(utxos) != 1 || utxos[0].Txid != id1 || utxos[0].Confirmations != 0 || utxos[0].Height != 0 {
		t.Fatalf("pending utxo: %+v", utxos)
	}
	getJSON(t, base+"/api/v2/utxo/"+z+"?confirmed=true", 200, &utxos)
	if len(utxos) != 0 {
		t.Fatalf("confirmed=true lists pending outputs: %+v", utxos)
	}
	var sys api.SystemInfo
	getJSON(t, base+"/api/v2", 200, &sys)
	if sys.Blockbook.MempoolSize < 1 || !sys.Blockbook.InSyncMempool || sys.Blockbook.LastMempoolTime.IsZero() {
		t.Fatalf("status: %+v", sys.Blockbook)
	}

	// T2 spends T1's output to z while T1 is unconfirmed: its input
	// resolves from the mempool.
	coins := g.Coins(t1)
	var zCoin []chaingen.Coin
	for _, c := range coins {
		if c.Value == 700_000 {
			zCoin = append(zCoin, c)
		}
	}
	if len(zCoin) != 1 {
		t.Fatalf("coins of T1: %+v", coins)
	}
	t2, err := g.Spend(zCoin, []chaingen.Output{{Address: w, Value: 300_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	id2 := sendTx(t, st, t2)
	waitAddress(t, base, w, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
	getJSON(t, base+"/api/v2/tx/"+id2, 200, &tx)
	if tx.Vin[0].Value == nil || amount(tx.Vin[0].Value) != "700000" || len(tx.Vin[0].Addresses) != 1 || tx.Vin[0].Addresses[0] != z || !tx.Rbf {
		t.Fatalf("child of a pending tx: %+v", tx.Vin[0])
	}
	a = waitAddress(t, base, z, func(a *api.Address) bool { return a.UnconfirmedTxs == 2 })
	if amount(a.UnconfirmedBalance) != "0" {
		t.Fatalf("z received and spent in the mempool: %+v", a)
	}
	getJSON(t, base+"/api/v2/utxo/"+z, 200, &utxos)
	if len(utxos) != 0 {
		t.Fatalf("an output spent by a pending tx is still listed: %+v", utxos)
	}

	// T2' replaces T2 (RBF): T2 leaves, T2' pays w2 instead.
	prevs, err := g.Prevouts(t2, t1)
	if err != nil {
		t.Fatal(err)
	}
	t2r, err := g.Replace(t2, prevs, []chaingen.Output{{Address: w2, Value: 300_000}}, 20)
	if err != nil {
		t.Fatal(err)
	}
	id2r := sendTx(t, st, t2r)
	waitAddress(t, base, w, func(a *api.Address) bool { return a.UnconfirmedTxs == 0 })
	a = waitAddress(t, base, w2, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
	if !slices.Equal(a.Txids, []string{id2r}) {
		t.Fatalf("replacement: %+v", a)
	}
	a = waitAddress(t, base, z, func(a *api.Address) bool { return a.UnconfirmedTxs == 2 })
	if !slices.Contains(a.Txids, id2r) || slices.Contains(a.Txids, id2) {
		t.Fatalf("z after the replacement: %+v", a)
	}

	// Mining T1 and T2' confirms both: they leave the mempool.
	if _, err := g.AddBlock(t1, t2r); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, g.Height())
	h, hash := g.Tip()
	waitTip(t, base, h, hash.String(), st.inst.logs)
	a = waitAddress(t, base, z, func(a *api.Address) bool { return a.UnconfirmedTxs == 0 })
	if a.Txs != 2 || amount(a.Balance) != "0" || amount(a.UnconfirmedBalance) != "0" {
		t.Fatalf("z after confirmation: %+v", a)
	}
	// btcd keeps mined txs listed in its mempool while it considers its
	// chain stale (the demo chain's timestamps are old): a resync after the
	// block must not take them back as pending.
	mined := time.Now()
	sys = waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.LastMempoolTime.After(mined) })
	if sys.Blockbook.MempoolSize != 0 {
		t.Fatalf("mined txs are back in the mempool after a resync: size %d", sys.Blockbook.MempoolSize)
	}
	getJSON(t, base+"/api/v2/tx/"+id1, 200, &tx)
	if tx.BlockHeight != int64(h) || tx.Confirmations != 1 {
		t.Fatalf("confirmed T1: %+v", tx)
	}

	// A reorg puts the orphaned block's txs back into the mempool.
	x := mempoolAddr(t, g, chaingen.P2WPKH, 4)
	t3, err := g.CreatePayment([]chaingen.Output{{Address: x, Value: 50_000}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	fork, err := g.Fork(g.Height(), "mempool-reorg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddBlock(t3); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, g.Height())
	h, hash = g.Tip()
	waitTip(t, base, h, hash.String(), st.inst.logs)
	waitAddress(t, base, x, func(a *api.Address) bool { return a.Txs == 1 && a.UnconfirmedTxs == 0 })
	for i := 0; i < 2; i++ {
		if _, err := fork.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := fork.Submit(context.Background(), st.node, h); err != nil {
		t.Fatal(err)
	}
	fh, fhash := fork.Tip()
	waitTip(t, base, fh, fhash.String(), st.inst.logs)
	a = waitAddress(t, base, x, func(a *api.Address) bool { return a.Txs == 0 && a.UnconfirmedTxs == 1 })
	if amount(a.UnconfirmedBalance) != "50000" || !slices.Equal(a.Txids, []string{t3.TxHash().String()}) {
		t.Fatalf("after the reorg the orphaned tx should be pending again: %+v", a)
	}
}

// Balance history counts what an address sends back to itself as
// sentToSelf (REST and websocket share the code).
func TestBalanceHistorySentToSelf(t *testing.T) {
	st := startDemoStack(t, nil)
	g, base := st.g, st.inst.base
	s := mempoolAddr(t, g, chaingen.P2WPKH, 50)
	other := mempoolAddr(t, g, chaingen.P2PKH, 51)
	t1, err := g.CreatePayment([]chaingen.Output{{Address: s, Value: 1_000_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var coin []chaingen.Coin
	for _, c := range g.Coins(t1) {
		if c.Value == 1_000_000 {
			coin = append(coin, c)
		}
	}
	t2, err := g.Spend(coin, []chaingen.Output{{Address: s, Value: 400_000}, {Address: other, Value: 100_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddBlock(t1, t2); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, g.Height())
	h, hash := g.Tip()
	waitTip(t, base, h, hash.String(), st.inst.logs)
	var hist []api.BalanceHistory
	getJSON(t, base+"/api/v2/balancehistory/"+s+"?groupBy=2000000000", 200, &hist)
	if len(hist) != 1 || hist[0].Txs != 2 || amount(hist[0].Received) != "1400000" || amount(hist[0].Sent) != "1000000" ||
		amount(hist[0].SentToSelf) != "400000" {
		t.Fatalf("balance history of an address paying itself: %+v", hist)
	}
	var wsHist []api.BalanceHistory
	newWS(t, base).ok("getBalanceHistory", map[string]any{"descriptor": s, "groupBy": 2000000000}, &wsHist)
	if len(wsHist) != 1 || amount(wsHist[0].SentToSelf) != "400000" {
		t.Fatalf("websocket balance history: %+v", wsHist)
	}
}
