package sphttp_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
	"github.com/openexplorer/blockbook/db/optional/silentpayments"
	"github.com/openexplorer/blockbook/internal/bip352"
	"github.com/openexplorer/blockbook/sphttp"
	"github.com/openexplorer/blockbook/tools/spchain"
)

// The front over the real query service and index (in memory), holding
// the Silent Payments test chain (tools/spchain). Expected values come
// from the chain generator's record, not from the code under test.

var (
	chainOnce sync.Once
	chain     *spchain.Chain
	chainErr  error
)

func testChain(t testing.TB) *spchain.Chain {
	t.Helper()
	chainOnce.Do(func() { chain, chainErr = spchain.Build("sphttp") })
	if chainErr != nil {
		t.Fatal(chainErr)
	}
	return chain
}

// serve indexes blocks (with the tweak index when tweaks) and serves the
// front over them.
func serve(t testing.TB, blocks []*bchain.Block, tweaks bool) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	d, err := memdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	parser := btc.NewParser(&chaincfg.RegressionNetParams)
	x, err := db.NewUtxoIndex(d, parser, 300, db.FilterParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.EnableOptional(silentpayments.Index{}, tweaks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	be := &bchain.Backend{Type: bchain.ChainBitcoinType, Params: bchain.CoinParams{Name: "Regtest", Network: "regtest"}, Utxo: parser}
	svc := api.NewUtxoService(d, be, nil, api.Config{Log: quiet})
	srv := httptest.NewServer(sphttp.New(svc, sphttp.Options{Log: quiet}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func get[T any](t *testing.T, base, path string) T {
	t.Helper()
	var v T
	if err := spchain.GetJSON(base, path, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// BlindBit's routes: the tip, a block's hash, the tweaks with and
// without cut-through and dust, and the utxos from which a wallet that
// knows only its keys finds exactly its payments.
func TestBlindBitRoutes(t *testing.T) {
	c := testChain(t)
	base := serve(t, c.Main, true)
	pay := c.SP.PayHeight
	if got := get[map[string]uint32](t, base, "/block-height"); got["block_height"] != uint32(c.SP.SpendHeight) {
		t.Fatalf("block-height %v, want %d", got, c.SP.SpendHeight)
	}
	if got := get[map[string]string](t, base, fmt.Sprintf("/block-hash/%d", pay)); got["block_hash"] != c.Main[pay].Hash.String() {
		t.Fatalf("block-hash %v", got)
	}
	counts := map[string]int{
		"/tweak-index/%d": 5, "/tweaks/%d": 4, // the P2PKH-funded payment is spent
		"/tweaks/%d?dustLimit=150000000":      1, // only the pair keeps 2 BTC unspent
		"/tweaks/%d?dustLimit=250000000":      0,
		"/tweak-index/%d?dustLimit=250000000": 1, // the pair's 3 BTC, spent or not
		"/tweak-index/%d?dustLimit=100000000": 4, // all but the 0.5 BTC payment
	}
	for path, want := range counts {
		if got := get[[]string](t, base, fmt.Sprintf(path, pay)); len(got) != want {
			t.Errorf("%s: %d tweaks, want %d", fmt.Sprintf(path, pay), len(got), want)
		}
	}
	s, err := bip352.NewScanner(c.Receiver.ScanKey(), c.Receiver.SpendPub(), c.Receiver.Labels)
	if err != nil {
		t.Fatal(err)
	}
	found, err := spchain.Scan(base, uint32(pay), "/tweak-index/", s)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != len(c.SP.Payments) {
		t.Fatalf("found %d outputs, want the %d payments", len(found), len(c.SP.Payments))
	}
	for _, p := range c.SP.Payments {
		f, ok := found[p.Key]
		if !ok || f.Txid != reversed(p.Outpoint.Hash) || f.Vout != p.Outpoint.Index || f.Value != uint64(p.Value) {
			t.Errorf("payment %v: found %+v", p.Outpoint, f)
		}
		if f.Labeled != (p.Label != nil) || f.Spent != slices.Contains(c.SP.Spent, p.Outpoint) {
			t.Errorf("payment %v: labeled %v spent %v", p.Outpoint, f.Labeled, f.Spent)
		}
	}
	if _, ok := found[c.SP.Skipped.Key]; ok {
		t.Error("found the payment of the tx with a witness v2 input")
	}
}

func reversed(h [32]byte) string {
	slices.Reverse(h[:])
	return fmt.Sprintf("%x", h)
}

// The BIP352 index-server routes: getinfo, and tweaks with filterSpent
// and dustLimit echoed.
func TestSpecRoutes(t *testing.T) {
	c := testChain(t)
	base := serve(t, c.Main, true)
	info := get[map[string]any](t, base, "/bip352/getinfo")
	if info["network"] != "regtest" || info["block_height"] != float64(c.SP.SpendHeight) || info["filter_spent"] != "optional" {
		t.Fatalf("getinfo %v", info)
	}
	type tweaks struct {
		Height      uint32   `json:"height"`
		Hash        string   `json:"hash"`
		DustLimit   uint64   `json:"dust_limit"`
		FilterSpent int      `json:"filter_spent"`
		Tweaks      []string `json:"tweaks"`
	}
	pay := c.SP.PayHeight
	for q, want := range map[string]tweaks{
		"":                                      {DustLimit: 0, FilterSpent: 0, Tweaks: make([]string, 5)},
		"?filterSpent=1":                        {FilterSpent: 1, Tweaks: make([]string, 4)},
		"?filterSpent=true&dustLimit=150000000": {DustLimit: 150000000, FilterSpent: 1, Tweaks: make([]string, 1)},
		"?dustLimit=250000000":                  {DustLimit: 250000000, Tweaks: make([]string, 1)},
	} {
		got := get[tweaks](t, base, fmt.Sprintf("/bip352/tweaks/%d%s", pay, q))
		if got.Height != uint32(pay) || got.Hash != c.Main[pay].Hash.String() || got.DustLimit != want.DustLimit ||
			got.FilterSpent != want.FilterSpent || len(got.Tweaks) != len(want.Tweaks) {
			t.Errorf("%s: %+v", q, got)
		}
	}
	idx := get[struct {
		Index []struct {
			Txid    string   `json:"txid"`
			Tweak   string   `json:"tweak"`
			Outputs []string `json:"outputs"`
		} `json:"index"`
	}](t, base, fmt.Sprintf("/bip352/compute-index/%d?filterSpent=1", pay))
	if len(idx.Index) != 4 {
		t.Fatalf("compute-index: %d txs, want 4", len(idx.Index))
	}
	for _, e := range idx.Index {
		if len(e.Outputs) != 1 || len(e.Outputs[0]) != 16 {
			t.Errorf("compute-index %s: outputs %v, want one short key", e.Txid, e.Outputs)
		}
	}
}

// Bad input gets a 400 in each wire's error shape, never a 500.
func TestBadInput(t *testing.T) {
	c := testChain(t)
	base := serve(t, c.Main, true)
	off := serve(t, c.Main[:3], false)
	for _, tc := range []struct {
		base, path string
		status     int
		body       string
	}{
		{base, "/tweaks/abc", 400, `{"error":"invalid block height \"abc\"`},
		{base, "/tweaks/-1", 400, `{"error":"invalid block height`},
		{base, "/tweaks/+1", 400, `{"error":"invalid block height`},
		{base, "/tweaks/99999999999", 400, `{"error":"invalid block height`},
		{base, "/tweaks/4294967295", 400, `{"error":"block height 4294967295 is above the tip`},
		{base, "/block-hash/1000", 400, `{"error":"block height 1000 is above the tip`},
		{base, "/tweaks/1?dustLimit=x", 400, `{"error":"invalid dustLimit \"x\"`},
		{base, "/utxos/", 404, `{"error":"unknown route`},
		{base, "/nope", 404, `{"error":"unknown route`},
		{base, "/bip352/tweaks/abc", 400, `{"error":{"code":400,"message":"Bad Request","details":"invalid block height`},
		{base, "/bip352/tweaks/1?filterSpent=2", 400, `{"error":{"code":400,"message":"Bad Request","details":"invalid filterSpent`},
		{base, "/bip352/tweaks/1?dustLimit=-5", 400, `{"error":{"code":400,"message":"Bad Request","details":"invalid dustLimit`},
		{base, "/bip352/nope", 404, `{"error":{"code":404`},
		{off, "/tweaks/1", 400, `{"error":"Silent Payments index is not enabled`},
		{off, "/bip352/getinfo", 400, `{"error":{"code":400,"message":"Bad Request","details":"Silent Payments index is not enabled`},
	} {
		resp, err := http.Get(tc.base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.HasPrefix(string(body), tc.body) || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %s %q, want %d %s", tc.path, resp.StatusCode, body, resp.Header.Get("Content-Type"), tc.status, tc.body)
		}
	}
}

// BlindBit's filters and spent index: the new-utxos filter matches every
// taproot key the block creates, the spent index of the spending block is
// exactly the short hashes of the two spent payments (computed here from
// the wire outpoints and block hash), and its filter matches them.
func TestFilters(t *testing.T) {
	c := testChain(t)
	base := serve(t, c.Main, true)
	type filter = spchain.Filter
	match := func(f filter, items [][]byte) bool {
		ok, n, err := f.Matches(items)
		if err != nil {
			t.Fatal(err)
		}
		return ok && n == uint32(len(items))
	}
	pay, spend := c.SP.PayHeight, c.SP.SpendHeight
	var keys [][]byte
	for _, tx := range c.Main[pay].Txs {
		for _, o := range tx.Vout {
			if bip352.IsP2TR(o.Script) {
				keys = append(keys, o.Script[2:])
			}
		}
	}
	nu := get[filter](t, base, fmt.Sprintf("/filter/new-utxos/%d", pay))
	if nu.FilterType != 4 || nu.BlockHeight != uint32(pay) || nu.BlockHash != c.Main[pay].Hash.String() || !match(nu, keys) {
		t.Fatalf("new-utxos filter %+v does not hold the block's %d taproot keys", nu, len(keys))
	}
	blockHash := c.MainRaw[spend].BlockHash()
	var want []string
	var items [][]byte
	for _, op := range c.SP.Spent {
		b := binary.LittleEndian.AppendUint32(append([]byte(nil), op.Hash[:]...), op.Index)
		sum := sha256.Sum256(append(b, blockHash[:]...))
		want, items = append(want, hex.EncodeToString(sum[:8])), append(items, sum[:8])
	}
	si := get[struct {
		BlockHash string   `json:"block_hash"`
		Data      []string `json:"data"`
	}](t, base, fmt.Sprintf("/spent-index/%d", spend))
	slices.Sort(want)
	slices.Sort(si.Data)
	if si.BlockHash != blockHash.String() || !slices.Equal(si.Data, want) {
		t.Fatalf("spent index %+v, want %v", si, want)
	}
	if sp := get[filter](t, base, fmt.Sprintf("/filter/spent/%d", spend)); !match(sp, items) {
		t.Fatalf("spent filter %+v does not hold the spent index", sp)
	}
	if g := get[filter](t, base, "/filter/spent/0"); !match(g, nil) { // the genesis block spends nothing
		t.Fatalf("empty filter %+v", g)
	}
	resp, err := http.Get(base + "/filter/other/1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("unknown filter type: %d", resp.StatusCode)
	}
}
