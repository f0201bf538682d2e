package api_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// utxoKey identifies an unspent output.
func utxoKey(txid string, vout uint32) string { return fmt.Sprintf("%s:%d", txid, vout) }

// wantUtxos compares an answer with ledger outputs (in any order within a
// height; heights descending), address and path included for accounts.
func wantUtxos(t *testing.T, f *apitest.Fixture, what string, got []api.Utxo, want []chaingen.AccountUtxo) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d utxos, want %d", what, len(got), len(want))
	}
	byKey := map[string]chaingen.AccountUtxo{}
	for _, u := range want {
		byKey[utxoKey(u.Txid, u.Vout)] = u
	}
	for i, u := range got {
		w, ok := byKey[utxoKey(u.Txid, u.Vout)]
		if !ok {
			t.Fatalf("%s: unexpected utxo %+v", what, u)
		}
		if u.Height != int64(w.Height) || u.Confirmations != uint32(f.TipHeight()-int(w.Height)+1) || u.Coinbase != w.Coinbase ||
			u.Address != w.Address || u.Path != w.Path || u.LockTime != 0 {
			t.Errorf("%s: utxo %+v, want %+v", what, u, w)
		}
		wantAmount(t, what+" utxo value", u.Value, w.Value)
		if i > 0 && got[i-1].Height < u.Height {
			t.Errorf("%s: utxo at height %d after one at %d", what, u.Height, got[i-1].Height)
		}
	}
}

// Every address's unspent outputs, and every account's with their
// addresses and paths.
func TestUtxosMatchLedger(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	for addr, l := range f.Ledger.Addresses {
		var want []chaingen.AccountUtxo
		for _, u := range l.Utxos {
			want = append(want, chaingen.AccountUtxo{Utxo: u})
		}
		for _, confirmed := range []bool{false, true} {
			got, err := svc.Utxos(ctx, addr, confirmed, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatalf("%s: nil utxo list (the wire wants [])", addr)
			}
			wantUtxos(t, f, addr, got, want)
			if confirmed {
				// Blockbook's exact order: within a block the last tx
				// first, and its highest output first.
				for i := range got {
					if got[i].Txid != l.Utxos[i].Txid || got[i].Vout != l.Utxos[i].Vout {
						t.Fatalf("%s: utxo %d is %s:%d, want %s:%d", addr, i, got[i].Txid, got[i].Vout, l.Utxos[i].Txid, l.Utxos[i].Vout)
					}
				}
			}
		}
	}
	for i, l := range f.AccountLedgers {
		got, err := svc.Utxos(ctx, f.Accounts[i].Descriptor(true), false, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantUtxos(t, f, f.Accounts[i].Descriptor(true), got, l.Utxos)
	}
	wide := mustLedger(t, f, 3, 21)
	got, err := svc.Utxos(ctx, f.Accounts[3].Descriptor(true), false, 21)
	if err != nil {
		t.Fatal(err)
	}
	wantUtxos(t, f, "gap 21", got, wide.Utxos)
	// An address with more outputs than the limit is refused, not cut.
	miner, _ := f.Gen.Address(chaingen.P2PKH, chaingen.MinerIndex)
	_, err = newService(f, withLimits(api.Limits{MaxUtxos: 2})).Utxos(ctx, miner, true, 0)
	wantUserError(t, err, "Address has more than 2 unspent outputs")
}

// historyOf groups per-tx movements into buckets of groupBy seconds.
type movement struct{ time, received, sent, self int64 }

func historyOf(moves []movement, from, to, groupBy int64) []api.BalanceHistory {
	buckets := map[int64]*api.BalanceHistory{}
	sums := map[int64]*[3]int64{}
	for _, m := range moves {
		if m.time < from || m.time >= to {
			continue
		}
		start := m.time - m.time%groupBy
		if buckets[start] == nil {
			buckets[start], sums[start] = &api.BalanceHistory{Time: start}, &[3]int64{}
		}
		buckets[start].Txs++
		s := sums[start]
		s[0], s[1], s[2] = s[0]+m.received, s[1]+m.sent, s[2]+m.self
	}
	out := []api.BalanceHistory{}
	for start, b := range buckets {
		s := sums[start]
		b.Received, b.Sent, b.SentToSelf = api.NewAmount(uint64(s[0])), api.NewAmount(uint64(s[1])), api.NewAmount(uint64(s[2]))
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

func wantHistory(t *testing.T, what string, got, want []api.BalanceHistory) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) || got == nil {
		t.Fatalf("%s: history %v\nwant %v", what, got, want)
	}
}

// Balance histories of an address and of an account: the txs' movements
// grouped by block time.
func TestBalanceHistory(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	addr := f.DemoAddress
	var moves []movement
	for _, txid := range f.Ledger.Addresses[addr].Txids {
		ref, touch := f.Tx(txid), f.Touches(addr, txid)
		m := movement{time: f.Block(ref.Height).Header.Timestamp.Unix()}
		for _, o := range touch.Outputs {
			m.received += ref.Tx.TxOut[o].Value
		}
		for _, i := range touch.Inputs {
			m.sent += ref.Prevouts[i].Value
		}
		if m.sent > 0 {
			m.self = m.received
		}
		moves = append(moves, m)
	}
	first, last := moves[len(moves)-1].time, moves[0].time
	for _, tc := range []struct {
		name     string
		q        api.BalanceHistoryQuery
		from, to int64
		groupBy  int64
	}{
		{"everything, hourly", api.BalanceHistoryQuery{}, 0, 1 << 40, api.DefaultGroupBy},
		{"per block", api.BalanceHistoryQuery{GroupBy: 600}, 0, 1 << 40, 600},
		{"from the last tx", api.BalanceHistoryQuery{From: last, GroupBy: 1}, last, 1 << 40, 1},
		{"to before the last tx", api.BalanceHistoryQuery{To: last, GroupBy: 1}, 0, last, 1},
		{"from > to", api.BalanceHistoryQuery{From: last, To: first}, last, first, 1},
	} {
		got, err := svc.BalanceHistory(ctx, addr, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		wantHistory(t, tc.name, got, historyOf(moves, tc.from, tc.to, tc.groupBy))
	}

	for i, l := range f.AccountLedgers {
		var moves []movement
		for _, tx := range l.Txs {
			moves = append(moves, movement{time: tx.Time, received: tx.Received, sent: tx.Sent, self: tx.SentToSelf})
		}
		got, err := svc.BalanceHistory(ctx, f.Accounts[i].Descriptor(true), api.BalanceHistoryQuery{GroupBy: 600})
		if err != nil {
			t.Fatal(err)
		}
		wantHistory(t, f.Accounts[i].Descriptor(true), got, historyOf(moves, 0, 1<<40, 600))
	}
	got, err := svc.BalanceHistory(ctx, f.UnusedAddress, api.BalanceHistoryQuery{})
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no txs: %v %v", got, err)
	}
	_, err = svc.BalanceHistory(ctx, "nonsense", api.BalanceHistoryQuery{})
	wantUserError(t, err, "Invalid address")
	_, err = newService(f, withLimits(api.Limits{MaxHistoryTxs: 1})).BalanceHistory(ctx, addr, api.BalanceHistoryQuery{})
	wantUserError(t, err, "More than 1 transactions in the range")
	// The websocket and REST caps are separate; a negative cap is none.
	split := newService(f, withLimits(api.Limits{MaxHistoryTxs: -1, MaxHistoryTxsREST: 1}))
	_, err = split.BalanceHistory(ctx, addr, api.BalanceHistoryQuery{REST: true})
	wantUserError(t, err, "More than 1 transactions in the range")
	if _, err = split.BalanceHistory(ctx, addr, api.BalanceHistoryQuery{}); err != nil {
		t.Fatalf("uncapped websocket history: %v", err)
	}
	// A query's own MaxTxs lowers the surface's cap (the explorer's chart).
	_, err = split.BalanceHistory(ctx, addr, api.BalanceHistoryQuery{MaxTxs: 1})
	wantUserError(t, err, "More than 1 transactions in the range")
}
