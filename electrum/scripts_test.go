package electrum

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/apitest"
)

// ledgerAddresses are the fixture addresses the script-hash tests check:
// every used address of the HD accounts, the demo's P2TR address and the
// one paid only by a pending tx.
func ledgerAddresses(f *apitest.Fixture) []string {
	out := []string{f.DemoAddress, f.UnusedAddress}
	for _, al := range f.AccountLedgers {
		for _, ch := range al.Chains {
			for _, a := range ch {
				if a.Txs > 0 {
					out = append(out, a.Address)
				}
			}
		}
	}
	return out
}

// scripthashOf is the script hash of an address as a wallet computes it.
func scripthashOf(t testing.TB, f *apitest.Fixture, address string) string {
	t.Helper()
	script, err := f.Parser.AddrDescFromAddress(address)
	if err != nil {
		t.Fatal(err)
	}
	return ScriptHash(script)
}

// wantHistory is an address's Electrum history from chaingen's ledger
// (confirmed, in chain order) and the fixture's pending txs.
func wantHistory(t testing.TB, s *served, address string) []historyItem {
	t.Helper()
	f := s.f
	var out []historyItem
	if al := f.Ledger.Addresses[address]; al != nil {
		for _, txid := range al.Txids {
			out = append(out, historyItem{TxHash: txid, Height: int64(f.Ledger.Txs[txid].Height)})
		}
		slices.SortFunc(out, func(a, b historyItem) int {
			return cmp.Or(cmp.Compare(a.Height, b.Height), cmp.Compare(f.Ledger.Txs[a.TxHash].Position, f.Ledger.Txs[b.TxHash].Position))
		})
	}
	pending, _, err := f.PendingFor(address)
	if err != nil {
		t.Fatal(err)
	}
	inPool := map[string]*wire.MsgTx{}
	for _, tx := range f.Pending {
		inPool[tx.TxHash().String()] = tx
	}
	for _, txid := range pending {
		h := int64(0)
		for _, in := range inPool[txid].TxIn {
			if inPool[in.PreviousOutPoint.Hash.String()] != nil {
				h = -1
			}
		}
		out = append(out, historyItem{TxHash: txid, Height: h, Fee: &unknownFee})
	}
	return out
}

// unknownFee marks the pending entries of wanted histories.
var unknownFee int64 = -1

// Every script-hash method of ledger addresses, in both versions, against
// chaingen's ledger.
func TestScripthashAgainstLedger(t *testing.T) {
	s := newServed(t, Config{})
	c14, c16 := s.negotiated(t, "1.4"), s.negotiated(t, "1.6")
	for _, addr := range ledgerAddresses(s.f) {
		sh := scripthashOf(t, s.f, addr)
		want := wantHistory(t, s, addr)
		for _, c := range []*client{c14, c16} {
			got := ok[[]historyItem](t, c, "blockchain.scripthash.get_history", sh)
			checkHistory(t, addr, got, want, c == c16)
			st := ok[*string](t, c, "blockchain.scripthash.subscribe", sh)
			if !sameStatus(st, status(got)) {
				t.Errorf("%s: status %v, want that of its history", addr, st)
			}
			mp := ok[[]historyItem](t, c, "blockchain.scripthash.get_mempool", sh)
			if n := countPending(got); len(mp) != n || (n > 0 && mp[0].TxHash != got[len(got)-n].TxHash) {
				t.Errorf("%s: get_mempool %v, history %v", addr, mp, got)
			}
		}
		_, delta, err := s.f.PendingFor(addr)
		if err != nil {
			t.Fatal(err)
		}
		var confirmed int64
		if al := s.f.Ledger.Addresses[addr]; al != nil {
			confirmed = al.Balance
		}
		bal := ok[balance](t, c14, "blockchain.scripthash.get_balance", sh)
		if bal.Confirmed != confirmed || bal.Unconfirmed != delta {
			t.Errorf("%s: balance %+v, want %d and %d", addr, bal, confirmed, delta)
		}
		utxos := ok[[]unspent](t, c14, "blockchain.scripthash.listunspent", sh)
		var sum int64
		for _, u := range utxos {
			sum += u.Value
		}
		if sum != confirmed+delta {
			t.Errorf("%s: listunspent sums %d, want %d: %+v", addr, sum, confirmed+delta, utxos)
		}
	}
}

func countPending(h []historyItem) int {
	n := 0
	for _, it := range h {
		if it.Fee != nil {
			n++
		}
	}
	return n
}

// checkHistory compares a history with the ledger's: the same confirmed
// list, the same pending txs with their heights and fees, and from 1.6
// the pending ones in the canonical order.
func checkHistory(t *testing.T, addr string, got, want []historyItem, canonical bool) {
	t.Helper()
	key := func(it historyItem) string { return it.TxHash + ":" + strconv.FormatInt(it.Height, 10) }
	n := countPending(want)
	if len(got) != len(want) || countPending(got) != n {
		t.Errorf("%s: history %v, want %v", addr, got, want)
		return
	}
	for i := range len(want) - n {
		if key(got[i]) != key(want[i]) || got[i].Fee != nil {
			t.Errorf("%s: history[%d] %+v, want %+v", addr, i, got[i], want[i])
		}
	}
	gotP, wantP := got[len(got)-n:], slices.Clone(want[len(want)-n:])
	for _, it := range gotP {
		if it.Fee == nil || *it.Fee <= 0 {
			t.Errorf("%s: pending %s without its fee", addr, it.TxHash)
		}
	}
	if canonical {
		slices.SortStableFunc(wantP, func(a, b historyItem) int {
			return cmp.Or(-cmp.Compare(a.Height, b.Height), strings.Compare(a.TxHash, b.TxHash))
		})
	} else {
		slices.SortFunc(wantP, func(a, b historyItem) int { return strings.Compare(key(a), key(b)) })
		gotP = slices.Clone(gotP)
		slices.SortFunc(gotP, func(a, b historyItem) int { return strings.Compare(key(a), key(b)) })
	}
	for i := range wantP {
		if key(gotP[i]) != key(wantP[i]) {
			t.Errorf("%s: pending %v, want %v", addr, gotP, wantP)
			break
		}
	}
}

// The status is Electrum's: sha256 of "txid:height:" in order, null
// without history; the specification's own example.
func TestStatusDefinition(t *testing.T) {
	if status(nil) != nil {
		t.Error("empty history has a status")
	}
	fee := int64(200)
	items := []historyItem{
		{TxHash: "a6c9c361bd0bc536d6a22648efbf8f9b200e425ef6c3a7a9669dc444c532a347", Height: 2472},
		{TxHash: "9c42f84b2fcdaff676ba25d9d4941741cc0d1a01cce0c23fdc4c0b2afa38431c", Height: 2473},
		{TxHash: "770f2d4371b3fabb902dd9a103e2dd005fcd3971181078fca4a2a1d6ff127b30", Height: 2473},
		{TxHash: "80b19848aed792565ab7c5a79b7c2a00fbf985741579396ebe0ab6098e607311", Height: 0, Fee: &fee},
		{TxHash: "e02a1dadfa83b996b24175df807b271ea5d02937ef5b35c195fac1e1bdc3198f", Height: 0, Fee: &fee},
		{TxHash: "bb4c8ab438c13b89ca80d1d5bee25b0b6b7f55673f4d801998ba97db161d9e85", Height: -1, Fee: &fee},
	}
	var sb bytes.Buffer
	for _, it := range items {
		sb.WriteString(it.TxHash + ":" + strconv.FormatInt(it.Height, 10) + ":")
	}
	sum := sha256.Sum256(sb.Bytes())
	if st := status(items); st == nil || *st != hex.EncodeToString(sum[:]) || *st != "78e96c6562cafa71c115503b9411fdfdc595a45031e2ab76ff75162fe1b0590d" {
		t.Errorf("status %v", st)
	}
}

// Unknown script hashes have no history; malformed ones are bad requests.
func TestScripthashEdges(t *testing.T) {
	s := newServed(t, Config{})
	c := s.negotiated(t, "1.6")
	unknown := ScriptHash([]byte("no such script"))
	if h := ok[[]historyItem](t, c, "blockchain.scripthash.get_history", unknown); len(h) != 0 {
		t.Errorf("history of an unknown script hash: %v", h)
	}
	if b := ok[balance](t, c, "blockchain.scripthash.get_balance", unknown); b != (balance{}) {
		t.Errorf("balance %+v", b)
	}
	if u := ok[[]unspent](t, c, "blockchain.scripthash.listunspent", unknown); len(u) != 0 {
		t.Errorf("listunspent %v", u)
	}
	if st := c.call("blockchain.scripthash.subscribe", unknown); st.Error != nil || string(st.Result) != "null" {
		t.Errorf("subscribe: %s %v", st.Result, st.Error)
	}
	if u := ok[bool](t, c, "blockchain.scripthash.unsubscribe", unknown); !u {
		t.Error("unsubscribe of a subscription answered false")
	}
	if u := ok[bool](t, c, "blockchain.scripthash.unsubscribe", unknown); u {
		t.Error("unsubscribe of nothing answered true")
	}
	for _, bad := range []any{"zz", strings.Repeat("g", 64), unknown[:62], 5} {
		code := codeBadRequest
		if _, isNum := bad.(int); isNum {
			code = codeInvalidParams
		}
		fails(t, c, code, "", "blockchain.scripthash.get_history", bad)
	}
	fails(t, c, codeInvalidParams, "required", "blockchain.scripthash.get_balance")
	fails(t, c, codeInvalidParams, "too many params", "blockchain.scripthash.get_balance", unknown, 1)
	// By name, as JSON-RPC 2.0 allows.
	c.sendLine(`{"jsonrpc":"2.0","id":"n","method":"blockchain.scripthash.get_balance","params":{"scripthash":"` + unknown + `"}}`)
	if a := c.answerTo(`"n"`); a.Error != nil || string(a.Result) != `{"confirmed":0,"unconfirmed":0}` {
		t.Errorf("params by name: %s %v", a.Result, a.Error)
	}
}

// A history over the limit is refused with Electrum's error, for reading
// and for subscribing; below it is served.
func TestHistoryLimit(t *testing.T) {
	s := newServed(t, Config{MaxHistory: 3})
	c := s.negotiated(t, "1.4")
	big := scripthashOf(t, s.f, s.f.DemoAddress)
	if n := len(wantHistory(t, s, s.f.DemoAddress)); n <= 3 {
		t.Fatalf("the demo address has %d txs", n)
	}
	fails(t, c, codeBadRequest, "history too large", "blockchain.scripthash.get_history", big)
	fails(t, c, codeBadRequest, "history too large", "blockchain.scripthash.subscribe", big)
	small := scripthashOf(t, s.f, s.f.UnusedAddress)
	if h := ok[[]historyItem](t, c, "blockchain.scripthash.get_history", small); len(h) != 1 {
		t.Errorf("small history %v", h)
	}
}
