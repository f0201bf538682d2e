package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// waitUntil polls cond (a failure guard, not a speed assertion).
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached the expected state", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rawGet sends path exactly as given (no client-side escaping), as curl or
// a browser's address bar would for characters they leave alone.
func rawGet(t *testing.T, base, path string) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// checkDescriptorURLForms: a descriptor holds '/', '(', '\”, '[', '<', ';',
// '*' and '#'; the account answers the same whether the client escapes it
// for a path, for a query (as Blockbook's tests do) or sends it raw (only
// '#' must be escaped, or the client cuts it off as a fragment).
func checkDescriptorURLForms(t *testing.T, st *xpubStack, base string) {
	for _, a := range st.accts {
		desc := a.Descriptor(true)
		want := fetchGolden(t, base+"/api/v2/xpub/"+url.PathEscape(desc)+"?details=tokens", 200)
		noSum := fetchGolden(t, base+"/api/v2/xpub/"+url.PathEscape(a.Descriptor(false))+"?details=tokens", 200)
		for name, path := range map[string]string{
			"query-escaped": "/api/v2/xpub/" + url.QueryEscape(desc) + "?details=tokens",
			"raw":           "/api/v2/xpub/" + strings.ReplaceAll(desc, "#", "%23") + "?details=tokens",
			"raw-no-sum":    "/api/v2/xpub/" + a.Descriptor(false) + "?details=tokens",
		} {
			code, body := rawGet(t, base, path)
			w := want
			if name == "raw-no-sum" {
				w = noSum // the answer echoes the descriptor as sent
			}
			if code != 200 || !sameJSON(t, body, w) {
				t.Fatalf("%s %s: %d %s", name, path, code, truncateBytes(body, 300))
			}
		}
		for _, p := range []string{"utxo", "balancehistory"} {
			code, body := rawGet(t, base, "/api/v2/"+p+"/"+strings.ReplaceAll(desc, "#", "%23"))
			if code != 200 || !sameJSON(t, body, fetchGolden(t, base+"/api/v2/"+p+"/"+url.PathEscape(desc), 200)) {
				t.Fatalf("%s raw: %d %s", p, code, truncateBytes(body, 300))
			}
		}
	}
}

// sameJSON compares two JSON documents by value (the descriptor in
// "address" is echoed as sent, which is the same string in every form).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// badXpubInputs are refused accounts with the error they must give.
func badXpubInputs(t *testing.T, st *xpubStack) map[string]string {
	master, err := hdkeychain.NewMaster(chaingen.HDSeed("e2e-xpub"), st.g.Params())
	if err != nil {
		t.Fatal(err)
	}
	tprv := master.String()
	desc := st.accts[2].Descriptor(true)
	tpub := desc[strings.Index(desc, "]")+1 : strings.Index(desc, "/<")]
	return map[string]string{
		"private-key":            tprv,
		"private-key-descriptor": "wpkh(" + tprv + "/<0;1>/*)",
		"other-network":          "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
		"bad-checksum":           desc[:len(desc)-1] + map[bool]string{true: "q", false: "p"}[desc[len(desc)-1] != 'q'],
		"bad-key-checksum":       tpub[:60] + map[bool]string{true: "2", false: "3"}[tpub[60] != '2'] + tpub[61:],
		"unsupported-descriptor": "wsh(multi(1," + tpub + "/0/*))",
		"hardened-derivation":    "wpkh(" + tpub + "/0/*')",
		"garbage-xpub":           "tpub" + strings.Repeat("0", 107),
	}
}

var badXpubMessages = map[string]string{
	"private-key":            "never send a private key",
	"private-key-descriptor": "never send a private key",
	"other-network":          "is not for regtest: this server accepts tpub, upub, vpub",
	"bad-checksum":           "descriptor checksum",
	"bad-key-checksum":       "bad checksum",
	"unsupported-descriptor": "wsh() is not supported",
	"hardened-derivation":    "hardened derivation",
	"garbage-xpub":           "not an extended public key",
}

// checkXpubBadInput: every refused account is a 400 with a message saying
// why, on every endpoint taking accounts.
func checkXpubBadInput(t *testing.T, st *xpubStack, base string) {
	for name, in := range badXpubInputs(t, st) {
		for _, ep := range []string{"xpub", "utxo", "balancehistory"} {
			var e struct{ Error string }
			getJSON(t, base+"/api/v2/"+ep+"/"+url.PathEscape(in), 400, &e)
			if !strings.Contains(e.Error, badXpubMessages[name]) || !strings.HasPrefix(e.Error, "Invalid xpub or descriptor") {
				t.Errorf("%s %s: %q, want it to contain %q", ep, name, e.Error, badXpubMessages[name])
			}
		}
	}
	for path, want := range map[string]string{
		"/api/v2/xpub/":                           "Missing xpub",
		"/api/v2/xpub/notanxpub":                  "neither an extended public key nor an output descriptor",
		"/api/v2/xpub/" + st.accts[0].Xpub()[:40]: "neither an extended public key",
		// The address endpoint takes addresses only, as Blockbook's.
		"/api/v2/address/" + st.accts[1].Xpub(): "Invalid address",
		"/api/v2/utxo/notanaddress":             "Invalid address",
	} {
		var e struct{ Error string }
		getJSON(t, base+path, 400, &e)
		if !strings.Contains(e.Error, want) {
			t.Errorf("%s: %q, want %q", path, e.Error, want)
		}
	}
}

// checkAccountsWS: the websocket's account calls answer what REST answers
// for accounts named by xpub or descriptor (and fall back to addresses).
func checkAccountsWS(t *testing.T, st *xpubStack, base string) {
	ws := newWS(t, base)
	covered("getAccountInfo", "getAccountUtxo", "getBalanceHistory")
	rest := func(path string) []byte { return fetchGolden(t, base+path, 200) }
	call := func(method string, params map[string]any) []byte {
		_, data := ws.call(method, params)
		if msg := wsErrorOf(data); msg != "" {
			t.Fatalf("%s %v: %s", method, params, msg)
		}
		return data
	}
	for _, a := range st.accts {
		for _, desc := range forms(a) {
			p := "/api/v2/xpub/" + url.PathEscape(desc)
			for _, c := range []struct {
				params map[string]any
				query  string
			}{
				// Websocket defaults: details basic, tokens derived, 25 per page.
				{map[string]any{}, "?details=basic"},
				{map[string]any{"details": "tokens"}, "?details=tokens&tokens=derived"},
				{map[string]any{"details": "tokenBalances", "tokens": "used"}, "?details=tokenBalances&tokens=used"},
				{map[string]any{"details": "txids", "page": 2, "pageSize": 3}, "?details=txids&tokens=derived&page=2&pageSize=3"},
				{map[string]any{"details": "txs"}, "?details=txs&tokens=derived&pageSize=25"},
				{map[string]any{"details": "tokens", "tokens": "nonzero", "gap": 21}, "?details=tokens&tokens=nonzero&gap=21"},
			} {
				c.params["descriptor"] = desc
				if got, want := call("getAccountInfo", c.params), rest(p+c.query); !sameJSON(t, got, want) {
					t.Fatalf("getAccountInfo %v:\n got %s\nwant %s", c.params, truncateBytes(got, 400), truncateBytes(want, 400))
				}
			}
			if got, want := call("getAccountUtxo", map[string]any{"descriptor": desc}), rest("/api/v2/utxo/"+url.PathEscape(desc)); !sameJSON(t, got, want) {
				t.Fatalf("getAccountUtxo %s:\n got %s\nwant %s", desc, got, want)
			}
			for _, gap := range []int{0, 21} {
				got := call("getBalanceHistory", map[string]any{"descriptor": desc, "groupBy": 600, "gap": gap})
				if want := rest(fmt.Sprintf("/api/v2/balancehistory/%s?groupBy=600&gap=%d", url.PathEscape(desc), gap)); !sameJSON(t, got, want) {
					t.Fatalf("getBalanceHistory %s gap %d:\n got %s\nwant %s", desc, gap, got, want)
				}
			}
		}
	}
	for name, in := range badXpubInputs(t, st) {
		for _, m := range []string{"getAccountInfo", "getAccountUtxo", "getBalanceHistory"} {
			ws.fails(m, map[string]any{"descriptor": in}, badXpubMessages[name])
		}
	}
	// Not an account at all: tried as an address.
	ws.fails("getAccountInfo", map[string]any{"descriptor": "notanaddress"}, "Invalid address")
	ws.fails("getBalanceHistory", map[string]any{"descriptor": "notanaddress"}, "Invalid address")
}

// checkXpubGoldens records account answers, REST and websocket, in
// e2e/testdata/xpub (type-checked by tools/js/check-goldens.mjs).
func checkXpubGoldens(t *testing.T, st *xpubStack, base string) {
	p44, p49, p84, p86 := st.accts[0], st.accts[1], st.accts[2], st.accts[3]
	esc := url.PathEscape
	tip := st.ledger(t, p84, 20)
	h := tip.Txs[tip.Txids[0]].Height
	bad := badXpubInputs(t, st)
	type req struct {
		name, path string
		code       int
	}
	reqs := []req{
		{"xpub-vpub-basic", "/api/v2/xpub/" + p84.Xpub() + "?details=basic", 200},
		{"xpub-upub-tokens-used", "/api/v2/xpub/" + p49.Xpub() + "?details=tokens&tokens=used", 200},
		{"xpub-vpub-tokenbalances", "/api/v2/xpub/" + p84.Xpub() + "?details=tokenBalances", 200},
		{"xpub-tpub-derived-gap2", "/api/v2/xpub/" + p44.Xpub() + "?details=tokens&tokens=derived&gap=2", 200},
		{"xpub-tr-descriptor-txs", "/api/v2/xpub/" + esc(p86.Descriptor(true)) + "?details=txs&pageSize=3", 200},
		{"xpub-wpkh-descriptor-txids-page2", "/api/v2/xpub/" + esc(p84.Descriptor(true)) + "?details=txids&pageSize=3&page=2", 200},
		{"xpub-vpub-txslight-range", fmt.Sprintf("/api/v2/xpub/%s?details=txslight&from=%d&to=%d", p84.Xpub(), h-1, h), 200},
		{"utxo-vpub", "/api/v2/utxo/" + p84.Xpub(), 200},
		{"utxo-tr-descriptor-confirmed", "/api/v2/utxo/" + esc(p86.Descriptor(true)) + "?confirmed=true", 200},
		{"balancehistory-vpub-hourly", "/api/v2/balancehistory/" + p84.Xpub() + "?groupBy=3600", 200},
		{"balancehistory-tr-descriptor", "/api/v2/balancehistory/" + esc(p86.Descriptor(false)), 200},
		{"error-xpub-private-key", "/api/v2/xpub/" + bad["private-key"], 400},
		{"error-xpub-other-network", "/api/v2/xpub/" + bad["other-network"], 400},
		{"error-xpub-bad-checksum", "/api/v2/xpub/" + esc(bad["bad-checksum"]), 400},
		{"error-xpub-unsupported-descriptor", "/api/v2/xpub/" + esc(bad["unsupported-descriptor"]), 400},
		{"error-xpub-missing", "/api/v2/xpub/", 400},
		{"error-xpub-not-an-account", "/api/v2/xpub/notanxpub", 400},
	}
	gs := newGoldenSet(t, goldenDir+"/xpub", "TestE2EXpub")
	for _, r := range reqs {
		gs.check(r.name, normalizeFirstSeen(t, fetchGolden(t, base+r.path, r.code)))
	}
	gs.finish()
	ws := newWS(t, base)
	w := &wsGoldens{t: t, goldenSet: newGoldenSet(t, goldenDir+"/xpub/ws", "TestE2EXpub")}
	w.call(ws, "getAccountInfo-descriptor-tokens", "getAccountInfo", map[string]any{"descriptor": p86.Descriptor(true), "details": "tokens"})
	w.call(ws, "getAccountInfo-vpub-txids", "getAccountInfo", map[string]any{"descriptor": p84.Xpub(), "details": "txids", "pageSize": 3})
	w.call(ws, "getAccountInfo-descriptor-txs-page2", "getAccountInfo", map[string]any{"descriptor": p49.Descriptor(true), "details": "txs", "page": 2, "pageSize": 2})
	w.call(ws, "getAccountUtxo-descriptor", "getAccountUtxo", map[string]any{"descriptor": p44.Descriptor(true)})
	w.call(ws, "getBalanceHistory-descriptor", "getBalanceHistory", map[string]any{"descriptor": p86.Descriptor(true), "groupBy": 86400})
	w.call(ws, "error-private-key", "getAccountInfo", map[string]any{"descriptor": bad["private-key"]})
	w.call(ws, "error-bad-checksum", "getAccountUtxo", map[string]any{"descriptor": bad["bad-checksum"]})
	w.finish()
}

// checkNoCacheSame: a second blockbook with -noxpubcache (every query
// derives and reads everything again) answers exactly what the cached one
// answers, before and after its cache holds the accounts.
func checkNoCacheSame(t *testing.T, st *xpubStack, base string) {
	other := startInProcess(t, st.cfg, t.TempDir(), func(o *app.Options) { o.NoXpubCache = true })
	h, hash := st.g.Tip()
	waitTip(t, other.base, h, hash.String(), other.logs)
	for _, a := range st.accts {
		// Its mempool loaded the pending txs while the index was still
		// catching up: wait until their inputs are resolved.
		_, delta := st.pendingOf(t, st.ledger(t, a, 20))
		waitAccount(t, other.base, a.Descriptor(true), func(x *api.Address) bool {
			return x.UnconfirmedTxs == 1 && x.UnconfirmedBalance.String() == fmt.Sprint(delta)
		})
	}
	for _, a := range st.accts {
		desc := url.PathEscape(a.Descriptor(true))
		for _, path := range []string{
			"/api/v2/xpub/" + desc + "?details=txs&tokens=derived&pageSize=4&page=2",
			"/api/v2/xpub/" + desc + "?details=tokenBalances&tokens=used&gap=21",
			"/api/v2/utxo/" + desc,
			"/api/v2/balancehistory/" + desc + "?groupBy=600",
		} {
			for range 2 {
				got := normalizeFirstSeen(t, fetchGolden(t, other.base+path, 200))
				want := normalizeFirstSeen(t, fetchGolden(t, base+path, 200))
				if string(got) != string(want) {
					t.Fatalf("%s: with -noxpubcache\n%s\nwith the cache\n%s", path, truncateBytes(got, 500), truncateBytes(want, 500))
				}
			}
		}
	}
	other.stop(t)
}
