package server

import (
	"bytes"
	"io/fs"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/static"
)

// coins parses a v1 decimal coin amount into base units (8 decimals).
func coins(t *testing.T, s string) string {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a decimal amount: %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(100_000_000))
	if !r.IsInt() {
		t.Fatalf("more than 8 decimals: %q", s)
	}
	return r.Num().String()
}

// getJSON fetches a 200 answer and decodes it.
func getJSON[T any](t *testing.T, s *served, path string) T {
	t.Helper()
	code, ctype, body := s.do(t, "GET", path, "")
	if code != 200 || ctype != "application/json; charset=utf-8" {
		t.Fatalf("GET %s: %d %s %.300s", path, code, ctype, body)
	}
	return decode[T](t, path, body)
}

// The v1 answers show the same objects as the v2 ones, amounts in coins;
// the unversioned paths answer the same as v1 on a Bitcoin-type chain.
func TestV1MatchesV2(t *testing.T) {
	s := newServed(t)
	f := s.f
	txid := f.Block(112).Transactions[1].TxHash().String()
	coinbase := f.Block(3).Transactions[0].TxHash().String()
	for _, prefix := range []string{"/api/v1/", "/api/"} {
		for _, id := range []string{txid, coinbase, f.PendingChild.TxHash().String()} {
			v2 := getJSON[api.Tx](t, s, "/api/v2/tx/"+id)
			v1 := getJSON[api.TxV1](t, s, prefix+"tx/"+id)
			checkTxV1(t, v1, &v2)
		}
		v2a := getJSON[api.Address](t, s, "/api/v2/address/"+f.DemoAddress+"?pageSize=3&page=2")
		v1a := getJSON[api.AddressV1](t, s, prefix+"address/"+f.DemoAddress+"?pageSize=3&page=2")
		if v1a.AddrStr != f.DemoAddress || coins(t, v1a.Balance) != v2a.Balance.String() ||
			coins(t, v1a.TotalReceived) != v2a.TotalReceived.String() || coins(t, v1a.TotalSent) != v2a.TotalSent.String() ||
			coins(t, v1a.UnconfirmedBalance) != v2a.UnconfirmedBalance.String() || v1a.TxApperances != v2a.Txs ||
			v1a.UnconfirmedTxApperances != v2a.UnconfirmedTxs || !slices.Equal(v1a.Txids, v2a.Txids) || v1a.Paging != v2a.Paging {
			t.Errorf("%saddress: %+v vs %+v", prefix, v1a, v2a)
		}
		if demo := f.Ledger.Addresses[f.DemoAddress]; v1a.TxApperances != demo.TxCount() || coins(t, v1a.Balance) != big.NewInt(demo.Balance).String() {
			t.Errorf("%saddress disagrees with the ledger: %+v", prefix, v1a)
		}
		v1t := getJSON[api.AddressV1](t, s, prefix+"address/"+f.DemoAddress+"?details=txs&pageSize=2")
		v2t := getJSON[api.Address](t, s, "/api/v2/address/"+f.DemoAddress+"?details=txs&pageSize=2")
		if len(v1t.Transactions) != len(v2t.Transactions) || len(v1t.Txids) != 0 {
			t.Fatalf("%saddress details=txs: %d txs, %d txids", prefix, len(v1t.Transactions), len(v1t.Txids))
		}
		for i := range v1t.Transactions {
			checkTxV1(t, *v1t.Transactions[i], v2t.Transactions[i])
		}
		us2 := getJSON[[]api.Utxo](t, s, "/api/v2/utxo/"+f.DemoAddress)
		us1 := getJSON[[]api.UtxoV1](t, s, prefix+"utxo/"+f.DemoAddress)
		if len(us1) != len(us2) || len(us1) == 0 {
			t.Fatalf("%sutxo: %d vs %d", prefix, len(us1), len(us2))
		}
		for i := range us1 {
			u1, u2 := us1[i], us2[i]
			if u1.Txid != u2.Txid || u1.Vout != u2.Vout || coins(t, u1.Amount) != u2.Value.String() || string(u1.Satoshis) != u2.Value.String() ||
				u1.Height != u2.Height || u1.Confirmations != u2.Confirmations {
				t.Errorf("%sutxo %d: %+v vs %+v", prefix, i, u1, u2)
			}
		}
		b2 := getJSON[api.Block](t, s, "/api/v2/block/112")
		b1 := getJSON[api.BlockV1](t, s, prefix+"block/112")
		if b1.BlockInfo != b2.BlockInfo || b1.TxCount != b2.TxCount || b1.Paging != b2.Paging || len(b1.Txs) != len(b2.Txs) {
			t.Fatalf("%sblock: %+v vs %+v", prefix, b1.BlockInfo, b2.BlockInfo)
		}
		for i := range b1.Txs {
			checkTxV1(t, *b1.Txs[i], b2.Txs[i])
		}
	}
	desc := f.Accounts[2].Descriptor(true)
	x2 := getJSON[api.Address](t, s, "/api/v2/xpub/"+url.PathEscape(desc))
	x1 := getJSON[api.AddressV1](t, s, "/api/xpub/"+url.PathEscape(desc))
	if x1.AddrStr != x2.Address || coins(t, x1.Balance) != x2.Balance.String() || x1.TxApperances != x2.Txs || !slices.Equal(x1.Txids, x2.Txids) {
		t.Errorf("xpub: %+v vs %+v", x1, x2)
	}
}

func checkTxV1(t *testing.T, v1 api.TxV1, v2 *api.Tx) {
	t.Helper()
	if v1.Txid != v2.Txid || v1.Blockheight != v2.BlockHeight || v1.Blockhash != v2.BlockHash || v1.Confirmations != v2.Confirmations ||
		v1.Blocktime != v2.BlockTime || v1.Time != v2.BlockTime || v1.Hex != v2.Hex || v1.Size != v2.Size || v1.Locktime != v2.LockTime ||
		coins(t, v1.ValueOut) != v2.Value.String() || coins(t, v1.ValueIn) != v2.ValueIn.String() || coins(t, v1.Fees) != v2.Fees.String() ||
		len(v1.Vin) != len(v2.Vin) || len(v1.Vout) != len(v2.Vout) {
		t.Fatalf("tx %s: v1 %+v", v2.Txid, v1)
	}
	for i, in := range v1.Vin {
		w := v2.Vin[i]
		value := ""
		if w.Value != nil {
			value = coins(t, in.Value)
		} else if in.Value != "" {
			t.Errorf("tx %s vin %d: value %q without a v2 value", v2.Txid, i, in.Value)
		}
		if in.Txid != w.Txid || in.Vout != w.Vout || in.N != w.N || in.Sequence != w.Sequence || in.ScriptSig.Hex != w.Hex ||
			!slices.Equal(in.Addresses, w.Addresses) || w.Value != nil && value != w.Value.String() {
			t.Errorf("tx %s vin %d: %+v vs %+v", v2.Txid, i, in, w)
		}
	}
	for i, out := range v1.Vout {
		w := v2.Vout[i]
		if coins(t, out.Value) != w.Value.String() || out.N != w.N || out.Spent != w.Spent || out.SpentTxID != w.SpentTxID ||
			out.SpentIndex != w.SpentIndex || out.SpentHeight != w.SpentHeight || out.ScriptPubKey.Hex != w.Hex ||
			!slices.Equal(out.ScriptPubKey.Addresses, w.Addresses) {
			t.Errorf("tx %s vout %d: %+v vs %+v", v2.Txid, i, out, w)
		}
	}
}

// Routes whose v1 answer is v2's answer byte for byte, errors included.
func TestV1SameAsV2(t *testing.T) {
	s := newServed(t)
	f := s.f
	txid := f.Block(112).Transactions[1].TxHash().String()
	for _, rest := range []string{"block-index/57", "block-index/x", "tx-specific/" + txid, "estimatefee/2", "estimatefee/0",
		"sendtx/zz", "rawtx/" + txid, "rawblock/3", "balancehistory/" + f.DemoAddress + "?groupBy=1", "contract/x",
		"block-filters/?scriptType=taproot&lastN=1"} {
		prefixes := []string{"/api/"}
		if name, _, _ := strings.Cut(rest, "/"); slices.Contains(v1SameAsV2, name) {
			prefixes = append(prefixes, "/api/v1/")
		}
		wantCode, _, want := s.do(t, "GET", "/api/v2/"+rest, "")
		for _, prefix := range prefixes {
			code, _, got := s.do(t, "GET", prefix+rest, "")
			if code != wantCode || !bytes.Equal(got, want) {
				t.Errorf("%s%s: %d %.200s, v2 %d %.200s", prefix, rest, code, got, wantCode, want)
			}
		}
	}
	for _, path := range []string{"/api/v1/sendtx", "/api/v1/sendtx/", "/api/sendtx", "/api/sendtx/"} {
		code, _, got := s.do(t, "POST", path, "00")
		if code != 400 || !strings.Contains(string(got), "Invalid transaction") {
			t.Errorf("POST %s: %d %s", path, code, got)
		}
	}
}

// Bad input: 400 with Blockbook's text where it has one.
func TestV1Errors(t *testing.T) {
	s := newServed(t)
	txid := s.f.Block(112).Transactions[1].TxHash().String()
	for _, c := range []struct{ path, msg string }{
		{"/api/v1/tx/", "Missing txid"},
		{"/api/tx/", "Missing txid"},
		{"/api/v1/tx/" + txid + "?spending=maybe", "Parameter 'spending' cannot be converted to boolean"},
		{"/api/v1/tx/xyz", "Invalid txid"},
		{"/api/v1/address/", "Missing address"},
		{"/api/v1/address/notanaddress", "Invalid address"},
		{"/api/xpub/", "Missing xpub"},
		{"/api/v1/utxo/" + s.f.DemoAddress + "?confirmed=maybe", "Parameter 'confirmed' cannot be converted to boolean"},
		{"/api/v1/utxo/nonsense", "Invalid address"},
		{"/api/v1/block/zzz", "Invalid block height or hash"},
		{"/api/block/99999", "Block not found"},
		{"/api/v1/estimatefee/", "Missing parameter 'number of blocks'"},
		{"/api/v1/sendtx/", "Missing tx blob"},
		{"/api/v1/tx-specific/", "Missing txid"},
		{"/api/rawtx/", "Missing txid"},
		{"/api/contract/", "Missing contract"},
	} {
		code, _, body := s.do(t, "GET", c.path, "")
		if msg := decode[errorBody](t, c.path, body).Error; code != 400 || !strings.HasPrefix(msg, c.msg) {
			t.Errorf("%s: %d %q, want 400 %q", c.path, code, msg, c.msg)
		}
	}
	// A path no v2 route takes goes to the catch-all as the client sent it.
	for _, path := range []string{"/api/v1/estimatefee/2/3", "/api/tx-specific/a/b"} {
		code, _, body := s.do(t, "GET", path, "")
		wantCode, _, _ := s.do(t, "GET", "/api/nosuch", "")
		if code != wantCode || bytes.Contains(body, []byte("/api/v2/")) {
			t.Errorf("%s: %d %s, want the catch-all's %d for this path", path, code, body, wantCode)
		}
	}
	// A missing height is the tip, as in Blockbook.
	for _, path := range []string{"/api/v1/block-index/", "/api/block-index/"} {
		if bi := getJSON[api.BlockIndex](t, s, path); bi.BlockHash != s.f.BlockHash(s.f.TipHeight()) {
			t.Errorf("%s: %s, want the tip %s", path, bi.BlockHash, s.f.BlockHash(s.f.TipHeight()))
		}
	}
	// A valid spending parameter is accepted.
	if code, _, body := s.do(t, "GET", "/api/v1/tx/"+txid+"?spending=true", ""); code != 200 {
		t.Errorf("spending=true: %d %s", code, body)
	}
}

// The console offers every websocket method the server has.
func TestTestWebsocketPageMethods(t *testing.T) {
	js, err := fs.ReadFile(static.Assets, "test-websocket.js")
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(js, []byte("var examples = {"))
	end := bytes.Index(js[start:], []byte("\n  };"))
	if start < 0 || end < 0 {
		t.Fatal("no examples table in test-websocket.js")
	}
	offered := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^    (\w+): `).FindAllSubmatch(js[start:start+end], -1) {
		offered[string(m[1])] = true
	}
	for name := range wsMethods {
		if !offered[name] {
			t.Errorf("test-websocket.js does not offer %s", name)
		}
	}
}

func TestTestWebsocketPage(t *testing.T) {
	s := newServed(t)
	code, ctype, body := s.do(t, "GET", "/test-websocket.html", "")
	if code != 200 || ctype != "text/html; charset=utf-8" || !bytes.Contains(body, []byte("static/test-websocket.js")) {
		t.Fatalf("page: %d %s %.200s", code, ctype, body)
	}
	code, _, js := s.do(t, "GET", "/static/test-websocket.js", "")
	if code != 200 || !bytes.Contains(js, []byte("new WebSocket(")) {
		t.Fatalf("script: %d %.100s", code, js)
	}
}

// On an Ethereum-type chain the unversioned paths are v2's and /api/v1/ is
// not served (Blockbook registers v1 for Bitcoin-type chains only).
func TestUnversionedOnEthereum(t *testing.T) {
	p := NewPublic(newBare(bchain.ChainEthereumType), PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	for _, rest := range []string{"address/0xab", "utxo/0xab", "xpub/xpub6abc", "xpub/", "rawblock/1", "tx-specific/ab",
		"block-filters/?lastN=1", "estimatefee/x", "estimatefee/2"} {
		wantCode, want := get("/api/v2/" + rest)
		if code, got := get("/api/" + rest); code != wantCode || got != want {
			t.Errorf("/api/%s: %d %s, v2 %d %s", rest, code, got, wantCode, want)
		}
	}
	for path, msg := range map[string]string{"/api/tx/": "Missing txid", "/api/address/": "Missing address", "/api/xpub/": "Missing xpub"} {
		if code, body := get(path); code != 400 || !strings.Contains(body, msg) {
			t.Errorf("%s on Ethereum: %d %s, want 400 %q", path, code, body, msg)
		}
	}
	if code, body := get("/api/address/0xab"); code != 200 || !strings.Contains(body, `"address":"0xab"`) {
		t.Errorf("unversioned address: %d %s", code, body)
	}
	// /api/v1/... falls to the catch-all, like any unknown /api path.
	wantCode, _ := get("/api/nosuch")
	for _, path := range []string{"/api/v1/address/0xab", "/api/v1/tx/ab", "/api/v1/block-index/1"} {
		if code, body := get(path); code != wantCode || strings.Contains(body, `"address":"0xab"`) {
			t.Errorf("%s on Ethereum: %d %s, want the catch-all's %d", path, code, body, wantCode)
		}
	}
}
