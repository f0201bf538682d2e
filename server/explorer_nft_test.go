package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

// The NFT metadata reader's bounds against a local host: as the trusted
// gateway it is read (an object, an image, a document over the size
// bound, a redirect loop, a slow answer, not JSON); as a contract's own
// http host it is refused before any byte is sent.
func TestNFTMetadataBounds(t *testing.T) {
	var mu sync.Mutex // a slow answer may still run when the next comes
	hitMap := map[string]int{}
	hits := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hitMap[path]
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hitMap[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/ipfs/ok":
			_, _ = w.Write([]byte(`{"name":"A","description":"B","image":"data:image/png;base64,iVBORw0KGgo=","external_url":"javascript:alert(1)","attributes":[{"trait_type":"t","value":1},{"value":"v"}]}`))
		case "/ipfs/img":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG"))
		case "/ipfs/big":
			_, _ = w.Write([]byte(`"` + strings.Repeat("x", nftMaxBytes) + `"`))
		case "/ipfs/loop":
			http.Redirect(w, r, "/ipfs/loop", http.StatusFound)
		case "/ipfs/slow":
			time.Sleep(300 * time.Millisecond)
		case "/ipfs/text":
			_, _ = w.Write([]byte("hello"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := newNFTFetcher(srv.URL+"/ipfs", 150*time.Millisecond)
	ctx := context.Background()

	m := f.read(ctx, "ipfs://ipfs/ok")
	if m.Note != "" || m.Name != "A" || m.Description != "B" || m.Source != srv.URL+"/ipfs/ok" {
		t.Errorf("ok: %+v", m)
	}
	if m.Image == nil || m.Image.Inline != "data:image/png;base64,iVBORw0KGgo=" || m.ExternalURL != "" {
		t.Errorf("ok: image %+v, external %q (javascript: must not be a link)", m.Image, m.ExternalURL)
	}
	if len(m.Attributes) != 2 || m.Attributes[0] != (nftAttr{"t", "1"}) || m.Attributes[1] != (nftAttr{"—", "v"}) {
		t.Errorf("ok: attributes %+v", m.Attributes)
	}
	if f.read(ctx, "ipfs://ok"); hits("/ipfs/ok") != 1 {
		t.Errorf("the document was read %d times, want 1 (cached)", hits("/ipfs/ok"))
	}
	for uri, note := range map[string]string{
		"ipfs://img":                         "names an image",
		"ipfs://big":                         "larger than 256 KB",
		"ipfs://loop":                        "too many redirects",
		"ipfs://slow":                        "no answer within",
		"ipfs://text":                        "not JSON",
		"ipfs://none":                        "404",
		"gopher://x":                         "data:, http(s): and ipfs: URIs only",
		"":                                   "no URI",
		srv.URL + "/ipfs/ok?contract-chosen": "not a public address",
		"data:application/json;base64,!!":    "base64 is malformed",
	} {
		if m := f.read(ctx, uri); !strings.Contains(m.Note, note) {
			t.Errorf("%q: note %q, want %q", uri, m.Note, note)
		}
	}
	if hits("/ipfs/ok") != 1 {
		t.Errorf("a contract-chosen loopback URL reached the host")
	}
	if off := newNFTFetcher("none", time.Second); !strings.Contains(off.read(ctx, "ipfs://x").Note, "not read") || off.link("ipfs://x") != "" {
		t.Errorf("gateway none still reads IPFS")
	}
}

// data: URIs: base64 (padded or not) and percent-encoded JSON, an inline
// SVG image, and an image type not shown inline.
func TestNFTDataURIs(t *testing.T) {
	f := newNFTFetcher("https://gw.example/ipfs/", time.Second)
	m := f.read(context.Background(), `data:application/json,{"name":"x%20y","image":"data:image/svg+xml;base64,PHN2Zy8+"}`)
	if m.Name != "x y" || m.Image == nil || m.Image.Inline != "data:image/svg+xml;base64,PHN2Zy8+" || m.Source != "" {
		t.Errorf("percent-encoded: %+v %+v", m, m.Image)
	}
	m = f.read(context.Background(), "data:application/json;base64,eyJpbWFnZSI6ImlwZnM6Ly9hL2IucG5nIn0")
	if m.Image == nil || m.Image.Link != "https://gw.example/ipfs/a/b.png" {
		t.Errorf("base64 without padding: %+v", m.Image)
	}
	if img := f.image("data:text/html;base64,PGI+"); img.Inline != "" || img.Link != "" {
		t.Errorf("an html data: URI is shown as %+v", img)
	}
}

// ethL1Fake answers an OP-stack tx (the values of a real Optimism receipt).
type ethL1Fake struct{ explorerFake }

func (f *ethL1Fake) Info(context.Context) (*api.WsInfo, error) {
	return &api.WsInfo{Name: "Optimism", Shortcut: "ETH", Decimals: 18}, nil
}

func (f *ethL1Fake) Tx(context.Context, string) (*api.Tx, error) {
	gas := uint64(52000)
	return &api.Tx{Txid: "0x" + strings.Repeat("ab", 32), BlockHeight: 5, Confirmations: 1, Value: api.NewAmount(0), Fees: api.NewAmount(44700351261503 + 52000*58),
		Vin: []api.Vin{{Addresses: []string{"0x1"}, IsAddress: true}}, Vout: []api.Vout{{Addresses: []string{"0x2"}, IsAddress: true}},
		EthereumSpecific: &api.EthereumSpecific{Status: 1, GasLimit: 60000, GasUsed: &gas, GasPrice: api.NewAmount(58),
			L1Fee: json.Number("44700351261503"), L1FeeScalar: "0.684", L1GasPrice: api.NewAmount(15694378178), L1GasUsed: json.Number("4164")}}, nil
}

// An OP-stack tx page shows the L1 fee fields as Blockbook's does; a tx
// without them shows none.
func TestExplorerL1Fees(t *testing.T) {
	p := NewPublic(&ethL1Fake{}, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/tx/0x"+strings.Repeat("ab", 32), nil))
	body := html.UnescapeString(rec.Body.String())
	for id, want := range map[string]string{
		"tx-l1fee":       "0.000044700351261503 ETH",
		"tx-l1gasused":   "4,164",
		"tx-l1gasprice":  "0.000000015694378178 ETH (15.694378178 Gwei)",
		"tx-l1feescalar": "0.684",
	} {
		if !strings.Contains(body, `id="`+id+`">`+want+`<`) {
			t.Errorf("no %s %q:\n%s", id, want, body)
		}
	}
	e := &explorer{}
	if rows := e.l1Rows(&api.EthereumSpecific{Status: 1}); len(rows) != 0 {
		t.Errorf("rows without L1 fields: %+v", rows)
	}
}

// Only public addresses are dialled for a contract's own URL.
func TestNFTPublicOnly(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:80": false, "10.1.2.3:80": false, "192.168.1.1:443": false, "172.16.0.1:80": false,
		"169.254.169.254:80": false, "100.64.0.1:80": false, "0.1.2.3:80": false, "[::1]:80": false,
		"[fe80::1]:80": false, "[fd00::1]:80": false, "[::ffff:127.0.0.1]:80": false, "224.0.0.1:80": false,
		"[64:ff9b::a9fe:a9fe]:80": false, "[2002:a9fe:a9fe::1]:80": false, "198.18.0.1:80": false, "240.0.0.1:80": false,
		"8.8.8.8:443": true, "[2606:4700::1111]:443": true,
	} {
		if err := nftPublicOnly("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("%s: %v, want allowed %v", addr, err, ok)
		}
	}
}

// A token URI and its metadata are the contract author's bytes: never a
// panic, never an inline image that is not a checked data: image.
func FuzzNFTMetadata(f *testing.F) {
	f.Add(`data:application/json,{"name":"x","image":"data:image/svg+xml;base64,PHN2Zy8+"}`)
	f.Add(`data:;base64,e30=`)
	f.Add(`data:image/png,%89PNG`)
	fetcher := newNFTFetcher("none", time.Second)
	f.Fuzz(func(t *testing.T, uri string) {
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(uri)), "data:") {
			return // only data: URIs are read without the network
		}
		m := fetcher.read(context.Background(), uri)
		if m.Image != nil && m.Image.Inline != "" && !strings.HasPrefix(string(m.Image.Inline), "data:image/") {
			t.Fatalf("inline image %q", m.Image.Inline)
		}
	})
}

// Deeply nested metadata is shown compacted, not indented: indentation
// grows with the square of the depth (20 KB of brackets indent to 200 MB).
func TestNFTDeepMetadataBounded(t *testing.T) {
	f := newNFTFetcher("", time.Second)
	deep := strings.Repeat("[", 9990) + strings.Repeat("]", 9990) // Go decodes 10,000 levels
	body := `{"name":"deep","x":[` + strings.Repeat(deep+",", 11) + deep + `]}`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m := f.read(context.Background(), "data:application/json,"+body)
	runtime.ReadMemStats(&after)
	if m.Name != "deep" || len(m.Raw) == 0 || len(m.Raw) > nftMaxRaw+8 {
		t.Fatalf("name %q, raw %d bytes", m.Name, len(m.Raw))
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("reading 260 KB of nested metadata allocated %d MB", grew>>20)
	}
	if got := indentBounded([]byte(`{"a":[1,2]}`), 1<<10); got != "{\n  \"a\": [\n    1,\n    2\n  ]\n}" {
		t.Fatalf("a small document is not indented: %q", got)
	}
}

// An on-chain image of several KB is shown in place, not cut as text.
func TestNFTLargeInlineImage(t *testing.T) {
	f := newNFTFetcher("", time.Second)
	svg := "<svg xmlns='http://www.w3.org/2000/svg'>" + strings.Repeat("<rect width='1' height='1'/>", 300) + "</svg>"
	img := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))
	doc, _ := json.Marshal(map[string]string{"name": "big", "image": img})
	m := f.read(context.Background(), "data:application/json;base64,"+base64.StdEncoding.EncodeToString(doc))
	if m.Image == nil || m.Image.Inline == "" {
		t.Fatalf("a %d-byte image is not shown: %+v", len(img), m.Image)
	}
}

// An ipfs: URI stays in the gateway's /ipfs/ tree, and the gateway's
// redirects stay on its host.
func TestNFTGatewayBounds(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"name":"elsewhere"}`))
	}))
	defer other.Close()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ipfs/here" {
			_, _ = w.Write([]byte(`{"name":"here"}`))
			return
		}
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	}))
	defer gw.Close()
	f := newNFTFetcher(gw.URL+"/ipfs/", time.Second)
	if m := f.read(context.Background(), "ipfs://here"); m.Name != "here" {
		t.Fatalf("the gateway's own answer: %+v", m)
	}
	if m := f.read(context.Background(), "ipfs://away"); m.Name != "" || !strings.Contains(m.Note, "could not be read") {
		t.Fatalf("a redirect off the gateway's host was followed: %+v", m)
	}
	for _, u := range []string{"ipfs://../../admin", "ipfs://a/../../b", "ipfs://a?b", "ipfs://a#b"} {
		if m := f.read(context.Background(), u); m.Name != "" || m.Source != "" {
			t.Errorf("%s was read: %+v", u, m)
		}
	}
}
