package e2e

// Blockbook's token metadata admin (/admin/contract-info/ and
// /admin/internal-data-errors) on the Ethereum stack of
// TestEthAPIMatchesLedger: an operator's fix is answered by the public
// routes, outlives the reorg of the contract's creation and a restart, and
// its removal brings the node's metadata back.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

const (
	ethAdminUser     = "admin"
	ethAdminPassword = "fix-metadata"
)

// admin sends an authenticated request to the internal server and decodes
// the JSON answer into out (nil: not decoded); it returns the status.
func (e *ethE2E) admin(t *testing.T, method, path, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.inst.internal+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(ethAdminUser, ethAdminPassword)
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, data, err)
		}
	}
	if resp.StatusCode >= 500 {
		t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode
}

type contractList struct {
	Contracts []api.AdminContractInfo `json:"contracts"`
	Next      string                  `json:"next"`
}

// fixTarget is an ERC20 contract, one created above the reorg's fork
// point if there is one, so that the reorg takes its contracts row away
// (db's TestContractFixSurvivesReorg covers that case in any event).
func (e *ethE2E) fixTarget(t *testing.T) common.Address {
	t.Helper()
	fork := e.ledger.Blocks[1].Number
	var picks []common.Address
	for _, tx := range e.ledger.Txs {
		c := e.ledger.Contracts[tx.Created]
		if !tx.Pending && c != nil && c.Standard == "ERC20" && tx.BlockNumber > fork {
			picks = append(picks, c.Addr)
		}
	}
	if len(picks) == 0 { // the scenario's tokens come before the fork: the reorg rewrites their rows' heights only
		for a, c := range e.ledger.Contracts {
			if c.Standard == "ERC20" {
				picks = append(picks, a)
			}
		}
	}
	if len(picks) == 0 {
		t.Fatal("the scenario has no ERC20 contract")
	}
	slices.SortFunc(picks, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
	return picks[0]
}

// checkContractAdmin runs before the reorg: bad input, the paged list
// against the ledger, and a fix seen by the public routes.
func (e *ethE2E) checkContractAdmin(t *testing.T) common.Address {
	t.Helper()
	for _, bad := range []struct{ method, path, body string }{
		{"GET", "/admin/contract-info/?limit=0", ""},
		{"GET", "/admin/contract-info/?limit=10001", ""},
		{"GET", "/admin/contract-info/?limit=x", ""},
		{"GET", "/admin/contract-info/?from=nonsense", ""},
		{"GET", "/admin/contract-info/0x1234", ""},
		{"DELETE", "/admin/contract-info/not-an-address", ""},
		{"DELETE", "/admin/contract-info/", ""},
		{"POST", "/admin/contract-info/", `{"contract":"x"}`},
		{"POST", "/admin/contract-info/", `[{"contract":"0xzz"}]`},
		{"POST", "/admin/contract-info/", `[{"contract":"` + e.ledger.Blocks[0].Hash.Hex()[:42] + `","decimals":300}]`},
		{"POST", "/admin/contract-info/", `[{"contract":"` + e.ledger.Blocks[0].Hash.Hex()[:42] + `","standard":"ERC99"}]`},
		{"POST", "/admin/contract-info/", "[" + strings.Repeat(" ", 9<<20) + "]"},
		{"POST", "/admin/contract-info/0x0000000000000000000000000000000000000001", `[]`},
	} {
		var eb struct{ Error string }
		if code := e.admin(t, bad.method, bad.path, bad.body, &eb); code != http.StatusBadRequest || eb.Error == "" {
			t.Errorf("%s %s %.40q: %d %q, want 400 with a message", bad.method, bad.path, bad.body, code, eb.Error)
		}
	}
	// The whole list, page by page, holds every contract of the ledger
	// with its metadata, once each, in address order.
	var all []api.AdminContractInfo
	from := ""
	for pages := 0; ; pages++ {
		var page contractList
		if code := e.admin(t, "GET", "/admin/contract-info/?limit=2&from="+from, "", &page); code != 200 || len(page.Contracts) > 2 || pages > 1000 {
			t.Fatalf("list page %d: %d, %d contracts", pages, code, len(page.Contracts))
		}
		all = append(all, page.Contracts...)
		if page.Next == "" {
			break
		}
		from = page.Next
	}
	var whole contractList
	e.admin(t, "GET", "/admin/contract-info/", "", &whole)
	if len(whole.Contracts) != len(all) || whole.Next != "" {
		t.Errorf("one page of %d (next %q), pages of 2 gave %d", len(whole.Contracts), whole.Next, len(all))
	}
	seen := map[string]api.AdminContractInfo{}
	for i, c := range all {
		if i > 0 && strings.ToLower(all[i-1].Contract) >= strings.ToLower(c.Contract) {
			t.Errorf("list out of order at %s", c.Contract)
		}
		seen[c.Contract] = c
	}
	for a, want := range e.ledger.Contracts {
		if want.Standard == "" {
			continue // a plain contract has a row only if the index saw it created
		}
		if got, ok := seen[a.Hex()]; !ok || got.Name != want.Name || got.Symbol != want.Symbol || got.Decimals != want.Decimals {
			t.Errorf("listed %s as %+v, want %+v", a, got, want)
		}
	}
	target := e.fixTarget(t)
	var before api.AdminContractInfo
	if code := e.admin(t, "GET", "/admin/contract-info/"+target.Hex(), "", &before); code != 200 || before.CreatedInBlock == 0 {
		t.Fatalf("get %s: %d %+v", target, code, before)
	}
	fix := before
	fix.Name, fix.Symbol, fix.Decimals = "Operator Fixed Token", "OFT", 4
	body, _ := json.Marshal([]api.AdminContractInfo{fix})
	var up struct{ Updated int }
	if code := e.admin(t, "POST", "/admin/contract-info/", string(body), &up); code != 200 || up.Updated != 1 {
		t.Fatalf("update: %d %+v", code, up)
	}
	e.checkFixed(t, target, "after the update")
	return target
}

// checkFixed: the admin and the public routes answer the fix.
func (e *ethE2E) checkFixed(t *testing.T, target common.Address, when string) {
	t.Helper()
	var got api.AdminContractInfo
	e.admin(t, "GET", "/admin/contract-info/"+target.Hex(), "", &got)
	var pub api.ContractInfo
	e.get(t, "/api/v2/contract/"+target.Hex(), &pub)
	if got.Name != "Operator Fixed Token" || got.Symbol != "OFT" || got.Decimals != 4 || got.Standard != "ERC20" ||
		pub.Name != got.Name || pub.Symbol != got.Symbol || pub.Decimals != got.Decimals {
		t.Errorf("%s: admin %+v, public %+v", when, got, pub)
	}
	// A tx answer, cached before the fix or not, names the token as fixed.
	for _, tx := range e.ledger.Txs {
		if tx.Pending || !slices.ContainsFunc(tx.TokenTransfers, func(tt ethgen.TokenTransfer) bool { return tt.Contract == target }) {
			continue
		}
		var a api.Tx
		e.get(t, "/api/v2/tx/"+tx.Hash.Hex(), &a)
		for _, tt := range a.TokenTransfers {
			if strings.EqualFold(tt.Contract, target.Hex()) && (tt.Symbol != "OFT" || tt.Decimals != 4) {
				t.Errorf("%s: tx %s names the token %s with %d decimals", when, tx.Hash.Hex(), tt.Symbol, tt.Decimals)
			}
		}
		break
	}
}

// checkContractAdminAfterReorg runs after checkReorg: the fix holds,
// across a restart too, and its removal brings the node's metadata back.
func (e *ethE2E) checkContractAdminAfterReorg(t *testing.T, target common.Address) {
	t.Helper()
	e.checkFixed(t, target, "after the reorg")
	e.inst.stop(t)
	e.inst = startInProcess(t, e.cfgPath, e.inst.dataDir, nil)
	e.waitHead(t)
	e.checkFixed(t, target, "after a restart")
	var del struct {
		Contract string
		Deleted  bool
		Purged   *api.AdminContractInfo
	}
	if code := e.admin(t, "DELETE", "/admin/contract-info/"+target.Hex(), "", &del); code != 200 || !del.Deleted || del.Purged == nil || del.Purged.Name != "Operator Fixed Token" || del.Contract != target.Hex() {
		t.Fatalf("delete: %d %+v", code, del)
	}
	del.Deleted, del.Purged = true, nil
	if code := e.admin(t, "DELETE", "/admin/contract-info/"+target.Hex(), "", &del); code != 200 || del.Deleted || del.Purged != nil {
		t.Errorf("second delete: %d %+v", code, del)
	}
	want := e.ledger.Contracts[target]
	e.checkContract(t, target, want)
	var errs struct {
		Count  int
		Errors []api.InternalDataError `json:"internalDataErrors"`
	}
	if code := e.admin(t, "POST", "/admin/internal-data-errors", "", &errs); code != 200 || errs.Count != 0 || errs.Errors == nil {
		t.Errorf("internal data errors of a fully traced chain: %d %+v", code, errs)
	}
}

// A block whose trace failed is listed by /admin/internal-data-errors;
// once the node traces again, POST has the sync worker amend it, and the
// list empties. The node is reached through a proxy that refuses
// debug_traceBlockByHash while told to (the start-up probe passes).
func TestEthAdminRefetchTraces(t *testing.T) {
	t.Setenv("BB_ADMIN_USER", ethAdminUser)
	t.Setenv("BB_ADMIN_PASSWORD", ethAdminPassword)
	dev := startDevNode(t, gethdev.Options{})
	var refuse atomic.Bool
	target, err := url.Parse(dev.HTTPURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if refuse.Load() && json.Unmarshal(body, &call) == nil && call.Method == "debug_traceBlockByHash" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"tracer busy (test)"}}`, call.ID)
			return
		}
		if refuse.Load() && bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			refuseTraces(t, w, dev.HTTPURL, body)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	raw, _ := json.Marshal(map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": proxy.URL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 20, "block_addresses_to_keep": 100, "processInternalTransactions": true,
	})
	cfg := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e := &ethE2E{dev: dev, inst: startInProcess(t, cfg, t.TempDir(), nil), cfgPath: cfg}
	e.waitHead(t)
	refuse.Store(true)
	sendDevTransfer(t, dev, e.inst.base, common.HexToAddress("0x00000000000000000000000000000000000a11ce"), 1000)
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}
	e.waitHead(t)
	h, hash := dev.Head()
	type errList struct {
		Count      int
		Refetching bool
		Errors     []api.InternalDataError `json:"internalDataErrors"`
	}
	var list errList
	if code := e.admin(t, "GET", "/admin/internal-data-errors", "", &list); code != 200 || list.Count != 1 ||
		list.Errors[0].Height != uint32(h) || list.Errors[0].Hash != hash.Hex() || !strings.Contains(list.Errors[0].ErrorMessage, "tracer busy") {
		t.Fatalf("with the trace refused: %d %+v", code, list)
	}
	refuse.Store(false)
	if code := e.admin(t, "POST", "/admin/internal-data-errors", "", &list); code != 200 || list.Count != 1 {
		t.Fatalf("refetch: %d %+v", code, list)
	}
	deadline := time.Now().Add(waitFor)
	for list.Count != 0 || list.Refetching {
		if time.Now().After(deadline) {
			t.Fatalf("the block was not traced again: %+v\n%s", list, tail(e.inst.logs.String(), 30))
		}
		time.Sleep(50 * time.Millisecond)
		e.admin(t, "GET", "/admin/internal-data-errors", "", &list)
	}
}

// refuseTraces forwards a JSON-RPC batch to the node and answers its trace
// calls with an error instead of the node's answers.
func refuseTraces(t *testing.T, w http.ResponseWriter, node string, body []byte) {
	var calls []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &calls); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := http.Post(node, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	var answers []map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&answers); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	traced := map[string]bool{}
	for _, c := range calls {
		if c.Method == "debug_traceBlockByHash" {
			traced[string(c.ID)] = true
		}
	}
	for _, a := range answers {
		if traced[string(a["id"])] {
			delete(a, "result")
			a["error"] = json.RawMessage(`{"code":-32000,"message":"tracer busy (test)"}`)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(answers); err != nil {
		t.Log(err)
	}
}
