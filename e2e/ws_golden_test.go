package e2e

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Golden answers of the websocket API over the demo chain, in
// e2e/testdata/ws (rewritten with -update), type-checked against the
// wallet client's typings by tools/js/check-goldens.mjs like the REST ones.

const wsGoldenDir = "testdata/ws"

type wsGoldens struct {
	t *testing.T
	*goldenSet
}

// answer checks one answer's data, indented, with first-seen times fixed.
func (w *wsGoldens) answer(name string, data json.RawMessage) {
	w.t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "", "  "); err != nil {
		w.t.Fatalf("%s: not JSON: %v", name, err)
	}
	buf.WriteByte('\n')
	w.check(name, normalizeFirstSeen(w.t, buf.Bytes()))
}

func (w *wsGoldens) call(ws *wsClient, name, method string, params any) {
	w.t.Helper()
	_, data := ws.call(method, params)
	w.answer(name, data)
}

func TestE2EWebsocketGoldens(t *testing.T) {
	st := startDemoStack(t, wsFilterConfig)
	g, base := st.g, st.inst.base
	waitMempoolInSync(t, base)
	ws := newWS(t, base)
	w := &wsGoldens{t: t, goldenSet: newGoldenSet(t, wsGoldenDir, "TestE2EWebsocketGoldens")}
	h, tip := g.Tip()
	p2tr, err := g.Address(chaingen.P2TR, chaingen.DemoIndex)
	if err != nil {
		t.Fatal(err)
	}
	txid := g.Ledger().Addresses[p2tr].Txids[0]

	w.call(ws, "getInfo", "getInfo", nil)
	w.call(ws, "getBlockHash-1", "getBlockHash", map[string]any{"height": 1})
	w.call(ws, "getBlock-tip", "getBlock", map[string]any{"id": tip.String()})
	w.call(ws, "getBlock-tip-pagesize-capped", "getBlock", map[string]any{"id": tip.String(), "pageSize": 20000})
	w.call(ws, "getAccountInfo-basic", "getAccountInfo", map[string]any{"descriptor": p2tr})
	w.call(ws, "getAccountInfo-txids", "getAccountInfo", map[string]any{"descriptor": p2tr, "details": "txids", "pageSize": 3})
	w.call(ws, "getAccountInfo-txs-page2", "getAccountInfo", map[string]any{"descriptor": p2tr, "details": "txs", "page": 2, "pageSize": 2})
	w.call(ws, "getAccountUtxo", "getAccountUtxo", map[string]any{"descriptor": p2tr})
	w.call(ws, "getTransaction", "getTransaction", map[string]any{"txid": txid})
	w.call(ws, "getBalanceHistory", "getBalanceHistory", map[string]any{"descriptor": p2tr, "groupBy": 86400})
	w.call(ws, "estimateFee", "estimateFee", map[string]any{"blocks": []int{2, 6}, "specific": map[string]any{"txsize": 200}})
	w.call(ws, "longTermFeeRate", "longTermFeeRate", nil)
	w.call(ws, "getBlockFilter-tip", "getBlockFilter", map[string]any{"scriptType": "taproot-noordinals", "blockHash": tip.String()})
	before, err := st.node.BlockHash(t.Context(), h-3)
	if err != nil {
		t.Fatal(err)
	}
	w.call(ws, "getBlockFiltersBatch-last3", "getBlockFiltersBatch", map[string]any{"scriptType": "taproot-noordinals", "bestKnownBlockHash": before})
	w.call(ws, "getFiatRatesForTimestamps", "getFiatRatesForTimestamps", map[string]any{"timestamps": []int64{1700000000}, "currencies": []string{"usd", "eur"}})
	w.call(ws, "ping", "ping", nil)
	w.call(ws, "subscribe-newTransaction-disabled", "subscribeNewTransaction", nil)
	w.call(ws, "error-unknown-method", "getEverything", nil)
	w.call(ws, "error-invalid-address", "getAccountInfo", map[string]any{"descriptor": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"})
	w.call(ws, "error-param-type", "getBlockHash", map[string]any{"height": "tip"})
	w.call(ws, "error-fiat-not-configured", "getCurrentFiatRates", map[string]any{"currencies": []string{"usd"}})
	w.call(ws, "error-block-filter-script-type", "getBlockFilter", map[string]any{"scriptType": "taproot", "blockHash": tip.String()})

	// Subscriptions and their notifications, for a payment to a fresh
	// taproot address: pending, then mined.
	payee := mempoolAddr(t, g, chaingen.P2TR, 40)
	blocks, data := ws.call("subscribeNewBlock", nil)
	w.answer("subscribe-newBlock", data)
	addrs, data := ws.call("subscribeAddresses", map[string]any{"addresses": []string{payee}, "newBlockTxs": true})
	w.answer("subscribe-addresses", data)
	pay, err := g.CreatePayment([]chaingen.Output{{Address: payee, Value: 424_242}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	w.call(ws, "sendTransaction", "sendTransaction", map[string]any{"hex": hexOf(t, pay)})
	var note json.RawMessage
	ws.notification(addrs, &note)
	w.answer("notification-address-mempool", note)
	w.call(ws, "getMempoolFilters", "getMempoolFilters", map[string]any{"scriptType": "taproot", "fromTimestamp": 0})
	if _, err := g.AddBlock(pay); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, g.Height())
	ws.notification(blocks, &note)
	w.answer("notification-block", note)
	ws.notification(addrs, &note)
	w.answer("notification-address-confirmed", note)
	_, data = ws.call("unsubscribeAddresses", nil)
	w.answer("unsubscribe-addresses", data)
	covered("getBlockFilter", "getBlockFiltersBatch", "getMempoolFilters")

	var a api.Address
	getJSON(t, base+"/api/v2/address/"+payee, 200, &a)
	if a.Balance.String() != strconv.Itoa(424_242) {
		t.Fatalf("payee after confirmation: %+v", a)
	}
	w.finish()
}
