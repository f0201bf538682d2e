package e2e

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/fiat"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/openapicheck"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// The OpenAPI description (server/openapi/openapi.yaml) against real
// answers: every REST golden of e2e/testdata, and a request to every
// operation on a btcd chain and on a geth chain. Every object schema is
// closed (server/openapi_test.go checks that), so a field the server
// answers and the spec does not list fails here, as do a wrong type and a
// missing required field.

func openAPIChecker(t *testing.T) *openapicheck.Checker {
	t.Helper()
	c, err := openapicheck.New(server.OpenAPISpec())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// goldenRoutes maps golden file names (by prefix, longest first) to the
// operation that answered them (method "" is GET); the test files that
// write the goldens name them so.
var goldenRoutes = []struct{ prefix, path, method string }{
	{"pushdata-search", "/api/v2/pushdata/search", http.MethodPost},
	{"sp-tweaks", "/api/v2/sp-tweaks/{height}", ""},
	{"status", "/api/v2", ""},
	{"block-index", "/api/v2/block-index/{height}", ""},
	{"block-filters/", "/api/v2/block-filters/", ""},
	{"rawblock", "/api/v2/rawblock/{id}", ""},
	{"rune-history", "/api/v2/rune-history/{address}", ""},
	{"rune", "/api/v2/rune/{rune}", ""},
	{"block", "/api/v2/block/{id}", ""},
	{"feestats", "/api/v2/feestats/{id}", ""},
	{"rawtx", "/api/v2/rawtx/{txid}", ""},
	{"tx-specific", "/api/v2/tx-specific/{txid}", ""},
	{"tx", "/api/v2/tx/{txid}", ""},
	{"address", "/api/v2/address/{address}", ""},
	{"xpub", "/api/v2/xpub/{xpub}", ""},
	{"utxo", "/api/v2/utxo/{address}", ""},
	{"balancehistory", "/api/v2/balancehistory/{address}", ""},
	{"estimatefee", "/api/v2/estimatefee/{blocks}", ""},
	{"sendtx", "/api/v2/sendtx/{hex}", ""},
	{"contract", "/api/v2/contract/{contract}", ""},
	{"tickers-list", "/api/v2/tickers-list/", ""},
	{"multi-tickers", "/api/v2/multi-tickers/", ""},
	{"tickers", "/api/v2/tickers/", ""},
}

// goldenDirs are the directories of REST v2 goldens; others (such as
// the v1 and unversioned answers') are not described by the spec.
var goldenDirs = []string{"", "eth/", "fiat/", "xpub/", "block-filters/", "pushdata/", "runes/", "sp/"}

// goldenOp finds the operation of a golden file (its path under testdata,
// without .golden.json) and the status it answered with: 400 for an
// error- file holding an error object (Blockbook answers some of them, such
// as block-index beyond the tip, with 200). ok is false for files the
// spec does not describe (websocket and non-v2 answers).
func goldenOp(rel string, body []byte) (op openapicheck.Op, status int, ok bool, err error) {
	dir, name := filepath.Split(filepath.ToSlash(rel))
	if strings.HasPrefix(name, "ws-") || strings.HasPrefix(name, "v1-") || !slices.Contains(goldenDirs, dir) {
		return op, 0, false, nil
	}
	status = 200
	if rest, isErr := strings.CutPrefix(name, "error-"); isErr {
		name = rest
		var e map[string]any
		if json.Unmarshal(body, &e) == nil && e["error"] != nil {
			status = 400
		}
	}
	key := name
	if dir == "block-filters/" {
		key = dir + name
	}
	for _, r := range goldenRoutes {
		if strings.HasPrefix(key, r.prefix) {
			return openapicheck.Op{Method: cmp.Or(r.method, http.MethodGet), Path: r.path}, status, true, nil
		}
	}
	if status == 400 {
		return op, status, true, nil // an error of no one route: the Error schema
	}
	return op, 0, false, fmt.Errorf("golden %s: no operation known for it (extend goldenRoutes)", rel)
}

// Every REST golden answer (Bitcoin-type, accounts, block filters, fiat
// rates, Ethereum-type) matches the spec of the operation that answered.
func TestOpenAPIGoldens(t *testing.T) {
	c := openAPIChecker(t)
	errSchema, err := c.Schema("Error")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[openapicheck.Op]int{}
	n := 0
	err = filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".golden.json") {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, strings.TrimSuffix(path, ".golden.json"))
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		op, status, ok, err := goldenOp(rel, body)
		if err != nil {
			t.Error(err)
			return nil
		}
		if !ok {
			return nil
		}
		n++
		if op.Path == "" {
			err = openapicheck.Validate(errSchema, body)
		} else {
			err = c.CheckAnswer(op, status, body)
			covered[op]++
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Operations without a golden answer of their own: the POST forms and
	// the slash form of the status share their answers' schemas.
	noGolden := []string{"GET /api/v2/", "POST /api/v2/sendtx", "POST /api/v2/sendtx/"}
	for _, op := range c.Operations() {
		if covered[op] == 0 && !slices.Contains(noGolden, op.String()) {
			t.Errorf("no golden answer of %s", op)
		}
	}
	t.Logf("%d golden answers checked", n)
	if n < 100 {
		t.Errorf("only %d golden answers found under %s", n, goldenDir)
	}
}

// liveCheck requests paths of a running server and validates each answer
// with the operation the path matches; it records which operations were
// asked.
type liveCheck struct {
	t     *testing.T
	c     *openapicheck.Checker
	base  string
	asked map[openapicheck.Op]int
}

// do sends one request; want is the status it must answer (0: 200 or 400).
func (l *liveCheck) do(method, path, body string, want int) []byte {
	l.t.Helper()
	req, err := http.NewRequest(method, l.base+path, strings.NewReader(body))
	if err != nil {
		l.t.Fatal(err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		l.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		l.t.Fatal(err)
	}
	if want != 0 && resp.StatusCode != want || want == 0 && resp.StatusCode != 200 && resp.StatusCode != 400 {
		l.t.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, truncateBytes(got, 300))
	}
	u, err := url.Parse(path)
	if err != nil {
		l.t.Fatal(err)
	}
	op, ok := l.c.Match(method, u.EscapedPath())
	if !ok {
		l.t.Errorf("%s %s: no operation of the spec matches", method, path)
		return got
	}
	l.asked[op]++
	if err := l.c.CheckAnswer(op, resp.StatusCode, got); err != nil {
		l.t.Errorf("%s %s: %v\n%s", method, path, err, truncateBytes(got, 600))
	}
	return got
}

func (l *liveCheck) get(path string, want int) []byte {
	l.t.Helper()
	return l.do(http.MethodGet, path, "", want)
}

// everyOperationAsked fails for an operation no request reached.
func (l *liveCheck) everyOperationAsked() {
	l.t.Helper()
	n := 0
	for _, op := range l.c.Operations() {
		if l.asked[op] == 0 {
			l.t.Errorf("no request of %s", op)
		}
		n += l.asked[op]
	}
	l.t.Logf("%d answers of %d operations checked", n, len(l.asked))
}

// Every operation on the btcd demo chain with a tx index, block filters
// and fiat rates from a local CoinGecko-speaking server.
func TestOpenAPIBitcoinAnswers(t *testing.T) {
	inst, g := startOpenAPIStack(t)
	l := &liveCheck{t: t, c: openAPIChecker(t), base: inst.base, asked: map[openapicheck.Op]int{}}
	l.bitcoinReads(g)
	l.bitcoinSends(g)
	l.everyOperationAsked()

	// The spec as served, and its page valid HTML.
	if got := fetchPage(t, inst.base, "/openapi.yaml"); !bytes.Equal(got.body, server.OpenAPISpec()) || got.status != 200 {
		t.Errorf("/openapi.yaml: %d, %d bytes", got.status, len(got.body))
	}
	docs := fetchPage(t, inst.base, "/api-docs")
	if docs.status != 200 || docs.doc == nil {
		t.Fatalf("/api-docs: %d %s", docs.status, docs.ctype)
	}
	validateHTML(t, []*htmlPage{docs})
}

// startOpenAPIStack is blockbook synced to the demo chain on a btcd node
// with a tx index, with block filters and fiat rates.
func startOpenAPIStack(t *testing.T) (*instance, *chaingen.Generator) {
	t.Helper()
	prov := fiatProvider(t)
	node := startNodeWith(t, regtest.Options{TxIndex: true})
	g := demoChain(t)
	submit(t, g, node, 1)
	cfg := writeConfig(t, node, map[string]any{
		"block_golomb_filter_p": 20, "block_filter_scripts": "taproot-noordinals", "block_filter_use_zeroed_key": true,
		"fiat_rates": "coingecko", "fiat_rates_vs_currencies": "USD,EUR,BTC,JPY",
		"fiat_rates_params": fmt.Sprintf(`{"coin": "bitcoin", "periodSeconds": 900, "url": %q, "tipUrl": %q}`, prov.URL(), prov.URL()),
	})
	inst := startInProcess(t, cfg, t.TempDir(), func(o *app.Options) {
		o.FiatConfig = func(c *fiat.Config) {
			c.Now = func() time.Time { return fiatNow }
			c.RequestGap = time.Millisecond
		}
	})
	h, hash := g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	waitMempoolInSync(t, inst.base)
	waitStatus(t, inst.base, func(s *api.SystemInfo) bool { return s.Blockbook.HistoricalFiatRatesTime != nil })
	return inst, g
}

// bitcoinReads asks every read operation, with each details level and
// the user errors of the main routes.
func (l *liveCheck) bitcoinReads(g *chaingen.Generator) {
	t := l.t
	t.Helper()
	h, hash := g.Tip()
	txs := notableTxs(t, g)
	addr := func(k chaingen.ScriptKind) string {
		a, err := g.Address(k, chaingen.DemoIndex)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	acct := hdAccounts(t, g, "openapi")[2]
	l.get("/api/v2", 200)
	l.get("/api/v2/", 200)
	for _, p := range []string{"1", fmt.Sprint(h), hash.String()} {
		l.get("/api/v2/block/"+p, 200)
		l.get("/api/v2/rawblock/"+p, 200)
		l.get("/api/v2/feestats/"+p, 200)
	}
	l.get("/api/v2/block-index/1", 200)
	l.get("/api/v2/block-index/99999", 0) // 200 {"blockHash": ""} in Blockbook
	for _, txid := range txs {
		l.get("/api/v2/tx/"+txid, 200)
	}
	l.get("/api/v2/tx-specific/"+txs["coinbase"], 200)
	l.get("/api/v2/rawtx/"+txs["spend-witness_v1_taproot"], 200)
	for _, k := range []chaingen.ScriptKind{chaingen.P2TR, chaingen.P2WPKH, chaingen.P2PKH, chaingen.P2WSHMultisig} {
		for _, d := range []string{"basic", "tokens", "tokenBalances", "txids", "txslight", "txs"} {
			l.get("/api/v2/address/"+addr(k)+"?details="+d+"&secondary=usd", 200)
		}
		l.get("/api/v2/utxo/"+addr(k), 200)
		l.get("/api/v2/balancehistory/"+addr(k)+"?groupBy=86400&fiatcurrency=usd,eur", 200)
	}
	for _, d := range []string{"basic", "tokenBalances&tokens=derived", "txs"} {
		l.get("/api/v2/xpub/"+acct.Xpub()+"?details="+d, 200)
	}
	l.get("/api/v2/xpub/"+url.PathEscape(acct.Descriptor(true))+"?details=tokens&tokens=derived&gap=3", 200)
	l.get("/api/v2/utxo/"+acct.Xpub(), 200)
	l.get("/api/v2/balancehistory/"+acct.Xpub(), 200)
	l.get("/api/v2/estimatefee/2", 200)
	l.get("/api/v2/contract/"+addr(chaingen.P2TR), 400)
	l.get("/api/v2/block-filters/?scriptType=taproot-noordinals&lastN=5", 200)
	l.get(fmt.Sprintf("/api/v2/block-filters/?scriptType=taproot-noordinals&from=%d&to=%d", h-1, h+2), 200)
	l.get("/api/v2/tickers/", 200)
	l.get("/api/v2/tickers/?timestamp=1700000000&currency=eur", 200)
	l.get("/api/v2/tickers/?block=1", 200)
	l.get("/api/v2/multi-tickers/?timestamp=1600000000,1700000000,1800000000", 200)
	l.get("/api/v2/tickers-list/?timestamp=1700000000", 200)
	for _, p := range []string{"/api/v2/tx/zz", "/api/v2/block/-1", "/api/v2/address/nope", "/api/v2/xpub/nope",
		"/api/v2/estimatefee/0", "/api/v2/tickers/?timestamp=x", "/api/v2/multi-tickers/", "/api/v2/tickers-list/",
		"/api/v2/block-filters/?scriptType=taproot", "/api/v2/sendtx/zz"} {
		l.get(p, 400)
	}
	// This index is built without the pushdata index (its answers are
	// checked in TestE2EPushdata).
	l.do(http.MethodPost, "/api/v2/pushdata/search", `{"hashes": ["`+strings.Repeat("ab", 32)+`"]}`, 400)
	// nor the Runes index (TestE2ERunes checks its answers against the spec)
	l.get("/api/v2/rune/840000:3", 400)
	l.get("/api/v2/address/"+addr(chaingen.P2TR)+"?runes=true", 400)
	l.get("/api/v2/rune-history/"+addr(chaingen.P2TR), 400)
	// nor the Silent Payments index (TestE2ESilentPayments has its goldens)
	l.get("/api/v2/sp-tweaks/1", 400)
}

// bitcoinSends broadcasts two payments, by GET and by POST (and one again,
// refused), then asks the pending answers.
func (l *liveCheck) bitcoinSends(g *chaingen.Generator) {
	t := l.t
	t.Helper()
	unused, err := g.Address(chaingen.P2WPKH, 999_999)
	if err != nil {
		t.Fatal(err)
	}
	var pays []string
	for i := range 2 {
		pay, err := g.CreatePayment([]chaingen.Output{{Address: unused, Value: 20000 + int64(i)}}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := pay.Serialize(&buf); err != nil {
			t.Fatal(err)
		}
		pays = append(pays, fmt.Sprintf("%x", buf.Bytes()))
	}
	var sent api.Result
	if err := json.Unmarshal(l.get("/api/v2/sendtx/"+pays[0], 200), &sent); err != nil {
		t.Fatal(err)
	}
	l.do(http.MethodPost, "/api/v2/sendtx/", pays[1], 200)
	l.do(http.MethodPost, "/api/v2/sendtx", pays[1], 400) // already sent
	waitAddress(t, l.base, unused, func(a *api.Address) bool { return a.UnconfirmedTxs == 2 })
	l.get("/api/v2/address/"+unused+"?details=txs", 200)
	l.get("/api/v2/address/"+unused+"?details=txslight", 200)
	l.get("/api/v2/utxo/"+unused, 200)
	l.get("/api/v2/tx/"+sent.Result, 200)
	l.get("/api/v2/tx-specific/"+sent.Result, 200)
}

// Every operation on a geth dev chain with the Ethereum scenario: its
// answers, and the not-supported 400s of the Bitcoin-only ones.
func TestOpenAPIEthereumAnswers(t *testing.T) {
	e := startEthE2E(t)
	l := &liveCheck{t: t, c: openAPIChecker(t), base: e.inst.base, asked: map[openapicheck.Op]int{}}
	l.get("/api/v2", 200)
	l.get("/api/v2/", 200)
	for _, b := range e.ledger.Blocks {
		l.get(fmt.Sprint("/api/v2/block/", b.Number), 200)
		l.get(fmt.Sprint("/api/v2/block-index/", b.Number), 200)
	}
	l.get("/api/v2/block-index/99999", 0)
	for h := range e.ledger.Txs {
		l.get("/api/v2/tx/"+h.Hex(), 200)
	}
	for _, a := range e.ledger.SortedAddresses() {
		l.get("/api/v2/address/"+a.Hex()+"?details=txs", 200)
		l.get("/api/v2/address/"+a.Hex()+"?details=tokenBalances", 200)
		l.get("/api/v2/balancehistory/"+a.Hex()+"?groupBy=60", 200)
	}
	for c := range e.ledger.Contracts {
		l.get("/api/v2/contract/"+c.Hex(), 200)
		l.get("/api/v2/address/"+c.Hex()+"?details=basic", 200)
	}
	l.get("/api/v2/estimatefee/1", 200)
	var someTx, someAddr string
	for h := range e.ledger.Txs {
		someTx = h.Hex()
		break
	}
	someAddr = e.ledger.SortedAddresses()[0].Hex()
	// Served for Ethereum-type coins too, as Blockbook does: tx-specific
	// is the tx with its receipt, rawtx its 0x hex.
	l.get("/api/v2/tx-specific/"+someTx, 200)
	l.get("/api/v2/rawtx/"+someTx, 200)
	for _, p := range []string{"/api/v2/rawblock/1", "/api/v2/feestats/1",
		"/api/v2/xpub/" + someAddr, "/api/v2/utxo/" + someAddr, "/api/v2/block-filters/?lastN=1",
		"/api/v2/tickers/", "/api/v2/tickers-list/?timestamp=1", "/api/v2/address/0x12", "/api/v2/sendtx/zz"} {
		l.get(p, 400)
	}
	l.get("/api/v2/multi-tickers/?timestamp=1700000000", 200)
	l.do(http.MethodPost, "/api/v2/sendtx/", "0x00", 400)
	l.do(http.MethodPost, "/api/v2/sendtx", "zz", 400)
	// Bitcoin-type only: the documented "not supported" answer.
	l.do(http.MethodPost, "/api/v2/pushdata/search", `{"hashes": []}`, 400)
	l.get("/api/v2/rune/UNCOMMON.GOODS", 400)
	l.get("/api/v2/rune-history/0x12", 400)
	l.get("/api/v2/sp-tweaks/1", 400)
	l.everyOperationAsked()
}
