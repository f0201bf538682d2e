package e2e

// Tron's wire: samples of every Tron answer shape under e2e/testdata/tron,
// type-checked by tools/js/check-goldens.mjs against Blockbook's
// blockbook-api.ts Tron types (declared there: the pinned typings predate
// them), and @trezor/blockchain-link's Blockbook worker reading getInfo,
// account info and txs of a Tron address (tools/js/trezor-tron.mjs).

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain/coins/tron"
	"github.com/openexplorer/blockbook/tools/trondouble"
)

// tronSample picks the richest account (most txs, with tokens) and a tx
// of each contract kind.
func (e *tronE2E) tronSample() (trondouble.Addr, map[string]string) {
	txs := tronExpectedTxs(e.chain)
	var best trondouble.Addr
	for _, a := range e.chain.Accounts {
		if len(txs[a]) > len(txs[best]) && len(e.chain.AccountFacts(a).Tokens) > 0 {
			best = a
		}
	}
	kinds := map[string]string{}
	for _, b := range e.chain.Blocks() {
		for _, tx := range b.Txs {
			k := strings.TrimSuffix(tx.Kind, "Contract")
			if tx.Failed {
				k += "-failed"
			}
			if kinds[k] == "" {
				kinds[k] = hex.EncodeToString(tx.ID[:])
			}
		}
	}
	return best, kinds
}

// checkTronGoldens writes (with -update) or compares by shape the answers.
func (e *tronE2E) checkTronGoldens(t *testing.T) {
	t.Helper()
	a, kinds := e.tronSample()
	addr := tron.EncodeAddress(a[:])
	rest := map[string]string{
		"status":                "/api/v2",
		"block":                 "/api/v2/block/" + itoa(e.chain.Tip().Number-1),
		"address-basic":         "/api/v2/address/" + addr,
		"address-txs":           "/api/v2/address/" + addr + "?details=txs&pageSize=3",
		"address-tokenbalances": "/api/v2/address/" + addr + "?details=tokenBalances",
		"error-invalid-address": "/api/v2/address/T123",
		"error-sendtx-refused":  "/api/v2/sendtx/00",
	}
	for k, id := range kinds {
		rest["tx-"+k] = "/api/v2/tx/" + id
	}
	for name, path := range rest {
		var v any
		resp, err := httpClient.Get(e.inst.base + path)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		tronGolden(t, name, v)
	}
	ws := newWS(t, e.inst.base)
	for name, call := range map[string][2]any{
		"ws-getInfo":        {"getInfo", nil},
		"ws-getAccountInfo": {"getAccountInfo", map[string]any{"descriptor": addr, "details": "txs", "pageSize": 2}},
		"ws-getTransaction": {"getTransaction", map[string]any{"txid": kinds["TriggerSmart"]}},
		"ws-getBlock":       {"getBlock", map[string]any{"id": itoa(e.chain.Tip().Number - 1)}},
	} {
		var v any
		ws.ok(call[0].(string), call[1], &v)
		tronGolden(t, name, v)
	}
}

func tronGolden(t *testing.T, name string, v any) {
	t.Helper()
	goldenShape(t, "tron", "TestTronServedMatchesDouble", name, v)
}

const trezorTronScript = "../tools/js/trezor-tron.mjs"

// checkTronWallet runs the wallet client on the sample account.
func (e *tronE2E) checkTronWallet(t *testing.T) {
	t.Helper()
	node := trezorPrereqs(t)
	a, _ := e.tronSample()
	addr := tron.EncodeAddress(a[:])
	var got api.Address
	getJSON(t, e.inst.base+"/api/v2/address/"+addr+"?details=tokenBalances", 200, &got)
	f := e.chain.AccountFacts(a)
	type txFact struct {
		Height int64  `json:"height"`
		Block  string `json:"block"`
		Fee    string `json:"fee"`
	}
	var tokens []map[string]string
	for tok, v := range f.Tokens {
		if v.Sign() > 0 {
			tokens = append(tokens, map[string]string{"contract": tron.EncodeAddress(tok[:]), "balance": v.String()})
		}
	}
	facts := map[string]any{"height": e.chain.Tip().Number, "hash": hex.EncodeToString(e.chain.Tip().ID[:])}
	txs := map[string]txFact{}
	for _, b := range e.chain.Blocks() {
		for _, tx := range b.Txs {
			txs[hex.EncodeToString(tx.ID[:])] = txFact{b.Number, hex.EncodeToString(b.ID[:]), itoa(tx.Fee)}
		}
	}
	if tokens == nil {
		tokens = []map[string]string{}
	}
	facts["txs"] = txs
	facts["account"] = map[string]any{"address": addr, "balance": itoa(max(f.Balance, 0)), "txids": tronExpectedTxs(e.chain)[a], "tokens": tokens}
	path := writeJSONFile(t, "facts.json", facts)
	runClientScript(t, node, trezorTronScript, e.inst.base, path, e.inst.logs, func(string) (string, bool) { return "", false })
}
