package api_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// mustAddress returns a chaingen wallet address.
func mustAddress(t *testing.T, f *apitest.Fixture, kind chaingen.ScriptKind, index uint64) string {
	t.Helper()
	a, err := f.Gen.Address(kind, index)
	if err != nil || a == "" {
		t.Fatalf("address %v/%d: %q %v", kind, index, a, err)
	}
	return a
}

// Every address of the chain: balance, totals, tx count and txid list
// (newest first) as the ledger has them, and no unconfirmed data without a
// mempool.
func TestAddressMatchesLedger(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	if len(f.Ledger.Addresses) < 100 {
		t.Fatalf("fixture: only %d addresses", len(f.Ledger.Addresses))
	}
	for addr, l := range f.Ledger.Addresses {
		a, err := svc.Address(ctx, addr, api.AddressQuery{Details: api.DetailsTxids, Filter: api.NoFilter})
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if a.Address != addr || a.Txs != l.TxCount() || a.UnconfirmedTxs != 0 {
			t.Fatalf("%s: address %q, %d txs, %d unconfirmed; want %d txs", addr, a.Address, a.Txs, a.UnconfirmedTxs, l.TxCount())
		}
		wantAmount(t, addr+" balance", a.Balance, l.Balance)
		wantAmount(t, addr+" totalReceived", a.TotalReceived, l.Received)
		wantAmount(t, addr+" totalSent", a.TotalSent, l.Sent)
		wantAmount(t, addr+" unconfirmedBalance", a.UnconfirmedBalance, 0)
		if !slices.Equal(a.Txids, l.Txids) {
			t.Fatalf("%s: txids %v\nwant %v", addr, a.Txids, l.Txids)
		}
		wantPaging(t, addr, a.Paging, 1, 1, 1000)
	}
}

// Basic details answer the sums only; bech32 addresses come back in their
// canonical lower case.
func TestAddressDetailsLevels(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	addr := f.DemoAddress
	l := f.Ledger.Addresses[addr]
	for _, d := range []api.Details{api.DetailsBasic, api.DetailsTokens, api.DetailsTokenBalances} {
		a, err := svc.Address(ctx, strings.ToUpper(addr), api.AddressQuery{Details: d, Filter: api.NoFilter})
		if err != nil {
			t.Fatal(err)
		}
		if a.Address != addr || a.Txids != nil || a.Transactions != nil || a.Paging != (api.Paging{}) || a.Txs != l.TxCount() {
			t.Fatalf("details %d: %+v", d, a)
		}
		wantAmount(t, "balance", a.Balance, l.Balance)
	}
	for _, d := range []api.Details{api.DetailsTxsLight, api.DetailsTxs} {
		a, err := svc.Address(ctx, addr, api.AddressQuery{Details: d, Filter: api.NoFilter})
		if err != nil {
			t.Fatal(err)
		}
		if a.Txids != nil || len(a.Transactions) != len(l.Txids) {
			t.Fatalf("details %d: %d txids, %d txs, want %d txs", d, len(a.Txids), len(a.Transactions), len(l.Txids))
		}
		for i, tx := range a.Transactions {
			checkOwnTx(t, f, addr, l.Txids[i], tx, d == api.DetailsTxs)
		}
	}
}

// checkOwnTx checks a tx of an address's list against the chain: its
// values, and isOwn exactly on the address's inputs and outputs.
func checkOwnTx(t *testing.T, f *apitest.Fixture, addr, txid string, tx *api.Tx, full bool) {
	t.Helper()
	ref := f.Tx(txid)
	if tx.Txid != txid || ref == nil || tx.BlockHeight != int64(ref.Height) || len(tx.Vin) != len(ref.Tx.TxIn) || len(tx.Vout) != len(ref.Tx.TxOut) {
		t.Fatalf("%s: tx %+v, want %s at height %d", addr, tx, txid, ref.Height)
	}
	if full != (tx.Hex != "") {
		t.Errorf("%s: hex %q with full details %v", txid, tx.Hex, full)
	}
	touch := f.Touches(addr, txid)
	for i, in := range tx.Vin {
		if in.IsOwn != slices.Contains(touch.Inputs, i) {
			t.Errorf("%s vin %d: isOwn %v, inputs of %s: %v", txid, i, in.IsOwn, addr, touch.Inputs)
		}
		if ref.Prevouts != nil {
			wantAmount(t, txid+" vin value", in.Value, ref.Prevouts[i].Value)
		}
	}
	for i, out := range tx.Vout {
		if out.IsOwn != slices.Contains(touch.Outputs, i) {
			t.Errorf("%s vout %d: isOwn %v, outputs of %s: %v", txid, i, out.IsOwn, addr, touch.Outputs)
		}
		wantAmount(t, txid+" vout value", out.Value, ref.Tx.TxOut[i].Value)
	}
	if fee := f.Ledger.Txs[txid].Fee; ref.Prevouts != nil {
		wantAmount(t, txid+" fees", tx.Fees, fee)
	}
}

// Paging bounds over the miner's address, which has the longest history.
func TestAddressPaging(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	ctx := context.Background()
	addr := mustAddress(t, f, chaingen.P2PKH, chaingen.MinerIndex)
	all := f.Ledger.Addresses[addr].Txids
	n := len(all)
	if n < 40 {
		t.Fatalf("fixture: the miner has %d txs", n)
	}
	for _, tc := range []struct {
		name           string
		limits         api.Limits
		page, size     int
		wantPage, want int // want: the page size used
	}{
		{"page 0 is the first", api.Limits{}, 0, 10, 1, 10},
		{"negative page is the first", api.Limits{}, -3, 10, 1, 10},
		{"second page", api.Limits{}, 2, 10, 2, 10},
		{"past the last page is the last", api.Limits{}, 1000, 10, pages(n, 10), 10},
		{"page size 1", api.Limits{}, 3, 1, 3, 1},
		{"page size over the limit is the limit", api.Limits{}, 1, 5000, 1, 1000},
		{"page size 0 is the limit", api.Limits{}, 1, 0, 1, 1000},
		{"configured page size limit", api.Limits{MaxPageSize: 7}, 2, 50, 2, 7},
		// Deep pages are clamped so that they start within MaxTxOffset.
		{"offset clamped", api.Limits{MaxTxOffset: 12}, 10, 5, 3, 5},
	} {
		svc := newService(f, withLimits(tc.limits))
		a, err := svc.Address(ctx, addr, api.AddressQuery{Page: tc.page, PageSize: tc.size, Details: api.DetailsTxids, Filter: api.NoFilter})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		wantPaging(t, tc.name, a.Paging, tc.wantPage, pages(n, tc.want), tc.want)
		if want := pageOf(all, tc.wantPage, tc.want); !slices.Equal(a.Txids, want) {
			t.Errorf("%s: txids %v\nwant %v", tc.name, a.Txids, want)
		}
		if a.Txs != n {
			t.Errorf("%s: txs %d, want %d whatever the page", tc.name, a.Txs, n)
		}
	}
}

// from and to select txs by block height (inclusive); filters select them
// by where the address appears. Both recount the pages.
func TestAddressHeightRangeAndFilters(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	addr := mustAddress(t, f, chaingen.P2WPKH, 2) // chaingen's change address: paid and spent often
	all := f.Ledger.Addresses[addr].Txids
	height := func(txid string) uint32 { return uint32(f.Ledger.Txs[txid].Height) }
	lo, hi := height(all[len(all)-1]), height(all[0])
	if lo == hi {
		t.Fatalf("fixture: %s has txs in one block only", addr)
	}
	mid := (lo + hi) / 2
	inRange := func(from, to uint32) []string {
		var out []string
		for _, txid := range all {
			if h := height(txid); h >= from && (to == 0 || h <= to) {
				out = append(out, txid)
			}
		}
		return out
	}
	where := func(keep func(apitest.Touch) bool) []string {
		var out []string
		for _, txid := range all {
			if keep(f.Touches(addr, txid)) {
				out = append(out, txid)
			}
		}
		return out
	}
	inputs := where(func(t apitest.Touch) bool { return len(t.Inputs) > 0 })
	outputs := where(func(t apitest.Touch) bool { return len(t.Outputs) > 0 })
	vout0 := where(func(t apitest.Touch) bool { return slices.Contains(t.Outputs, 0) })
	if len(inputs) == 0 || len(outputs) == 0 || len(inputs) == len(all) || len(outputs) == len(all) {
		t.Fatalf("fixture: %s has %d txs, %d spending, %d paying", addr, len(all), len(inputs), len(outputs))
	}
	for _, tc := range []struct {
		name     string
		q        api.AddressQuery
		want     []string
		pageSize int
	}{
		{"from", api.AddressQuery{FromHeight: mid, Filter: api.NoFilter}, inRange(mid, 0), 1000},
		{"to", api.AddressQuery{ToHeight: mid, Filter: api.NoFilter}, inRange(0, mid), 1000},
		{"from-to one block", api.AddressQuery{FromHeight: hi, ToHeight: hi, Filter: api.NoFilter}, inRange(hi, hi), 1000},
		{"from > to", api.AddressQuery{FromHeight: hi, ToHeight: lo, Filter: api.NoFilter}, nil, 1000},
		{"beyond the tip", api.AddressQuery{FromHeight: uint32(f.TipHeight() + 1), Filter: api.NoFilter}, nil, 1000},
		{"inputs", api.AddressQuery{Filter: api.ParseFilter("inputs")}, inputs, 1000},
		{"outputs", api.AddressQuery{Filter: api.ParseFilter("outputs")}, outputs, 1000},
		{"vout 0", api.AddressQuery{Filter: api.ParseFilter("0")}, vout0, 1000},
		{"outputs, second page of 2", api.AddressQuery{Filter: api.ParseFilter("outputs"), Page: 2, PageSize: 2}, pageOf(outputs, 2, 2), 2},
	} {
		tc.q.Details = api.DetailsTxids
		a, err := svc.Address(ctx, addr, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(a.Txids, tc.want) {
			t.Errorf("%s: txids %v\nwant %v", tc.name, a.Txids, tc.want)
		}
		total := len(tc.want)
		if tc.name == "outputs, second page of 2" {
			total = len(outputs)
		}
		wantPaging(t, tc.name, a.Paging, max(tc.q.Page, 1), pages(total, tc.pageSize), tc.pageSize)
		if a.Txs != len(all) {
			t.Errorf("%s: txs %d: the total counts every tx", tc.name, a.Txs)
		}
	}
}

// A valid address the index never saw answers zeros, not an error.
func TestAddressWithoutTxs(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	for _, d := range []api.Details{api.DetailsBasic, api.DetailsTxids, api.DetailsTxs} {
		a, err := svc.Address(context.Background(), f.UnusedAddress, api.AddressQuery{Details: d, Page: 3, Filter: api.NoFilter})
		if err != nil {
			t.Fatal(err)
		}
		// Empty lists are left out of the JSON answer (omitempty).
		if a.Address != f.UnusedAddress || a.Txs != 0 || len(a.Txids) != 0 || len(a.Transactions) != 0 {
			t.Fatalf("details %d: %+v", d, a)
		}
		if d >= api.DetailsTxids { // page 3 of nothing is page 1 of 1, as Blockbook's
			wantPaging(t, "no txs", a.Paging, 1, 1, 1000)
		}
		for what, v := range map[string]*api.Amount{"balance": a.Balance, "received": a.TotalReceived, "sent": a.TotalSent, "unconfirmed": a.UnconfirmedBalance} {
			wantAmount(t, what, v, 0)
		}
	}
}

// Malformed addresses and other networks' addresses are user errors.
func TestAddressMalformed(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	for _, addr := range []string{
		"", "x", "not-an-address", strings.Repeat("1", 200),
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",         // mainnet P2PKH
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", // mainnet P2WPKH
		"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", // testnet P2WPKH (regtest is bcrt)
		f.DemoAddress[:len(f.DemoAddress)-1] + "q",   // bad checksum
	} {
		_, err := svc.Address(ctx, addr, api.AddressQuery{Details: api.DetailsTxids, Filter: api.NoFilter})
		wantUserError(t, err, "Invalid address")
		_, err = svc.Utxos(ctx, addr, false, 0)
		wantUserError(t, err, "Invalid")
	}
}

// protocols is Ethereum-type only: an address or an account of a
// Bitcoin-type chain asked with it is a user error, as Blockbook's.
func TestProtocolsRefusedOnBitcoin(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	addr := mustAddress(t, f, chaingen.P2WPKH, 0)
	_, err := svc.Address(context.Background(), addr, api.AddressQuery{Protocols: []string{"erc4626"}})
	if e, ok := api.AsUserError(err); !ok || e.Msg != "protocols parameter is not supported on this coin" {
		t.Fatalf("address with protocols: %v", err)
	}
	_, err = svc.Capabilities().Accounts.Account(context.Background(), f.Accounts[0].Xpub(), api.AddressQuery{Protocols: []string{"erc4626"}})
	if e, ok := api.AsUserError(err); !ok || e.Msg != "protocols parameter is not supported on this coin" {
		t.Fatalf("account with protocols: %v", err)
	}
}
