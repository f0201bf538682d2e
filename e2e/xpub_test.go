package e2e

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Accounts against a btcd regtest chain whose txs pay and spend addresses
// derived from a fixed BIP32 seed along BIP44, BIP49, BIP84 and BIP86
// account paths (chaingen.HDScenario), compared with the generator's own
// account ledger: balances, token lists with paths, UTXOs with paths, txs
// once each and in order, pending txs first, balance histories with
// sentToSelf, over REST and the websocket.

// xpubStack is a blockbook synced to the HD scenario chain, with one
// pending tx per account in the mempool.
type xpubStack struct {
	*demoStack
	accts   []*chaingen.HDAccount
	pending []*wire.MsgTx
}

// xpubChain builds the scenario chain: coinbase-only blocks until coins
// mature, then the HD scenario.
func xpubChain(t testing.TB, seed string) (*chaingen.Generator, []*chaingen.HDAccount, []*wire.MsgTx) {
	t.Helper()
	g := chaingen.New(&chaincfg.RegressionNetParams, "xpub")
	if err := g.Extend(125, 0); err != nil {
		t.Fatal(err)
	}
	accts := hdAccounts(t, g, seed)
	pending, err := g.HDScenario(accts)
	if err != nil {
		t.Fatal(err)
	}
	return g, accts, pending
}

// hdAccounts returns account 0 of each purpose for a seed name.
func hdAccounts(t testing.TB, g *chaingen.Generator, seed string) []*chaingen.HDAccount {
	t.Helper()
	var out []*chaingen.HDAccount
	for _, p := range []uint32{chaingen.BIP44, chaingen.BIP49, chaingen.BIP84, chaingen.BIP86} {
		a, err := chaingen.NewHDAccount(g.Params(), chaingen.HDSeed(seed), p, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func startXpubStack(t *testing.T, mod func(*app.Options)) *xpubStack {
	t.Helper()
	g, accts, pending := xpubChain(t, "e2e-xpub")
	st := &xpubStack{demoStack: &demoStack{node: startNode(t), g: g, dataDir: t.TempDir()}, accts: accts, pending: pending}
	submit(t, g, st.node, 1)
	st.cfg = writeConfig(t, st.node, nil)
	st.inst = startInProcess(t, st.cfg, st.dataDir, mod)
	h, hash := g.Tip()
	waitTip(t, st.inst.base, h, hash.String(), st.inst.logs)
	waitMempoolInSync(t, st.inst.base)
	for _, tx := range pending {
		sendTx(t, st.demoStack, tx)
	}
	for _, a := range accts {
		_, delta := st.pendingOf(t, st.ledger(t, a, 20))
		waitAccount(t, st.inst.base, a.Descriptor(true), func(x *api.Address) bool {
			return x.UnconfirmedTxs == 1 && x.UnconfirmedBalance.String() == fmt.Sprint(delta)
		})
	}
	return st
}

// waitAccount polls an account until check accepts it (a failure guard).
func waitAccount(t testing.TB, base, desc string, check func(*api.Address) bool) *api.Address {
	t.Helper()
	var a *api.Address
	waitUntil(t, "account "+desc, func() bool {
		a = &api.Address{}
		getJSON(t, base+"/api/v2/xpub/"+url.PathEscape(desc)+"?details=basic", 200, a)
		return check(a)
	})
	return a
}

// ledger returns the oracle of an account under gap.
func (st *xpubStack) ledger(t testing.TB, a *chaingen.HDAccount, gap int) *chaingen.AccountLedger {
	t.Helper()
	l, err := st.g.AccountLedger(a, gap)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pendingOf returns the pending txids of an account and their balance delta.
func (st *xpubStack) pendingOf(t testing.TB, l *chaingen.AccountLedger) ([]string, int64) {
	t.Helper()
	ids, delta, err := l.Pending(st.g, st.pending)
	if err != nil {
		t.Fatal(err)
	}
	return ids, delta
}

// forms are the ways a client names an account: its SLIP-132 xpub, its
// descriptor with a checksum, and without.
func forms(a *chaingen.HDAccount) map[string]string {
	f := map[string]string{"descriptor": a.Descriptor(true), "descriptor-no-checksum": a.Descriptor(false)}
	if a.Purpose != chaingen.BIP86 {
		f["xpub"] = a.Xpub() // BIP86 has no SLIP-132 version: descriptors only
	}
	return f
}

func TestE2EXpub(t *testing.T) {
	st := startXpubStack(t, nil)
	base := st.inst.base
	for _, a := range st.accts {
		l := st.ledger(t, a, 20)
		for form, desc := range forms(a) {
			t.Run(fmt.Sprintf("BIP%d-%s", a.Purpose, form), func(t *testing.T) {
				checkAccountREST(t, st, base, desc, l)
				checkAccountUtxos(t, st, base, desc, l)
				checkAccountHistory(t, base, desc, l)
			})
		}
		t.Run(fmt.Sprintf("BIP%d-gap", a.Purpose), func(t *testing.T) { checkAccountGap(t, st, base, a) })
	}
	t.Run("url-forms", func(t *testing.T) { checkDescriptorURLForms(t, st, base) })
	t.Run("bad-input", func(t *testing.T) { checkXpubBadInput(t, st, base) })
	t.Run("websocket", func(t *testing.T) { checkAccountsWS(t, st, base) })
	t.Run("goldens", func(t *testing.T) { checkXpubGoldens(t, st, base) })
	t.Run("no-cache", func(t *testing.T) { checkNoCacheSame(t, st, base) })
	// Last, as it changes the chain: the cache follows new blocks.
	t.Run("new-block", func(t *testing.T) { checkAccountNewBlock(t, st, base) })
}

// checkAccountREST compares xpub/{desc} at every details and tokens level,
// paging and height range with the ledger.
func checkAccountREST(t *testing.T, st *xpubStack, base, desc string, l *chaingen.AccountLedger) {
	pendingIDs, delta := st.pendingOf(t, l)
	get := func(query string) *api.Address {
		var a api.Address
		getJSON(t, base+"/api/v2/xpub/"+url.PathEscape(desc)+"?"+query, 200, &a)
		return &a
	}
	basic := get("details=basic")
	if basic.Address != desc || basic.Balance.String() != fmt.Sprint(l.Balance) || basic.TotalReceived.String() != fmt.Sprint(l.Received) ||
		basic.TotalSent.String() != fmt.Sprint(l.Sent) || basic.Txs != len(l.Txids) || basic.AddrTxCount != l.AddrTxCount ||
		basic.UsedTokens != l.Used() || basic.UnconfirmedTxs != len(pendingIDs) || basic.UnconfirmedBalance.String() != fmt.Sprint(delta) ||
		basic.Tokens != nil || basic.Txids != nil || basic.Page != 0 {
		t.Fatalf("basic: %+v\nledger: balance %d received %d sent %d txs %d addrTxCount %d used %d pending %v %d",
			basic, l.Balance, l.Received, l.Sent, len(l.Txids), l.AddrTxCount, l.Used(), pendingIDs, delta)
	}
	// Tokens: every derived address, the used ones, those with a balance.
	for _, c := range []struct {
		query string
		keep  func(chaingen.AccountAddress) bool
	}{
		{"details=tokens&tokens=derived", func(chaingen.AccountAddress) bool { return true }},
		{"details=tokens&tokens=used", func(a chaingen.AccountAddress) bool { return a.Txs > 0 }},
		{"details=tokens", func(a chaingen.AccountAddress) bool { return a.Balance > 0 }},
		{"details=tokenBalances&tokens=used", func(a chaingen.AccountAddress) bool { return a.Txs > 0 }},
		{"details=txids&tokens=nonzero&pageSize=1", func(a chaingen.AccountAddress) bool { return a.Balance > 0 }},
	} {
		got := get(c.query)
		var want []string
		for _, ch := range l.Chains {
			for _, ad := range ch {
				if c.keep(ad) {
					want = append(want, tokenString(ad, !strings.HasPrefix(c.query, "details=tokens&") && c.query != "details=tokens"))
				}
			}
		}
		var have []string
		for _, tk := range got.Tokens {
			have = append(have, fmt.Sprintf("%s %s %s %d %d %s %s %s", tk.Type, tk.Standard, tk.Name, tk.Transfers, tk.Decimals, tk.Path,
				optAmount(tk.Balance), optAmount(tk.TotalReceived)+"/"+optAmount(tk.TotalSent)))
		}
		if !slices.Equal(have, want) {
			t.Fatalf("%s: tokens\n got %q\nwant %q", c.query, have, want)
		}
		if got.UsedTokens != l.Used() || got.Txs != len(l.Txids) {
			t.Fatalf("%s: usedTokens %d txs %d", c.query, got.UsedTokens, got.Txs)
		}
	}
	// Paging: the pending tx first on page 1, then every tx once, newest first.
	const size = 3
	var txids []string
	for page := 1; ; page++ {
		got := get(fmt.Sprintf("details=txids&pageSize=%d&page=%d", size, page))
		ids := got.Txids
		if page == 1 {
			if len(ids) < len(pendingIDs) || !slices.Equal(ids[:len(pendingIDs)], pendingIDs) {
				t.Fatalf("page 1 does not start with the pending txs %v: %v", pendingIDs, ids)
			}
			ids = ids[len(pendingIDs):]
		}
		txids = append(txids, ids...)
		if got.ItemsOnPage != size || got.TotalPages != (len(l.Txids)+size-1)/size || got.Page != page {
			t.Fatalf("page %d: paging %+v", page, got.Paging)
		}
		if page >= got.TotalPages {
			break
		}
	}
	if !slices.Equal(txids, l.Txids) {
		t.Fatalf("txids\n got %v\nwant %v", txids, l.Txids)
	}
	// Full txs: heights, and isOwn on exactly the account's inputs and outputs.
	own := map[string]bool{}
	for _, ch := range l.Chains {
		for _, ad := range ch {
			own[ad.Address] = true
		}
	}
	full := get("details=txs&pageSize=1000")
	if len(full.Transactions) != len(pendingIDs)+len(l.Txids) {
		t.Fatalf("details=txs: %d txs", len(full.Transactions))
	}
	for i, tx := range full.Transactions {
		if i < len(pendingIDs) {
			if tx.Txid != pendingIDs[i] || tx.BlockHeight != -1 {
				t.Fatalf("tx %d: %s at %d, want pending %s", i, tx.Txid, tx.BlockHeight, pendingIDs[i])
			}
		} else if want := l.Txids[i-len(pendingIDs)]; tx.Txid != want || tx.BlockHeight != int64(l.Txs[want].Height) {
			t.Fatalf("tx %d: %s at %d, want %s", i, tx.Txid, tx.BlockHeight, want)
		}
		for _, in := range tx.Vin {
			if in.IsOwn != (len(in.Addresses) == 1 && own[in.Addresses[0]]) {
				t.Fatalf("tx %s input %d: isOwn %v (%v)", tx.Txid, in.N, in.IsOwn, in.Addresses)
			}
		}
		for _, out := range tx.Vout {
			if out.IsOwn != (len(out.Addresses) == 1 && own[out.Addresses[0]]) {
				t.Fatalf("tx %s output %d: isOwn %v (%v)", tx.Txid, out.N, out.IsOwn, out.Addresses)
			}
		}
	}
	light := get("details=txslight&pageSize=2&page=2")
	if len(light.Transactions) != 2 || light.Transactions[0].Txid != l.Txids[2] || light.Transactions[1].Txid != l.Txids[3] {
		t.Fatalf("txslight page 2: %v", light.Transactions)
	}
	checkAccountRanges(t, get, l, pendingIDs)
}

// checkAccountRanges checks from/to heights and the inputs/outputs filter.
func checkAccountRanges(t *testing.T, get func(string) *api.Address, l *chaingen.AccountLedger, pendingIDs []string) {
	tip := l.Txs[l.Txids[0]].Height
	from, to := tip-2, tip-1
	var want, ins, outs []string
	for _, id := range l.Txids {
		if h := l.Txs[id].Height; h >= from && h <= to {
			want = append(want, id)
		}
		if l.Txs[id].Inputs {
			ins = append(ins, id)
		}
		if l.Txs[id].Outputs {
			outs = append(outs, id)
		}
	}
	// A height range lists confirmed txs only; from alone keeps the pending
	// ones out of the list (Blockbook), to excludes the mempool altogether.
	got := get(fmt.Sprintf("details=txids&from=%d&to=%d", from, to))
	if !slices.Equal(got.Txids, want) || got.UnconfirmedTxs != 0 || got.Txs != len(l.Txids) {
		t.Fatalf("from %d to %d: %v (unconfirmed %d, txs %d), want %v", from, to, got.Txids, got.UnconfirmedTxs, got.Txs, want)
	}
	got = get(fmt.Sprintf("details=txids&from=%d", from))
	if slices.ContainsFunc(got.Txids, func(id string) bool { return slices.Contains(pendingIDs, id) }) || got.UnconfirmedTxs != len(pendingIDs) {
		t.Fatalf("from %d: %v, unconfirmed %d", from, got.Txids, got.UnconfirmedTxs)
	}
	for q, w := range map[string][]string{"inputs": ins, "outputs": outs} {
		got := get("details=txids&to=100000&filter=" + q)
		if !slices.Equal(got.Txids, w) {
			t.Fatalf("filter=%s: %v, want %v", q, got.Txids, w)
		}
	}
}

func tokenString(a chaingen.AccountAddress, balances bool) string {
	bal, totals := "-", "-/-"
	if balances && a.Txs > 0 {
		bal, totals = fmt.Sprint(a.Balance), fmt.Sprintf("%d/%d", a.Received, a.Sent)
	}
	return fmt.Sprintf("XPUBAddress XPUBAddress %s %d 8 %s %s %s", a.Address, a.Txs, a.Path, bal, totals) //nolint:dupword // a token's type and standard are both XPUBAddress
}

func optAmount(a *api.Amount) string {
	if a == nil {
		return "-"
	}
	return a.String()
}

// checkAccountGap: a larger gap limit finds receive address 44, which lies
// beyond 20 unused addresses.
func checkAccountGap(t *testing.T, st *xpubStack, base string, a *chaingen.HDAccount) {
	narrow, wide := st.ledger(t, a, 20), st.ledger(t, a, 21)
	for gap, l := range map[int]*chaingen.AccountLedger{20: narrow, 21: wide} {
		var got api.Address
		getJSON(t, fmt.Sprintf("%s/api/v2/xpub/%s?details=tokens&tokens=derived&gap=%d", base, url.PathEscape(a.Descriptor(true)), gap), 200, &got)
		if got.Balance.String() != fmt.Sprint(l.Balance) || got.UsedTokens != l.Used() || len(got.Tokens) != len(l.Chains[0])+len(l.Chains[1]) ||
			got.Txs != len(l.Txids) {
			t.Fatalf("gap %d: balance %s used %d tokens %d txs %d; ledger %d %d %d %d", gap, got.Balance, got.UsedTokens, len(got.Tokens),
				got.Txs, l.Balance, l.Used(), len(l.Chains[0])+len(l.Chains[1]), len(l.Txids))
		}
	}
	if wide.Balance <= narrow.Balance {
		t.Fatal("the scenario has nothing beyond the gap limit")
	}
}

// checkAccountUtxos compares utxo/{desc} with the ledger: confirmed only,
// and with the mempool (pending outputs first, spent ones left out).
func checkAccountUtxos(t *testing.T, st *xpubStack, base, desc string, l *chaingen.AccountLedger) {
	key := func(txid string, vout uint32, value string, height int64, addr, path string) string {
		return fmt.Sprintf("%s:%d:%s:%d:%s:%s", txid, vout, value, height, addr, path)
	}
	confirmed := map[string]bool{}
	spentByPending := map[wire.OutPoint]bool{}
	for _, tx := range st.pending {
		for _, in := range tx.TxIn {
			spentByPending[in.PreviousOutPoint] = true
		}
	}
	var wantConfirmed, wantAll []string
	for _, u := range l.Utxos {
		k := key(u.Txid, u.Vout, fmt.Sprint(u.Value), int64(u.Height), u.Address, u.Path)
		wantConfirmed = append(wantConfirmed, k)
		confirmed[k] = true
		if !spentByPending[outpoint(t, u.Txid, u.Vout)] {
			wantAll = append(wantAll, k)
		}
	}
	paths := map[string]string{}
	for _, ch := range l.Chains {
		for _, ad := range ch {
			paths[ad.Address] = ad.Path
		}
	}
	pendingOuts := 0
	for _, tx := range st.pending {
		for i, o := range tx.TxOut {
			if addr := chaingen.ExplorerAddress(o.PkScript, st.g.Params()); paths[addr] != "" {
				wantAll = append(wantAll, key(tx.TxHash().String(), uint32(i), fmt.Sprint(o.Value), 0, addr, paths[addr]))
				pendingOuts++
			}
		}
	}
	for q, want := range map[string][]string{"?confirmed=true": wantConfirmed, "": wantAll} {
		var got []api.Utxo
		getJSON(t, base+"/api/v2/utxo/"+url.PathEscape(desc)+q, 200, &got)
		var have []string
		for i, u := range got {
			have = append(have, key(u.Txid, u.Vout, u.Value.String(), u.Height, u.Address, u.Path))
			// Pending first, then newest first.
			if i > 0 && got[i-1].Height != 0 && (u.Height == 0 || u.Height > got[i-1].Height) {
				t.Fatalf("utxo%s: not pending first and newest first: %v", q, got)
			}
		}
		slices.Sort(have)
		sort.Strings(want)
		if !slices.Equal(have, want) {
			t.Fatalf("utxo%s\n got %v\nwant %v", q, have, want)
		}
	}
	if pendingOuts == 0 {
		t.Fatal("no pending output for this account; the check is weak")
	}
}

func outpoint(t testing.TB, txid string, vout uint32) wire.OutPoint {
	t.Helper()
	op, err := wire.NewOutPointFromString(fmt.Sprintf("%s:%d", txid, vout))
	if err != nil {
		t.Fatal(err)
	}
	return *op
}

// checkAccountHistory compares balancehistory/{desc} with the ledger: per
// bucket the txs, received, sent and sentToSelf.
func checkAccountHistory(t *testing.T, base, desc string, l *chaingen.AccountLedger) {
	for _, groupBy := range []int64{600, 3600, 86400} {
		for _, rng := range [][2]int64{{0, 0}, {l.Txs[l.Txids[len(l.Txids)-1]].Time + 1, l.Txs[l.Txids[0]].Time}} {
			type bucket struct{ txs, received, sent, self int64 }
			want := map[int64]*bucket{}
			for _, tx := range l.Txs {
				if tx.Time < rng[0] || rng[1] > 0 && tx.Time >= rng[1] {
					continue
				}
				start := tx.Time - tx.Time%groupBy
				b := want[start]
				if b == nil {
					b = &bucket{}
					want[start] = b
				}
				b.txs++
				b.received += tx.Received
				b.sent += tx.Sent
				b.self += tx.SentToSelf
			}
			var got []api.BalanceHistory
			getJSON(t, fmt.Sprintf("%s/api/v2/balancehistory/%s?groupBy=%d&from=%d&to=%d", base, url.PathEscape(desc), groupBy, rng[0], rng[1]), 200, &got)
			if len(got) != len(want) {
				t.Fatalf("groupBy %d range %v: %d buckets, want %d", groupBy, rng, len(got), len(want))
			}
			for i, b := range got {
				w := want[b.Time]
				if w == nil || int64(b.Txs) != w.txs || b.Received.String() != fmt.Sprint(w.received) || b.Sent.String() != fmt.Sprint(w.sent) ||
					b.SentToSelf.String() != fmt.Sprint(w.self) || (i > 0 && b.Time <= got[i-1].Time) {
					t.Fatalf("groupBy %d bucket %d: %+v (received %s sent %s self %s), want %+v", groupBy, b.Time, b, b.Received, b.Sent, b.SentToSelf, w)
				}
			}
		}
	}
}

// checkAccountNewBlock mines the pending txs and a payment to the receive
// address after the last used one: the next queries (from the cache) show
// the new txs, the new used address and the derivation extended past it.
func checkAccountNewBlock(t *testing.T, st *xpubStack, base string) {
	a := st.accts[2]
	desc := a.Descriptor(true)
	before := st.ledger(t, a, 20)
	var got api.Address
	getJSON(t, base+"/api/v2/xpub/"+url.PathEscape(desc)+"?details=txids", 200, &got) // cached now
	pay, err := st.g.NewHDWallet().Fund(chaingen.HDOut{Acct: a, Change: 0, Index: 24, Value: 777_777})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.g.AddBlock(append(slices.Clone(st.pending), pay)...); err != nil {
		t.Fatal(err)
	}
	submit(t, st.g, st.node, st.g.Height())
	h, hash := st.g.Tip()
	waitTip(t, base, h, hash.String(), st.inst.logs)
	// Address 24 is used now, so 44, 20 further on, is within the gap
	// limit: the scan goes on to 44+20.
	after := st.ledger(t, a, 20)
	if len(after.Txids) <= len(before.Txids) || len(after.Chains[0]) != 65 || after.Balance <= before.Balance+777_777 {
		t.Fatalf("the new block changes nothing for the account: %d txs, %d receive addresses", len(after.Txids), len(after.Chains[0]))
	}
	got = *waitAccount(t, base, desc, func(x *api.Address) bool { return x.UnconfirmedTxs == 0 })
	if got.Txs != len(after.Txids) || got.Balance.String() != fmt.Sprint(after.Balance) || got.UsedTokens != after.Used() {
		t.Fatalf("after the block: %+v, ledger txs %d balance %d used %d", got, len(after.Txids), after.Balance, after.Used())
	}
	getJSON(t, base+"/api/v2/xpub/"+url.PathEscape(desc)+"?details=txids&tokens=derived&pageSize=1000", 200, &got)
	if !slices.Equal(got.Txids, after.Txids) || len(got.Tokens) != len(after.Chains[0])+len(after.Chains[1]) {
		t.Fatalf("after the block: txids %v tokens %d, want %v %d", got.Txids, len(got.Tokens), after.Txids, len(after.Chains[0])+len(after.Chains[1]))
	}
	// A reorg replaces that block: the cached account starts over, and
	// address 24 is unused again, so 44 is out of reach once more.
	branch := competingBranch(t, st.g, st.node, st.g.Height()-1, 1, "xpub-reorg")
	h, hash = branch.Tip()
	waitTip(t, base, h, hash.String(), st.inst.logs)
	l, err := branch.AccountLedger(a, 20)
	if err != nil {
		t.Fatal(err)
	}
	getJSON(t, base+"/api/v2/xpub/"+url.PathEscape(desc)+"?details=txids&tokens=derived&to=100000", 200, &got)
	if got.Txs != len(l.Txids) || !slices.Equal(got.Txids, l.Txids) || got.Balance.String() != fmt.Sprint(l.Balance) ||
		len(got.Tokens) != len(l.Chains[0])+len(l.Chains[1]) || len(l.Chains[0]) != 44 {
		t.Fatalf("after the reorg: txs %d balance %s tokens %d; ledger %d %d %d", got.Txs, got.Balance, len(got.Tokens),
			len(l.Txids), l.Balance, len(l.Chains[0])+len(l.Chains[1]))
	}
}
