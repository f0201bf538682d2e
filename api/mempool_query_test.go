package api_test

import (
	"context"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// pendingAddresses lists the addresses the pending txs pay or spend from.
func pendingAddresses(t *testing.T, f *apitest.Fixture) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, tx := range f.Pending {
		prevs, err := f.Gen.Prevouts(tx, f.Pending...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prevs {
			seen[f.Address(p.PkScript)] = true
		}
		for _, o := range tx.TxOut {
			seen[f.Address(o.PkScript)] = true
		}
	}
	delete(seen, "")
	var out []string
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Pending txs come first on an address's first page and make up its
// unconfirmed balance and count; confirmed sums stay as they are.
func TestMempoolAddressMerge(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := newService(f)
	ctx := context.Background()
	addrs := pendingAddresses(t, f)
	if len(addrs) < 8 {
		t.Fatalf("fixture: pending txs touch %d addresses", len(addrs))
	}
	negative := false
	for _, addr := range addrs {
		pending, delta, err := f.PendingFor(addr)
		if err != nil {
			t.Fatal(err)
		}
		negative = negative || delta < 0
		var confirmed []string
		var balance int64
		if l := f.Ledger.Addresses[addr]; l != nil {
			confirmed, balance = l.Txids, l.Balance
		}
		a, err := svc.Address(ctx, addr, api.AddressQuery{Details: api.DetailsTxids, Filter: api.NoFilter})
		if err != nil {
			t.Fatal(err)
		}
		wantAmount(t, addr+" balance", a.Balance, balance)
		wantAmount(t, addr+" unconfirmedBalance", a.UnconfirmedBalance, delta)
		if a.Txs != len(confirmed) || a.UnconfirmedTxs != len(pending) || len(a.Txids) != len(pending)+len(confirmed) {
			t.Fatalf("%s: %d txs, %d unconfirmed, %d listed; want %d, %d", addr, a.Txs, a.UnconfirmedTxs, len(a.Txids), len(confirmed), len(pending))
		}
		head := slices.Clone(a.Txids[:len(pending)])
		slices.Sort(head)
		slices.Sort(pending)
		if !slices.Equal(head, pending) || !slices.Equal(a.Txids[len(pending):], confirmed) {
			t.Fatalf("%s: txids %v\nwant %v (any order) then %v", addr, a.Txids, pending, confirmed)
		}
	}
	if !negative {
		t.Fatal("fixture: no pending tx spends a confirmed output")
	}
}

// Only the first page lists pending txs; a to-height or a filter leaves
// them out of the list and of the counts. Rendered, they come first and
// unconfirmed.
func TestMempoolAddressPagesAndFilters(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := newService(f)
	ctx := context.Background()
	addr := f.DemoAddress
	confirmed := f.Ledger.Addresses[addr].Txids
	payment := f.PendingPayment.TxHash().String()
	var spends, pays []string
	for _, txid := range confirmed {
		if len(f.Touches(addr, txid).Inputs) > 0 {
			spends = append(spends, txid)
		}
		if len(f.Touches(addr, txid).Outputs) > 0 {
			pays = append(pays, txid)
		}
	}
	for _, tc := range []struct {
		name        string
		q           api.AddressQuery
		want        []string
		unconfirmed int
	}{
		{"first page", api.AddressQuery{PageSize: 1, Filter: api.NoFilter}, []string{payment, confirmed[0]}, 1},
		{"second page", api.AddressQuery{Page: 2, PageSize: 1, Filter: api.NoFilter}, []string{confirmed[1]}, 1},
		{"to-height", api.AddressQuery{ToHeight: uint32(f.TipHeight()), Filter: api.NoFilter}, confirmed, 0},
		{"inputs only", api.AddressQuery{Filter: api.ParseFilter("inputs")}, spends, 0},
		{"outputs only", api.AddressQuery{Filter: api.ParseFilter("outputs")}, append([]string{payment}, pays...), 1},
	} {
		tc.q.Details = api.DetailsTxids
		a, err := svc.Address(ctx, addr, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Txids, tc.want) || a.UnconfirmedTxs != tc.unconfirmed {
			t.Errorf("%s: %v (%d unconfirmed)\nwant %v (%d)", tc.name, a.Txids, a.UnconfirmedTxs, tc.want, tc.unconfirmed)
		}
	}
	for _, d := range []api.Details{api.DetailsTxsLight, api.DetailsTxs} {
		a, err := svc.Address(ctx, addr, api.AddressQuery{Details: d, Filter: api.NoFilter})
		if err != nil {
			t.Fatal(err)
		}
		p := a.Transactions[0]
		if p.Txid != payment || p.BlockHeight != -1 || p.Confirmations != 0 || p.BlockTime == 0 {
			t.Fatalf("details %d: first tx %+v, want the pending payment", d, p)
		}
		if !slices.ContainsFunc(p.Vout, func(v api.Vout) bool {
			return v.IsOwn && v.Value.String() == strconv.FormatInt(f.PendingPaymentValue, 10)
		}) {
			t.Errorf("details %d: the pending payment's own output is not marked: %+v", d, p.Vout)
		}
	}
}

// An address seen only in the mempool; a pending spend of a confirmed
// output hides it from the UTXOs unless only confirmed ones are asked for.
func TestMempoolUnusedAddressAndUtxos(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := newService(f)
	ctx := context.Background()
	child := f.PendingChild.TxHash().String()
	value := f.PendingChild.TxOut[0].Value
	a, err := svc.Address(ctx, f.UnusedAddress, api.AddressQuery{Details: api.DetailsTxids, Filter: api.NoFilter})
	if err != nil {
		t.Fatal(err)
	}
	if a.Txs != 0 || a.UnconfirmedTxs != 1 || !slices.Equal(a.Txids, []string{child}) {
		t.Fatalf("unused address: %+v", a)
	}
	wantAmount(t, "balance", a.Balance, 0)
	wantAmount(t, "unconfirmed balance", a.UnconfirmedBalance, value)
	us, err := svc.Utxos(ctx, f.UnusedAddress, false, 0)
	if err != nil || len(us) != 1 || us[0].Txid != child || us[0].Vout != 0 || us[0].Height != 0 || us[0].Confirmations != 0 {
		t.Fatalf("pending utxo: %+v %v", us, err)
	}
	if us, err := svc.Utxos(ctx, f.UnusedAddress, true, 0); err != nil || us == nil || len(us) != 0 {
		t.Fatalf("confirmed only: %+v %v", us, err)
	}

	// PendingPayment spends confirmed outputs; PendingChild spends its
	// change before it confirms.
	spent := map[wire.OutPoint]bool{}
	for _, tx := range f.Pending {
		for _, in := range tx.TxIn {
			spent[in.PreviousOutPoint] = true
		}
	}
	prevs, err := f.Gen.Prevouts(f.PendingPayment)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prevs {
		addr := f.Address(p.PkScript)
		all, err := svc.Utxos(ctx, addr, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		unspent, err := svc.Utxos(ctx, addr, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		has := func(us []api.Utxo, op wire.OutPoint) bool {
			return slices.ContainsFunc(us, func(u api.Utxo) bool { return u.Txid == op.Hash.String() && u.Vout == op.Index })
		}
		if !has(all, p.OutPoint) || has(unspent, p.OutPoint) {
			t.Fatalf("%s: the output %v a pending tx spends: listed %v confirmed-only, %v otherwise", addr, p.OutPoint, has(all, p.OutPoint), has(unspent, p.OutPoint))
		}
		for _, u := range unspent {
			if h, _ := chainhashOf(u.Txid); spent[wire.OutPoint{Hash: h, Index: u.Vout}] {
				t.Errorf("%s: utxo %s:%d is spent by a pending tx", addr, u.Txid, u.Vout)
			}
		}
	}
}

// Pending txs as accounts see them: counts, balance, first page, UTXOs.
func TestMempoolAccounts(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := newService(f)
	ctx := context.Background()
	for i, l := range f.AccountLedgers {
		pending, delta, err := l.Pending(f.Gen, f.Pending)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) != 1 || (i%2 == 1) != (delta < 0) {
			t.Fatalf("fixture: account %d has pending %v worth %d", i, pending, delta)
		}
		form := f.Accounts[i].Descriptor(true)
		a, err := svc.Capabilities().Accounts.Account(ctx, form, accountQuery(api.DetailsTxids))
		if err != nil {
			t.Fatal(err)
		}
		wantAccountSums(t, form, a, l)
		wantAmount(t, form+" unconfirmed", a.UnconfirmedBalance, delta)
		if a.UnconfirmedTxs != 1 || !slices.Equal(a.Txids, append(pending, l.Txids...)) {
			t.Fatalf("%s: %d unconfirmed, txids %v", form, a.UnconfirmedTxs, a.Txids)
		}
		q := accountQuery(api.DetailsTxids)
		q.Page, q.PageSize = 2, 2
		if a, err := svc.Capabilities().Accounts.Account(ctx, form, q); err != nil || !slices.Equal(a.Txids, l.Txids[2:4]) {
			t.Fatalf("%s page 2: %v %v", form, a.Txids, err)
		}
		us, err := svc.Utxos(ctx, form, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, u := range us {
			v, _ := strconv.ParseInt(u.Value.String(), 10, 64)
			sum += v
		}
		if sum != l.Balance+delta || us[0].Height != 0 || us[0].Txid != pending[0] || us[0].Path == "" {
			t.Fatalf("%s: utxos worth %d, want %d, pending first: %+v", form, sum, l.Balance+delta, us[0])
		}
		confirmed, err := svc.Utxos(ctx, form, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantUtxos(t, f, form+" confirmed only", confirmed, l.Utxos)
	}
}

// Pending txs: the tx answer, the explorer's list and search, the status.
func TestMempoolTxListAndStatus(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := newService(f)
	ctx := context.Background()
	child := f.PendingChild.TxHash().String()
	tx, err := svc.Tx(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	parentChange := f.PendingPayment.TxOut[f.PendingChild.TxIn[0].PreviousOutPoint.Index].Value
	if tx.BlockHeight != -1 || tx.Confirmations != 0 || tx.BlockTime < time.Now().Add(-time.Hour).Unix() || !tx.Rbf {
		t.Fatalf("pending tx: %+v", tx)
	}
	wantAmount(t, "vin from a pending parent", tx.Vin[0].Value, parentChange)
	wantAmount(t, "fees", tx.Fees, parentChange-f.PendingChild.TxOut[0].Value-sumOuts(f.PendingChild.TxOut[1:]))

	list, err := svc.MempoolTxs(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, m := range list.Txs {
		got = append(got, m.Txid)
	}
	for _, p := range f.Pending {
		want = append(want, p.TxHash().String())
	}
	slices.Sort(got)
	slices.Sort(want)
	if list.Size != len(f.Pending) || !slices.Equal(got, want) {
		t.Fatalf("mempool list: size %d, %v\nwant %v", list.Size, got, want)
	}
	if r, err := svc.Search(ctx, child); err != nil || r.Kind != api.SearchTx {
		t.Fatalf("search a pending tx: %+v %v", r, err)
	}
	st, err := svc.Status(ctx)
	if err != nil || !st.Blockbook.InSyncMempool || st.Blockbook.MempoolSize != len(f.Pending) || st.Blockbook.BestHeight != uint32(f.TipHeight()) {
		t.Fatalf("status: %+v %v", st.Blockbook, err)
	}
}

func sumOuts(outs []*wire.TxOut) int64 {
	var s int64
	for _, o := range outs {
		s += o.Value
	}
	return s
}

// Mempool filters hold the taproot scripts each pending tx pays to or
// spends from.
func TestMempoolFilters(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := newService(f)
	ctx := context.Background()
	p := apitest.MempoolFilters
	r, err := svc.MempoolFilters(ctx, p.Scripts, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.P != p.P || r.M != 1<<p.P || r.ZeroedKey != p.ZeroedKey {
		t.Fatalf("parameters %+v", r)
	}
	var key [gcs.KeySize]byte // zeroed
	withTaproot := 0
	for _, tx := range f.Pending {
		prevs, err := f.Gen.Prevouts(tx, f.Pending...)
		if err != nil {
			t.Fatal(err)
		}
		scripts := map[string]bool{}
		for _, pv := range prevs {
			if apitest.IsTaproot(pv.PkScript) {
				scripts[string(pv.PkScript)] = true
			}
		}
		for _, o := range tx.TxOut {
			if apitest.IsTaproot(o.PkScript) {
				scripts[string(o.PkScript)] = true
			}
		}
		entry, ok := r.Entries[tx.TxHash().String()]
		if ok != (len(scripts) > 0) {
			t.Fatalf("tx %s with %d taproot scripts: entry %q", tx.TxHash(), len(scripts), entry)
		}
		if !ok {
			continue
		}
		withTaproot++
		raw, err := hex.DecodeString(entry)
		if err != nil {
			t.Fatal(err)
		}
		fl, err := gcs.FromNBytes(p.P, 1<<p.P, raw)
		if err != nil || fl.N() != uint32(len(scripts)) {
			t.Fatalf("tx %s: filter of %v scripts: %v", tx.TxHash(), fl.N(), err)
		}
		for s := range scripts {
			if ok, err := fl.Match(key, []byte(s)); !ok || err != nil {
				t.Fatalf("tx %s: filter misses %x", tx.TxHash(), s)
			}
		}
	}
	if withTaproot == 0 || withTaproot == len(f.Pending) || len(r.Entries) != withTaproot {
		t.Fatalf("fixture: %d of %d pending txs have taproot scripts, %d entries", withTaproot, len(f.Pending), len(r.Entries))
	}
	if r, err := svc.MempoolFilters(ctx, p.Scripts, time.Now().Add(time.Hour).Unix(), 0); err != nil || len(r.Entries) != 0 {
		t.Fatalf("from the future: %+v %v", r, err)
	}
	_, err = svc.MempoolFilters(ctx, "taproot", 0, 0)
	wantUserError(t, err, "Unsupported script filter taproot")
	off := newService(f, func(c *api.Config) { c.MempoolFilters = api.Config{}.MempoolFilters })
	_, err = off.MempoolFilters(ctx, p.Scripts, 0, 0)
	wantUserError(t, err, "Mempool filters are not enabled")
}
