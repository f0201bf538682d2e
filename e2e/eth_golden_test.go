package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// Ethereum answers as samples under e2e/testdata/eth, type-checked
// against the wallet client's typings by tools/js/check-goldens.mjs. The
// dev chain's hashes and times change every run, so the files are written
// with -update and otherwise compared by shape: the same top-level fields
// as the recorded answer (deeper optional fields depend on which txs the
// run's hashes pick).
func (e *ethE2E) checkGoldens(t *testing.T) {
	t.Helper()
	var tokenTx, createTx common.Hash
	var holder common.Address
	for h, tx := range e.ledger.Txs {
		if !tx.Pending && len(tx.TokenTransfers) > 0 && len(tx.InternalTransfers) == 0 && (tokenTx == common.Hash{} || h.Hex() < tokenTx.Hex()) {
			tokenTx = h
		}
		if !tx.Pending && tx.To == nil && (createTx == common.Hash{} || h.Hex() < createTx.Hex()) {
			createTx = h
		}
	}
	for _, a := range e.ledger.SortedAddresses() {
		if len(e.ledger.Addresses[a].Tokens) >= 3 && holder == (common.Address{}) {
			holder = a
		}
	}
	var contract common.Address
	for _, a := range slices.Sorted(func(yield func(string) bool) {
		for c, ci := range e.ledger.Contracts {
			if ci.Standard == "ERC20" && !yield(c.Hex()) {
				return
			}
		}
	}) {
		contract = common.HexToAddress(a)
		break
	}
	rest := map[string]string{
		"status":                   "/api/v2",
		"block-index":              "/api/v2/block-index/1",
		"block":                    fmt.Sprint("/api/v2/block/", e.ledger.Blocks[1].Number),
		"tx-token-transfer":        "/api/v2/tx/" + tokenTx.Hex(),
		"tx-create":                "/api/v2/tx/" + createTx.Hex(),
		"address-tokenbalances":    "/api/v2/address/" + holder.Hex() + "?details=tokenBalances",
		"address-txs":              "/api/v2/address/" + holder.Hex() + "?details=txs&pageSize=3",
		"address-confirmednonce":   "/api/v2/address/" + holder.Hex() + "?details=basic&confirmedNonce=true",
		"tx-specific-create":       "/api/v2/tx-specific/" + createTx.Hex(),
		"rawtx-create":             "/api/v2/rawtx/" + createTx.Hex(),
		"contract":                 "/api/v2/contract/" + contract.Hex(),
		"address-erc20-contract":   "/api/v2/address/" + contract.Hex(),
		"estimatefee":              "/api/v2/estimatefee/1",
		"error-invalid-address":    "/api/v2/address/0x12",
		"error-utxo-not-supported": "/api/v2/utxo/" + holder.Hex(),
	}
	for name, path := range rest {
		resp, err := httpClient.Get(e.inst.base + path)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		e.golden(t, name, v)
	}
	ws := newWS(t, e.inst.base)
	for name, call := range map[string][2]any{
		"ws-getInfo":         {"getInfo", nil},
		"ws-getAccountInfo":  {"getAccountInfo", map[string]any{"descriptor": holder.Hex(), "details": "txs", "pageSize": 2, "confirmedNonce": true}},
		"ws-getContractInfo": {"getContractInfo", map[string]any{"contract": contract.Hex()}},
		"ws-estimateFee":     {"estimateFee", map[string]any{"blocks": []int{1}}},
		"ws-getTransaction":  {"getTransaction", map[string]any{"txid": tokenTx.Hex()}},
	} {
		var v any
		ws.ok(call[0].(string), call[1], &v)
		e.golden(t, name, v)
	}
}

func (e *ethE2E) golden(t *testing.T, name string, v any) {
	t.Helper()
	goldenShape(t, "eth", "TestEthAPIMatchesLedger", name, v)
}

// goldenShape writes testdata/<dir>/<name>.golden.json with -update, else
// compares v's top-level fields with the file's (test names the test
// that writes it).
func goldenShape(t *testing.T, dir, test, name string, v any) {
	t.Helper()
	file := filepath.Join("testdata", dir, name+".golden.json")
	if *update {
		raw, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(file, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("%s: %v (run go test -run %s -update .)", name, err, test)
		return
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if g, w := keyPaths(v), keyPaths(want); !slices.Equal(g, w) {
		t.Errorf("%s: answer's fields %v differ from %s's %v (run with -update and review the diff)", name, g, file, w)
	}
}

// keyPaths lists the top-level keys of a JSON value (of its elements for
// an array), sorted.
func keyPaths(v any) []string {
	set := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k := range x {
				p := prefix + "." + k
				set[p] = true
			}
		case []any:
			for _, c := range x {
				walk(prefix+"[]", c)
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, strings.TrimPrefix(k, "."))
	}
	slices.Sort(out)
	return out
}
