package esplora_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/esplora"
)

type esploraStats struct {
	FundedTxoCount int64 `json:"funded_txo_count"`
	FundedTxoSum   int64 `json:"funded_txo_sum"`
	SpentTxoCount  int64 `json:"spent_txo_count"`
	SpentTxoSum    int64 `json:"spent_txo_sum"`
	TxCount        int64 `json:"tx_count"`
}

type esploraAddress struct {
	Address      string       `json:"address"`
	Scripthash   string       `json:"scripthash"`
	ChainStats   esploraStats `json:"chain_stats"`
	MempoolStats esploraStats `json:"mempool_stats"`
}

// scriptOf is the output script of an address of the fixture's chain.
func scriptOf(t *testing.T, f *fixture, a string) []byte {
	t.Helper()
	addr, err := address.DecodeAddress(a, f.Params)
	if err != nil {
		t.Fatal(err)
	}
	s, err := txscript.PayToAddrScript(addr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newestFirst is the oracle's history of a script as Esplora lists it:
// the confirmed txids and the pending ones, each newest first.
func newestFirst(f *fixture, script []byte) (confirmed, pending []string) {
	h := f.oracle.hist[string(script)]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Pos < 0 {
			pending = append(pending, h[i].Txid.String())
		} else {
			confirmed = append(confirmed, h[i].Txid.String())
		}
	}
	return confirmed, pending
}

func txids(txs []esploraTx) []string {
	out := make([]string, len(txs))
	for i, tx := range txs {
		out[i] = tx.Txid
	}
	return out
}

// busiest is the address with the most confirmed txs (more than a page).
func busiest(t *testing.T, f *fixture) string {
	t.Helper()
	best, n := "", 0
	for s, h := range f.oracle.hist {
		a := f.Address([]byte(s))
		if _, err := address.DecodeAddress(a, f.Params); err != nil || len(h) <= n {
			continue
		}
		best, n = a, len(h)
	}
	if n <= 25 {
		t.Fatalf("no address with more than a page of txs (best %d)", n)
	}
	return best
}

// TestAddressRoutes reads stats, every page of history, the mempool txs
// and the UTXOs of addresses (by address and by script hash) and compares
// them with the oracle.
func TestAddressRoutes(t *testing.T) {
	f := newFixture(t, esploraOptions())
	for _, a := range []string{f.DemoAddress, f.UnusedAddress, busiest(t, f)} {
		script := scriptOf(t, f, a)
		sh := sha256Of(script)
		for _, base := range []string{"/api/address/" + a, "/api/scripthash/" + hex.EncodeToString(sh[:])} {
			checkScript(t, f, a, base, script)
		}
	}
}

func checkScript(t *testing.T, f *fixture, a, base string, script []byte) {
	t.Helper()
	bal, err := f.oracle.ScriptBalance(context.Background(), script)
	if err != nil {
		t.Fatal(err)
	}
	var st esploraAddress
	f.getJSON(t, base, &st)
	if st.ChainStats != esploraStats(bal.Chain) || st.MempoolStats != esploraStats(bal.Mempool) ||
		st.Address == "" && st.Scripthash == "" {
		t.Fatalf("%s: %+v, want %+v", base, st, bal)
	}
	confirmed, pending := newestFirst(f, script)
	// Chain pages of 25 until an empty one.
	var all []string
	last := ""
	for page := 0; ; page++ {
		var txs []esploraTx
		path := base + "/txs/chain"
		if last != "" {
			path += "/" + last
		}
		f.getJSON(t, path, &txs)
		if len(txs) == 0 {
			break
		}
		if len(txs) > 25 || page > 1000 {
			t.Fatalf("%s: %d txs", path, len(txs))
		}
		for i := range txs {
			if !txs[i].Status.Confirmed {
				t.Fatalf("%s: pending tx %s", path, txs[i].Txid)
			}
		}
		all = append(all, txids(txs)...)
		last = txs[len(txs)-1].Txid
	}
	if !slices.Equal(all, confirmed) {
		t.Fatalf("%s: chain history %v, want %v", base, all, confirmed)
	}
	var mem []esploraTx
	f.getJSON(t, base+"/txs/mempool", &mem)
	if got := txids(mem); !slices.Equal(got, pending[:min(50, len(pending))]) {
		t.Fatalf("%s: mempool txs %v, want %v", base, got, pending)
	}
	var first []esploraTx
	f.getJSON(t, base+"/txs", &first)
	want := append(slices.Clone(pending[:min(50, len(pending))]), confirmed[:min(25, len(confirmed))]...)
	if got := txids(first); !slices.Equal(got, want) {
		t.Fatalf("%s/txs: %v, want %v", base, got, want)
	}
	// mempool.space's after_txid continues the same list.
	if len(want) > 0 {
		var next []esploraTx
		f.getJSON(t, base+"/txs?after_txid="+want[len(want)-1], &next)
		if got, w := txids(next), confirmed[min(25, len(confirmed)):min(50, len(confirmed))]; !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
			t.Fatalf("%s/txs?after_txid: %v, want %v", base, got, w)
		}
	}
	checkUtxos(t, f, base, script)
}

func checkUtxos(t *testing.T, f *fixture, base string, script []byte) {
	t.Helper()
	want, err := f.oracle.ScriptUtxos(context.Background(), script)
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Txid   string        `json:"txid"`
		Vout   uint32        `json:"vout"`
		Value  int64         `json:"value"`
		Status esploraStatus `json:"status"`
	}
	f.getJSON(t, base+"/utxo", &got)
	key := func(txid string, vout uint32) string { return fmt.Sprintf("%s:%d", txid, vout) }
	wantSet := map[string]api.ScriptUtxo{}
	for _, u := range want {
		wantSet[key(u.Txid.String(), u.Vout)] = u
	}
	if len(got) != len(want) {
		t.Fatalf("%s/utxo: %d utxos, want %d", base, len(got), len(want))
	}
	for _, u := range got {
		w, ok := wantSet[key(u.Txid, u.Vout)]
		if !ok || w.Value != u.Value {
			t.Fatalf("%s/utxo: %+v not in %v", base, u, want)
		}
		h := int(w.Height)
		if h == 0 {
			h = -1
		}
		checkStatus(t, f, u.Txid, u.Status, h)
	}
}

func TestAddressErrors(t *testing.T) {
	f := newFixture(t, esploraOptions())
	f.wantError(t, "GET", "/api/address/notanaddress", "", 400, "Invalid Bitcoin address")
	f.wantError(t, "GET", "/api/address/notanaddress/utxo", "", 400, "Invalid Bitcoin address")
	f.wantError(t, "GET", "/api/scripthash/abcd", "", 400, "Invalid scripthash")
	f.wantError(t, "GET", "/api/scripthash/"+hex.EncodeToString(make([]byte, 32))+"/other", "", 404, "endpoint does not exist")
	f.wantError(t, "GET", "/api/address-prefix/bcrt1", "", 400, "address search disabled")
	// A script hash no tx touched: zero stats and empty lists.
	unknown := hex.EncodeToString(make([]byte, 32))
	if code, body := f.get(t, "/api/scripthash/"+unknown); code != 200 || body != `{"chain_stats":{"funded_txo_count":0,"funded_txo_sum":0,"spent_txo_count":0,"spent_txo_sum":0,"tx_count":0},"mempool_stats":{"funded_txo_count":0,"funded_txo_sum":0,"spent_txo_count":0,"spent_txo_sum":0,"tx_count":0},"scripthash":"`+unknown+`"}` {
		t.Errorf("unknown scripthash: %d %s", code, body)
	}
	for _, sub := range []string{"/txs", "/txs/chain", "/txs/mempool", "/utxo"} {
		if code, body := f.get(t, "/api/scripthash/"+unknown+sub); code != 200 || body != "[]" {
			t.Errorf("unknown scripthash %s: %d %s", sub, code, body)
		}
	}
	// An unknown last_seen_txid ends the paging; one that is not a txid
	// starts it over (electrs ignores it).
	a := f.DemoAddress
	if code, body := f.get(t, "/api/address/"+a+"/txs/chain/"+unknown); code != 200 || body != "[]" {
		t.Errorf("unknown last_seen: %d %s", code, body)
	}
	var first, again []esploraTx
	f.getJSON(t, "/api/address/"+a+"/txs/chain", &first)
	f.getJSON(t, "/api/address/"+a+"/txs/chain/zz", &again)
	if !slices.Equal(txids(first), txids(again)) || len(first) == 0 {
		t.Errorf("invalid last_seen: %v, want %v", txids(again), txids(first))
	}
}

// TestHistoryLimits: over the history cap, a 400 with electrs' text; over
// the UTXO cap, its own text.
func TestHistoryLimits(t *testing.T) {
	f := newFixture(t, esplora.Options{MaxHistory: 2, MaxUtxos: 1})
	b := busiest(t, f)
	f.wantError(t, "GET", "/api/address/"+b+"/txs", "", 400, "Too many history entries")
	f.wantError(t, "GET", "/api/address/"+b+"/txs/chain", "", 400, "Too many history entries")
	utxos, err := f.oracle.ScriptUtxos(context.Background(), scriptOf(t, f, b))
	if err != nil {
		t.Fatal(err)
	}
	if len(utxos) > 1 {
		f.wantError(t, "GET", "/api/address/"+b+"/utxo", "", 400, "Too many unspent transaction outputs (>1)")
	}
}
