package e2e

// The explorer's token pages on the Ethereum dev chains: Blockbook's
// /nft/<contract>/<id> for ethgen's ERC-721 and ERC-1155 tokens (their URIs
// read from the contracts, their ipfs:// metadata served through the
// gateway by a metadata server double), a contract's total supply; on the
// vault chain MetaNFT's data: URIs, a URI on a private host (refused), an
// oversized document, and the ENS name on address pages.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"golang.org/x/net/html"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
)

// metaDouble is an IPFS gateway and metadata host double: every e2e
// instance reads ipfs:// through it (so no test reaches the Internet), and
// it counts the reads of each path.
type metaDouble struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

var (
	metaOnce sync.Once
	metaSrv  *metaDouble
)

// nftGateway is the gateway URL of the double, started once per process.
func nftGateway() string {
	metaOnce.Do(func() {
		metaSrv = &metaDouble{hits: map[string]int{}}
		metaSrv.srv = httptest.NewServer(metaSrv)
	})
	return metaSrv.srv.URL + "/ipfs/"
}

func (m *metaDouble) count(path string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits[path]
}

func (m *metaDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.hits[r.URL.Path]++
	m.mu.Unlock()
	if r.URL.Path == "/ipfs/big.json" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"name":"big","pad":"%s"}`, strings.Repeat("x", 300<<10))
		return
	}
	doc := metaDoc(strings.TrimPrefix(r.URL.Path, "/ipfs/"))
	if doc == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// metaDoc is the metadata the double serves at an ipfs path: ethgen's
// NFT's one document, and a MultiToken document per id (the name says the
// id the path's 64 hex digits give, so a page naming it read the right one).
func metaDoc(path string) map[string]any {
	switch {
	case path == "ethgen/nft":
		return map[string]any{"name": "ethgen NFT", "description": "A token of ethgen's scenario.", "image": "ipfs://ethgen/nft.svg",
			"external_url": "https://example.org/ethgen", "attributes": []any{
				map[string]any{"trait_type": "scenario", "value": "ethgen"}, map[string]any{"trait_type": "level", "value": 3}}}
	case strings.HasPrefix(path, "ethgen/multi/") && strings.HasSuffix(path, ".json"):
		h := strings.TrimSuffix(strings.TrimPrefix(path, "ethgen/multi/"), ".json")
		id, ok := new(big.Int).SetString(h, 16)
		if !ok || len(h) != 64 {
			return nil
		}
		return map[string]any{"name": "ethgen multi #" + id.String(), "image": "https://example.org/multi.png",
			"attributes": []any{map[string]any{"trait_type": "id", "value": id.String()}}}
	}
	return nil
}

// callString reads a string method of a contract at the node's tip; ""
// when it reverts.
func callString(t *testing.T, client interface {
	CallContract(context.Context, ethereum.CallMsg, *big.Int) ([]byte, error)
}, to common.Address, ct *ethgen.Contract, method string, args ...any) string {
	t.Helper()
	out, err := client.CallContract(context.Background(), ethereum.CallMsg{To: &to, Data: ct.MustCalldata(method, args...)}, nil)
	if err != nil {
		return ""
	}
	v, err := ct.ABI.Unpack(method, out)
	if err != nil || len(v) != 1 {
		t.Fatalf("%s: %v %v", method, v, err)
	}
	return v[0].(string)
}

// checkTokenPages checks the NFT page of every ERC-721 and ERC-1155 token
// the scenario mined, against the contracts' own URIs and the double's
// documents, and a few bad requests; it returns a page of each standard.
func (e *ethE2E) checkTokenPages(t *testing.T) map[string]*htmlPage {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("the NFT pages took %v", time.Since(start).Round(time.Millisecond)) }()
	nft, multi := ethgen.MustContract(ethgen.NFTContract), ethgen.MustContract(ethgen.MultiTokenContract)
	gw := nftGateway()
	seen := map[string]bool{}
	out := map[string]*htmlPage{}
	for _, tx := range e.ledger.Txs {
		for _, tt := range tx.TokenTransfers {
			key := tt.Contract.Hex() + "/" + fmt.Sprint(tt.TokenID)
			if tx.Pending || tt.Standard == ethgen.ERC20 || seen[key] {
				continue
			}
			seen[key] = true
			p := fetchPage(t, e.inst.base, "/nft/"+key)
			if p.status != 200 {
				t.Errorf("nft %s: status %d", key, p.status)
				continue
			}
			c := e.ledger.Contracts[tt.Contract]
			var uri, source string
			if tt.Standard == ethgen.ERC721 {
				uri = callString(t, e.dev.Client(), tt.Contract, nft, "tokenURI", tt.TokenID)
				source = gw + strings.TrimPrefix(uri, "ipfs://")
			} else {
				uri = callString(t, e.dev.Client(), tt.Contract, multi, "uri", tt.TokenID)
				source = gw + strings.TrimPrefix(strings.ReplaceAll(uri, "{id}", fmt.Sprintf("%064x", tt.TokenID)), "ipfs://")
			}
			doc := metaDoc(strings.TrimPrefix(source, gw))
			if uri == "" || doc == nil {
				t.Fatalf("nft %s: the contract's URI %q names no document of the double", key, uri)
			}
			for _, ch := range [][3]string{
				{"id", p.textOf(t, "nft-id"), tt.TokenID.String()},
				{"contract", p.textOf(t, "nft-contract"), tt.Contract.Hex()},
				{"standard", p.textOf(t, "nft-standard"), c.Standard},
				{"uri", p.textOf(t, "nft-uri"), uri},
				{"source", p.textOf(t, "nft-source"), source},
				{"name", p.textOf(t, "nft-name"), doc["name"].(string)},
			} {
				if ch[1] != ch[2] {
					t.Errorf("nft %s: %s %q, want %q", key, ch[0], ch[1], ch[2])
				}
			}
			e.checkMetaShown(t, p, doc, gw)
			out["nft-"+strings.ToLower(tt.Standard)] = p
		}
	}
	if out["nft-erc721"] == nil || out["nft-erc1155"] == nil {
		t.Fatalf("NFT pages of %v only", slices.Collect(maps.Keys(out)))
	}
	// A second view is answered from the cache: the double is read once.
	if again := fetchPage(t, e.inst.base, out["nft-erc721"].path); again.textOf(t, "nft-name") != "ethgen NFT" {
		t.Errorf("the NFT's second view: name %q", again.textOf(t, "nft-name"))
	}
	if n := metaSrv.count("/ipfs/ethgen/nft"); n != 1 {
		t.Errorf("the NFT's metadata was read %d times for its views, want 1 (cached)", n)
	}
	var nftAddr common.Address
	for a, c := range e.ledger.Contracts {
		if c.Kind == ethgen.NFTContract {
			nftAddr = a
		}
	}
	// No such token: the contract refuses tokenURI, the page says so.
	p := fetchPage(t, e.inst.base, "/nft/"+nftAddr.Hex()+"/987654321")
	if p.status != 200 || !strings.Contains(p.textOf(t, "nft-uri"), "no URI") {
		t.Errorf("an unminted token: %d %q", p.status, text(p.doc))
	}
	for path, status := range map[string]int{
		"/nft/" + nftAddr.Hex() + "/abc": 400, "/nft/" + nftAddr.Hex() + "/-1": 400, "/nft/0xnope/1": 400,
		"/nft/" + nftAddr.Hex() + "/1" + strings.Repeat("0", 80): 400,
		"/nft/" + common.HexToAddress("0x1234").Hex() + "/1":     404,
	} {
		if p := fetchPage(t, e.inst.base, path); p.status != status {
			t.Errorf("%s: status %d, want %d: %s", path, p.status, status, text(p.doc))
		}
	}
	return out
}

// checkMetaShown compares a page's metadata rows with the document.
func (e *ethE2E) checkMetaShown(t *testing.T, p *htmlPage, doc map[string]any, gw string) {
	t.Helper()
	if d, ok := doc["description"].(string); ok && p.textOf(t, "nft-description") != d {
		t.Errorf("%s: description %q, want %q", p.path, p.textOf(t, "nft-description"), d)
	}
	img := doc["image"].(string)
	if strings.HasPrefix(img, "ipfs://") {
		img = gw + strings.TrimPrefix(img, "ipfs://")
	}
	if got := hrefs(p.byID("nft-image")); len(got) != 1 || got[0] != img {
		t.Errorf("%s: image links %q, want %s", p.path, got, img)
	}
	var want []string
	for _, a := range doc["attributes"].([]any) {
		m := a.(map[string]any)
		want = append(want, fmt.Sprint(m["trait_type"], " ", m["value"]))
	}
	if got := tableRows(p.byID("nft-attributes")); !slices.Equal(got, want) {
		t.Errorf("%s: attributes %q, want %q", p.path, got, want)
	}
	var shown map[string]any
	if err := json.Unmarshal([]byte(p.textOf(t, "nft-metadata")), &shown); err != nil || shown["name"] != doc["name"] {
		t.Errorf("%s: the metadata shown %v (%v), want the document", p.path, shown, err)
	}
}

// checkSupply compares a contract page's total supply with the
// contract's totalSupply(): shown in the token's decimals when it
// answers, absent when it does not.
func (e *ethE2E) checkSupply(t *testing.T, p *htmlPage, a common.Address, c *ethgen.ContractInfo) {
	t.Helper()
	out, err := e.dev.Client().CallContract(context.Background(), ethereum.CallMsg{To: &a, Data: []byte{0x18, 0x16, 0x0d, 0xdd}}, nil)
	got := p.byID("contract-supply")
	if err != nil || len(out) != 32 {
		if got != nil {
			t.Errorf("contract page %s: supply %q, the contract has none", a, text(got))
		}
		return
	}
	if want := fmtToken(new(big.Int).SetBytes(out), c.Decimals, c.Symbol); got == nil || text(got) != want {
		t.Errorf("contract page %s: supply %v, want %q", a, got, want)
	}
}

// checkMetaNFT deploys MetaNFT on the vault chain and checks its NFT
// pages: metadata in a data: URI (base64, with an SVG image shown in
// place; percent-encoded, with an ipfs image), a URI on a private host
// (refused unread), another scheme, and a document over the size bound.
func (c *vaultChain) checkMetaNFT(t *testing.T) []*htmlPage {
	t.Helper()
	ctx := context.Background()
	ct := ethgen.MustContract(ethgen.MetaNFTContract)
	_, addr, err := c.w.Deploy(ctx, c.devAcc, ct, "Meta", "META")
	if err != nil {
		t.Fatal(err)
	}
	c.commit(t)
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="#c33"/></svg>`
	onChain := map[string]any{"name": "On-chain #1", "description": "Metadata in a data: URI.",
		"image":      "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)),
		"attributes": []any{map[string]any{"trait_type": "where", "value": "on chain"}}}
	raw1, _ := json.Marshal(onChain)
	plain := map[string]any{"name": "Plain #2", "image": "ipfs://meta/2.png", "attributes": []any{}}
	raw2, _ := json.Marshal(plain)
	private := metaSrv.srv.URL + "/private/3.json"
	uris := []string{
		"data:application/json;base64," + base64.StdEncoding.EncodeToString(raw1),
		"data:application/json," + url.PathEscape(string(raw2)),
		private,
		"ftp://example.org/4.json",
		"ipfs://big.json",
	}
	var mints []*types.Transaction
	for i, u := range uris {
		data := ct.MustCalldata("mint", c.holder.Addr, big.NewInt(int64(i+1)), u)
		tx, err := c.w.Send(ctx, c.devAcc, &addr, data, ethgen.TxOpts{Type: types.DynamicFeeTxType, Gas: 4_000_000}) // a new slot costs far more on the dev chain than 20,000
		if err != nil {
			t.Fatal(err)
		}
		mints = append(mints, tx)
	}
	c.commit(t)
	for i, tx := range mints {
		if rc, err := c.dev.Client().TransactionReceipt(ctx, tx.Hash()); err != nil || rc.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("mint %d: %+v %v", i+1, rc, err)
		}
	}
	c.e.waitHead(t)
	base := c.e.inst.base
	var pages []*htmlPage
	page := func(id int) *htmlPage {
		p := fetchPage(t, base, fmt.Sprintf("/nft/%s/%d", addr.Hex(), id))
		if p.status != 200 {
			t.Fatalf("MetaNFT %d: status %d: %s", id, p.status, text(p.doc))
		}
		want := callString(t, c.dev.Client(), addr, ct, "tokenURI", big.NewInt(int64(id)))
		if got := p.textOf(t, "nft-uri"); want == "" || !strings.HasPrefix(got, want[:min(len(want), 150)]) {
			t.Errorf("MetaNFT %d: uri %q, the contract's %q", id, got, want)
		}
		pages = append(pages, p)
		return p
	}
	p := page(1)
	if p.byID("nft-name") == nil {
		t.Fatalf("MetaNFT 1 shows no name: %s", text(p.doc))
	}
	img := findAll(p.byID("nft-image"), func(n *html.Node) bool { return isElem(n, "img") })
	if p.textOf(t, "nft-name") != "On-chain #1" || len(img) != 1 || attr(img[0], "src") != onChain["image"] || attr(img[0], "alt") == "" {
		t.Errorf("MetaNFT 1: name %q, image %v", p.textOf(t, "nft-name"), img)
	}
	if p.byID("nft-source") != nil {
		t.Errorf("MetaNFT 1: a data: URI is read from %q", p.textOf(t, "nft-source"))
	}
	p = page(2)
	if p.textOf(t, "nft-name") != "Plain #2" || !slices.Equal(hrefs(p.byID("nft-image")), []string{nftGateway() + "meta/2.png"}) {
		t.Errorf("MetaNFT 2: name %q, image %q", p.textOf(t, "nft-name"), hrefs(p.byID("nft-image")))
	}
	for id, note := range map[int]string{3: "not a public address", 4: "data:, http(s): and ipfs: URIs only", 5: "larger than 256 KB"} {
		if p := page(id); !strings.Contains(p.textOf(t, "nft-note"), note) || p.byID("nft-name") != nil {
			t.Errorf("MetaNFT %d: note %q, want %q", id, text(p.byID("nft-note")), note)
		}
	}
	if n := metaSrv.count("/private/3.json"); n != 0 {
		t.Errorf("the private host was read %d times", n)
	}
	if p := fetchPage(t, base, "/address/"+addr.Hex()); p.textOf(t, "contract-supply") != fmt.Sprint(len(uris), " META") {
		t.Errorf("MetaNFT's supply %q, want %d META", p.textOf(t, "contract-supply"), len(uris))
	}
	return pages
}

// checkENSPages: the address page reached by an ENS name shows it (from
// the search, or the name in the path), and a name that does not resolve
// to the page's address is not shown.
func (c *vaultChain) checkENSPages(t *testing.T) []*htmlPage {
	t.Helper()
	base, holder := c.e.inst.base, c.holder.Addr.Hex()
	var pages []*htmlPage
	for _, path := range []string{"/search?q=" + url.QueryEscape(" VaultHolder.eth "), "/address/VaultHolder.eth"} {
		p := fetchPage(t, base, path)
		if p.status != 200 || p.textOf(t, "address") != holder || p.textOf(t, "ens-name") != "ENS name vaultholder.eth" {
			t.Errorf("%s: %d, address %q, name %q", path, p.status, text(p.byID("address")), text(p.byID("ens-name")))
		}
		pages = append(pages, p)
	}
	for _, path := range []string{"/address/" + holder + "?name=lapsed.eth", "/address/" + c.usd.Hex() + "?name=vaultholder.eth", "/address/" + holder + "?name=nobody.eth"} {
		if p := fetchPage(t, base, path); p.status != 200 || p.byID("ens-name") != nil {
			t.Errorf("%s: %d, name %q shown", path, p.status, text(p.byID("ens-name")))
		}
	}
	return pages
}

// checkExplorerTokens runs the vault chain's explorer checks (last: they
// add blocks) and validates their pages.
func (c *vaultChain) checkExplorerTokens(t *testing.T) {
	t.Helper()
	start := time.Now()
	defer func() {
		t.Logf("the explorer's token, ENS and L1 fee checks took %v", time.Since(start).Round(time.Millisecond))
	}()
	pages := append(c.checkENSPages(t), c.checkMetaNFT(t)...)
	pages = append(pages, c.checkL1Fees(t))        // eth_l1fee_test.go
	failing, contract := c.checkNFTCallFailures(t) // eth_nft_calls_test.go
	pages = append(pages, failing...)
	validateHTML(t, pages)
	noInlineStyleOrScript(t, pages)
	c.checkNFTNodeDown(t, contract) // last: it stops the node
}

// checkAliasPages: the explorer shows the index's aliases as the API gives
// them: a contract's name by the tx's recipient, an ENS name on the
// address page.
func checkAliasPages(t *testing.T, e *ethE2E, tx common.Hash, contract, named common.Address, aliases api.AddressAliasesMap) {
	t.Helper()
	p := fetchPage(t, e.inst.base, "/tx/"+tx.Hex())
	if want := contract.Hex() + " (" + aliases[contract.Hex()].Alias + ")"; p.textOf(t, "tx-to") != want {
		t.Errorf("tx %s: to %q, want %q", tx, p.textOf(t, "tx-to"), want)
	}
	p = fetchPage(t, e.inst.base, "/address/"+named.Hex())
	if want := "ENS name " + aliases[named.Hex()].Alias; p.textOf(t, "ens-name") != want {
		t.Errorf("address %s: %q, want %q", named, p.textOf(t, "ens-name"), want)
	}
}
