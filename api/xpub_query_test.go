package api_test

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// accountForms are the strings naming account i: its output descriptor
// with and without checksum and, except for BIP86 (whose tpub would read
// as BIP44), its SLIP-132 extended key.
func accountForms(f *apitest.Fixture, i int) []string {
	a := f.Accounts[i]
	forms := []string{a.Descriptor(true), a.Descriptor(false)}
	if a.Purpose != chaingen.BIP86 {
		forms = append(forms, a.Xpub())
	}
	return forms
}

func accountQuery(d api.Details) api.AddressQuery {
	return api.AddressQuery{Details: d, Filter: api.NoFilter}
}

// wantAccountSums checks the sums of an account answer against its ledger.
func wantAccountSums(t *testing.T, what string, a *api.Address, l *chaingen.AccountLedger) {
	t.Helper()
	wantAmount(t, what+" balance", a.Balance, l.Balance)
	wantAmount(t, what+" totalReceived", a.TotalReceived, l.Received)
	wantAmount(t, what+" totalSent", a.TotalSent, l.Sent)
	if a.Txs != len(l.Txids) || a.AddrTxCount != l.AddrTxCount || a.UsedTokens != l.Used() {
		t.Errorf("%s: %d txs, %d address txs, %d used; want %d, %d, %d", what, a.Txs, a.AddrTxCount, a.UsedTokens,
			len(l.Txids), l.AddrTxCount, l.Used())
	}
}

// Each account type, in each form: sums, txids and the order of txs.
func TestAccountMatchesLedger(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	for i, l := range f.AccountLedgers {
		if len(l.Txids) < 8 || l.Used() < 5 {
			t.Fatalf("fixture: account %d has %d txs, %d used addresses", i, len(l.Txids), l.Used())
		}
		for _, form := range accountForms(f, i) {
			basic, err := svc.Capabilities().Accounts.Account(ctx, form, accountQuery(api.DetailsBasic))
			if err != nil {
				t.Fatalf("%s: %v", form, err)
			}
			if basic.Address != form || basic.Tokens != nil || basic.Txids != nil || basic.UnconfirmedTxs != 0 {
				t.Fatalf("%s basic: %+v", form, basic)
			}
			wantAccountSums(t, form, basic, l)
			a, err := svc.Capabilities().Accounts.Account(ctx, form, accountQuery(api.DetailsTxids))
			if err != nil {
				t.Fatal(err)
			}
			wantAccountSums(t, form, a, l)
			if !slices.Equal(a.Txids, l.Txids) {
				t.Fatalf("%s: txids %v\nwant %v", form, a.Txids, l.Txids)
			}
			wantPaging(t, form, a.Paging, 1, 1, 1000)
		}
	}
}

// tokens selects the derived addresses listed; tokenBalances adds their
// sums.
func TestAccountTokens(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	l := f.AccountLedgers[2]
	form := f.Accounts[2].Xpub()
	for _, tc := range []struct {
		tokens   api.Tokens
		details  api.Details
		keep     func(chaingen.AccountAddress) bool
		balances bool
	}{
		{api.TokensNonzero, api.DetailsTokens, func(a chaingen.AccountAddress) bool { return a.Balance > 0 }, false},
		{api.TokensUsed, api.DetailsTokens, func(a chaingen.AccountAddress) bool { return a.Txs > 0 }, false},
		{api.TokensUsed, api.DetailsTokenBalances, func(a chaingen.AccountAddress) bool { return a.Txs > 0 }, true},
		// Details beyond tokenBalances (txids here) include the sums too.
		{api.TokensDerived, api.DetailsTxids, func(chaingen.AccountAddress) bool { return true }, true},
	} {
		q := accountQuery(tc.details)
		q.Tokens = tc.tokens
		a, err := svc.Capabilities().Accounts.Account(context.Background(), form, q)
		if err != nil {
			t.Fatal(err)
		}
		var want []chaingen.AccountAddress
		for _, c := range l.Chains {
			for _, ad := range c {
				if tc.keep(ad) {
					want = append(want, ad)
				}
			}
		}
		if len(a.Tokens) != len(want) {
			t.Fatalf("tokens %d details %d: %d tokens, want %d", tc.tokens, tc.details, len(a.Tokens), len(want))
		}
		for j, tok := range a.Tokens {
			w := want[j]
			if tok.Type != "XPUBAddress" || tok.Name != w.Address || tok.Path != w.Path || tok.Transfers != w.Txs || tok.Decimals != 8 {
				t.Errorf("token %d: %+v, want %+v", j, tok, w)
			}
			if !tc.balances || w.Txs == 0 {
				if tok.Balance != nil || tok.TotalReceived != nil || tok.TotalSent != nil {
					t.Errorf("token %s: balances without tokenBalances details", tok.Name)
				}
				continue
			}
			wantAmount(t, w.Path+" balance", tok.Balance, w.Balance)
			wantAmount(t, w.Path+" received", tok.TotalReceived, w.Received)
			wantAmount(t, w.Path+" sent", tok.TotalSent, w.Sent)
		}
	}
}

// The account's tx list is paged and filtered by height and direction.
func TestAccountTxsPagingAndFilters(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	i := 1
	l := f.AccountLedgers[i]
	form := f.Accounts[i].Descriptor(true)
	n := len(l.Txids)
	for _, tc := range []struct{ page, size, wantPage, wantSize int }{
		{1, 3, 1, 3}, {2, 3, 2, 3}, {0, 3, 1, 3}, {99, 3, pages(n, 3), 3}, {4, 1, 4, 1}, {1, 5000, 1, 1000},
	} {
		q := accountQuery(api.DetailsTxids)
		q.Page, q.PageSize = tc.page, tc.size
		a, err := svc.Capabilities().Accounts.Account(ctx, form, q)
		if err != nil {
			t.Fatal(err)
		}
		if want := pageOf(l.Txids, tc.wantPage, tc.wantSize); !slices.Equal(a.Txids, want) {
			t.Errorf("page %d of %d: %v\nwant %v", tc.page, tc.size, a.Txids, want)
		}
		wantPaging(t, "account", a.Paging, tc.wantPage, pages(n, tc.wantSize), tc.wantSize)
	}
	top := uint32(l.Txs[l.Txids[0]].Height)
	var fromTop, inputs, outputs []string
	for _, txid := range l.Txids {
		tx := l.Txs[txid]
		if uint32(tx.Height) == top {
			fromTop = append(fromTop, txid)
		}
		if tx.Inputs {
			inputs = append(inputs, txid)
		}
		if tx.Outputs {
			outputs = append(outputs, txid)
		}
	}
	for _, tc := range []struct {
		name string
		q    api.AddressQuery
		want []string
	}{
		{"from the newest block", api.AddressQuery{FromHeight: top, Filter: api.NoFilter}, fromTop},
		{"to below every tx", api.AddressQuery{ToHeight: 1, Filter: api.NoFilter}, nil},
		{"inputs", api.AddressQuery{Filter: api.ParseFilter("inputs")}, inputs},
		{"outputs", api.AddressQuery{Filter: api.ParseFilter("outputs")}, outputs},
	} {
		tc.q.Details = api.DetailsTxids
		a, err := svc.Capabilities().Accounts.Account(ctx, form, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Txids, tc.want) || a.Txs != n {
			t.Errorf("%s: %v (%d txs)\nwant %v", tc.name, a.Txids, a.Txs, tc.want)
		}
	}
}

// Rendered account txs mark the account's own inputs and outputs, which
// add up to what the tx moved for the account.
func TestAccountTxsMarkOwn(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	i := 1
	l := f.AccountLedgers[i]
	n := len(l.Txids)
	own := map[string]bool{}
	for _, c := range l.Chains {
		for _, ad := range c {
			own[ad.Address] = true
		}
	}
	a, err := svc.Capabilities().Accounts.Account(context.Background(), f.Accounts[i].Descriptor(true), accountQuery(api.DetailsTxs))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Transactions) != n {
		t.Fatalf("%d txs, want %d", len(a.Transactions), n)
	}
	for j, tx := range a.Transactions {
		lt := l.Txs[l.Txids[j]]
		var received, sent int64
		for _, vin := range tx.Vin {
			if vin.IsOwn != (len(vin.Addresses) == 1 && own[vin.Addresses[0]]) {
				t.Errorf("tx %s: vin isOwn %v for %v", tx.Txid, vin.IsOwn, vin.Addresses)
			}
			if vin.IsOwn {
				sent += (*big.Int)(vin.Value).Int64()
			}
		}
		for _, vo := range tx.Vout {
			if vo.IsOwn != (len(vo.Addresses) == 1 && own[vo.Addresses[0]]) {
				t.Errorf("tx %s: vout isOwn %v for %v", tx.Txid, vo.IsOwn, vo.Addresses)
			}
			if vo.IsOwn {
				received += (*big.Int)(vo.Value).Int64()
			}
		}
		if tx.Txid != l.Txids[j] || received != lt.Received || sent != lt.Sent {
			t.Errorf("tx %d %s: own outputs %d, inputs %d; want %s %+v", j, tx.Txid, received, sent, l.Txids[j], lt)
		}
	}
}

// A wider gap limit finds the receive address 44, which 20 unused ones
// hide from the default gap limit. The cache keeps one account whatever the
// gap: after a wide query, a narrower one reads a prefix of its addresses
// and must answer exactly as a fresh narrow scan would.
func TestAccountGap(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	for i := range f.Accounts {
		for _, gap := range []int{0, 20, 21, 20, 3, 60, 21, 1, 0} {
			l := f.AccountLedgers[i]
			if gap != 0 && gap != 20 {
				l = mustLedger(t, f, i, gap)
			}
			q := accountQuery(api.DetailsTokenBalances)
			q.Tokens, q.Gap = api.TokensDerived, gap
			a, err := svc.Capabilities().Accounts.Account(context.Background(), f.Accounts[i].Descriptor(false), q)
			if err != nil {
				t.Fatal(err)
			}
			wantAccountSums(t, "gap", a, l)
			if derived := len(l.Chains[0]) + len(l.Chains[1]); len(a.Tokens) != derived {
				t.Errorf("account %d gap %d: %d derived addresses, want %d", i, gap, len(a.Tokens), derived)
			}
		}
		if g20, g21 := f.AccountLedgers[i], mustLedger(t, f, i, 21); g21.Balance == g20.Balance {
			t.Fatalf("fixture: account %d's gap does not hide anything", i)
		}
	}
	// The configured maximum caps a requested gap silently.
	capped := newService(f, withLimits(api.Limits{MaxXpubGap: 20}))
	q := accountQuery(api.DetailsBasic)
	q.Gap = 1000
	a, err := capped.Capabilities().Accounts.Account(context.Background(), f.Accounts[0].Descriptor(true), q)
	if err != nil {
		t.Fatal(err)
	}
	wantAccountSums(t, "capped gap", a, f.AccountLedgers[0])
}

func mustLedger(t *testing.T, f *apitest.Fixture, i, gap int) *chaingen.AccountLedger {
	t.Helper()
	l, err := f.AccountLedger(i, gap)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Strings that are no account at all are told apart from malformed ones;
// both are user errors.
func TestAccountErrors(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	for _, s := range []string{"", "hello", f.DemoAddress} {
		_, err := svc.Capabilities().Accounts.Account(ctx, s, accountQuery(api.DetailsBasic))
		wantUserError(t, err, "Invalid xpub or descriptor")
		if !api.IsNotAccount(err) {
			t.Errorf("%q: %v should tell it is no account", s, err)
		}
	}
	mainnet, err := chaingen.NewHDAccount(&chaincfg.MainNetParams, chaingen.HDSeed("apitest"), chaingen.BIP84, 0)
	if err != nil {
		t.Fatal(err)
	}
	xpub := f.Accounts[0].Xpub()
	desc := f.Accounts[2].Descriptor(true)
	for _, s := range []string{
		xpub[:len(xpub)-1] + flip(xpub[len(xpub)-1]), // bad base58 checksum
		desc[:len(desc)-1] + flip(desc[len(desc)-1]), // bad descriptor checksum
		mainnet.Xpub(),            // another network's key
		"wpkh(" + xpub,            // unbalanced
		"wpkh(" + xpub + "/0/*')", // hardened derivation from a public key
		"sh(multi(1," + xpub + "))",
	} {
		_, err := svc.Capabilities().Accounts.Account(ctx, s, accountQuery(api.DetailsBasic))
		wantUserError(t, err, "Invalid xpub or descriptor")
		if api.IsNotAccount(err) {
			t.Errorf("%q: %v is a malformed account, not a non-account", s, err)
		}
		_, err = svc.Utxos(ctx, s, false, 0)
		wantUserError(t, err, "Invalid xpub or descriptor")
	}
	// A chain without accounts refuses them.
	noXpub := *f.Backend
	noXpub.Xpub = nil
	caps := api.NewUtxoService(f.DB, &noXpub, nil, api.Config{Log: apitest.Quiet()}).Capabilities()
	if caps.Accounts != nil {
		t.Fatal("a chain without an xpub parser offers accounts")
	}
	wantUserError(t, caps.NotSupported(api.CapAccounts), "XPUB functionality is not supported")
}

// flip changes a base58 / bech32 / checksum character to another valid one.
func flip(c byte) string {
	if strings.IndexByte("abcdefgh", c) >= 0 || c == 'q' {
		return "z"
	}
	return "q"
}
