package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// wsCase is one request: an answer checked by ok, or an error message
// starting with errPrefix.
type wsCase struct {
	method    string
	params    any
	ok        func(t *testing.T, data json.RawMessage)
	errPrefix string
}

// The websocket methods over the fixture, one answer per method family
// and the user mistakes each reports.
func TestWebsocketMethodsOnFixture(t *testing.T) {
	s := newServed(t)
	c := mustDial(t, s.srv)
	cases := append(append(wsChainCases(s.f), wsAccountCases(s.f)...), wsOtherCases(s.f)...)
	for i, tc := range cases {
		frame, err := json.Marshal(wsParams{"id": strconv.Itoa(i), "method": tc.method, "params": tc.params})
		if err != nil {
			t.Fatal(err)
		}
		id, data := roundTrip(t, c, websocket.TextMessage, string(frame))
		if id != strconv.Itoa(i) {
			t.Fatalf("%s: answer to request %s, want %d", tc.method, id, i)
		}
		msg := errorMessage(data)
		switch {
		case tc.ok != nil && msg != "":
			t.Errorf("%s %v: error %q", tc.method, tc.params, msg)
		case tc.ok != nil:
			tc.ok(t, data)
		case !strings.HasPrefix(msg, tc.errPrefix):
			t.Errorf("%s %v: error %q, want %q", tc.method, tc.params, msg, tc.errPrefix)
		}
	}
}

// wsParams are a request's params.
type wsParams = map[string]any

// wsChainCases: info, blocks and txs.
func wsChainCases(f *apitest.Fixture) []wsCase {
	tip := f.TipHeight()
	type m = wsParams
	return []wsCase{
		{method: "getInfo", ok: func(t *testing.T, d json.RawMessage) {
			if in := decode[api.WsInfo](t, "getInfo", d); in.BestHeight != uint32(tip) || in.BestHash != f.BlockHash(tip) || in.Block0Hash != f.BlockHash(0) {
				t.Errorf("getInfo %s", d)
			}
		}},
		{method: "getBlockHash", params: m{"height": 57}, ok: func(t *testing.T, d json.RawMessage) {
			if string(d) != `{"hash":"`+f.BlockHash(57)+`"}` {
				t.Errorf("getBlockHash %s", d)
			}
		}},
		{method: "getBlockHash", params: m{"height": -1}, errPrefix: "Block height -1 is out of range"},
		{method: "getBlock", params: m{"id": "112", "page": 2, "pageSize": 2}, ok: func(t *testing.T, d json.RawMessage) {
			b := decode[api.Block](t, "getBlock", d)
			want := f.Block(112).Transactions[2:4]
			if b.Page != 2 || len(b.Txs) != 2 || b.Txs[0].Txid != want[0].TxHash().String() || b.Txs[1].Txid != want[1].TxHash().String() {
				t.Errorf("getBlock %.300s", d)
			}
		}},
		{method: "getBlock", params: m{"id": strconv.Itoa(tip + 1)}, errPrefix: "Block not found"},
		// Blockbook's websocket page sizes: default 1000, at most 10,000.
		{method: "getBlock", params: m{"id": "112"}, ok: wantBlockPageSize(1000)},
		{method: "getBlock", params: m{"id": "112", "pageSize": 5000}, ok: wantBlockPageSize(5000)},
		{method: "getBlock", params: m{"id": "112", "pageSize": 20000}, ok: wantBlockPageSize(10000)},
	}
}

// wsAccountCases: addresses, accounts, UTXOs, txs and balance histories.
func wsAccountCases(f *apitest.Fixture) []wsCase {
	txid := f.Block(112).Transactions[1].TxHash().String()
	demo := f.Ledger.Addresses[f.DemoAddress]
	acct := f.AccountLedgers[0]
	type m = wsParams
	return []wsCase{
		{method: "getAccountInfo", params: m{"descriptor": f.DemoAddress, "details": "txids", "pageSize": 2}, ok: func(t *testing.T, d json.RawMessage) {
			a := decode[api.Address](t, "getAccountInfo", d)
			want := append([]string{f.PendingPayment.TxHash().String()}, demo.Txids[:2]...)
			if !amountIs(a.Balance, demo.Balance) || a.UnconfirmedTxs != 1 || !slices.Equal(a.Txids, want) {
				t.Errorf("getAccountInfo address %s", d)
			}
		}},
		// The websocket's default details are basic, its default tokens
		// every derived address.
		{method: "getAccountInfo", params: m{"descriptor": f.Accounts[0].Xpub(), "details": "tokenBalances"}, ok: func(t *testing.T, d json.RawMessage) {
			a := decode[api.Address](t, "getAccountInfo", d)
			derived := len(acct.Chains[0]) + len(acct.Chains[1])
			if !amountIs(a.Balance, acct.Balance) || a.UsedTokens != acct.Used() || len(a.Tokens) != derived || a.Txids != nil {
				t.Errorf("getAccountInfo xpub %.300s", d)
			}
		}},
		{method: "getAccountInfo", params: m{"descriptor": "nonsense"}, errPrefix: "Invalid address"},
		{method: "getAccountInfo", params: m{"descriptor": 5}, errPrefix: "Invalid params: descriptor must be a string"},
		{method: "getAccountUtxo", params: m{"descriptor": f.UnusedAddress}, ok: func(t *testing.T, d json.RawMessage) {
			if us := decode[[]api.Utxo](t, "getAccountUtxo", d); len(us) != 1 || us[0].Txid != f.PendingChild.TxHash().String() {
				t.Errorf("getAccountUtxo %s", d)
			}
		}},
		{method: "getTransaction", params: m{"txid": txid}, ok: func(t *testing.T, d json.RawMessage) {
			if tx := decode[api.Tx](t, "getTransaction", d); tx.Txid != txid || !amountIs(tx.Fees, f.Ledger.Txs[txid].Fee) {
				t.Errorf("getTransaction %.300s", d)
			}
		}},
		{method: "getTransaction", params: m{"txid": "zz"}, errPrefix: "Invalid txid"},
		{method: "getTransactionSpecific", params: m{"txid": txid}, ok: func(t *testing.T, d json.RawMessage) {
			if decode[map[string]any](t, "getTransactionSpecific", d)["txid"] != txid {
				t.Errorf("getTransactionSpecific %.300s", d)
			}
		}},
		{method: "getBalanceHistory", params: m{"descriptor": f.Accounts[0].Descriptor(true), "groupBy": 1 << 30}, ok: func(t *testing.T, d json.RawMessage) {
			h := decode[[]api.BalanceHistory](t, "getBalanceHistory", d)
			if len(h) != 1 || int(h[0].Txs) != len(acct.Txids) {
				t.Errorf("getBalanceHistory %s", d)
			}
		}},
	}
}

// wsOtherCases: fees, sending, filters, fiat rates, subscriptions.
func wsOtherCases(f *apitest.Fixture) []wsCase {
	tip := f.TipHeight()
	scripts := apitest.BlockFilters.Scripts
	type m = wsParams
	return []wsCase{
		{method: "estimateFee", params: m{"blocks": []int{1, 4}, "specific": m{"txsize": 200}}, ok: func(t *testing.T, d json.RawMessage) {
			est := decode[[]api.FeeEstimate](t, "estimateFee", d)
			if len(est) != 2 || est[1].FeePerUnit != strconv.FormatInt(apitest.FeeRate(4), 10) || est[1].FeePerTx != strconv.FormatInt((apitest.FeeRate(4)*200+500)/1000, 10) {
				t.Errorf("estimateFee %s", d)
			}
		}},
		{method: "estimateFee", params: m{"blocks": make([]int, 33)}, errPrefix: "blocks max 32"},
		{method: "longTermFeeRate", ok: func(t *testing.T, d json.RawMessage) {
			if want := fmt.Sprintf(`{"feePerUnit":"%d","blocks":1008}`, apitest.FeeRate(1008)); string(d) != want {
				t.Errorf("longTermFeeRate %s, want %s", d, want)
			}
		}},
		{method: "sendTransaction", params: m{"hex": "zz"}, errPrefix: "Invalid transaction hex"},
		{method: "getMempoolFilters", params: m{"scriptType": scripts}, ok: func(t *testing.T, d json.RawMessage) {
			if mf := decode[api.MempoolFilters](t, "getMempoolFilters", d); len(mf.Entries) == 0 || len(mf.Entries) >= len(f.Pending) {
				t.Errorf("getMempoolFilters %s", d)
			}
		}},
		{method: "getMempoolFilters", params: m{"scriptType": "taproot"}, errPrefix: "Unsupported script filter"},
		{method: "getBlockFilter", params: m{"scriptType": scripts, "blockHash": f.BlockHash(111)}, ok: func(t *testing.T, d json.RawMessage) {
			if bf := decode[api.BlockFilterResult](t, "getBlockFilter", d); bf.BlockFilter == "" || bf.P != 20 {
				t.Errorf("getBlockFilter %s", d)
			}
		}},
		{method: "getBlockFiltersBatch", params: m{"scriptType": scripts, "bestKnownBlockHash": f.BlockHash(tip - 3), "pageSize": 2}, ok: func(t *testing.T, d json.RawMessage) {
			b := decode[api.BlockFiltersBatchResult](t, "getBlockFiltersBatch", d)
			if len(b.BlockFiltersBatch) != 2 || !strings.HasPrefix(b.BlockFiltersBatch[0], fmt.Sprintf("%d:%s:", tip-2, f.BlockHash(tip-2))) {
				t.Errorf("getBlockFiltersBatch %s", d)
			}
		}},
		{method: "getBlockFiltersBatch", params: m{"scriptType": scripts, "bestKnownBlockHash": strings.Repeat("cd", 32)}, errPrefix: "Block not found"},
		{method: "rpcCall", params: m{"to": "0x00", "data": "0x"}, errPrefix: "rpcCall is not supported"},
		{method: "getContractInfo", params: m{"contract": "0x00"}, errPrefix: "getContractInfo is not supported on this coin"},
		{method: "getCurrentFiatRates", params: m{"currencies": []string{"usd"}}, errPrefix: "No tickers found"},
		{method: "ping", ok: func(t *testing.T, d json.RawMessage) {
			if string(d) != "{}" {
				t.Errorf("ping %s", d)
			}
		}},
		{method: "subscribeNewBlock", ok: func(t *testing.T, d json.RawMessage) {
			if string(d) != `{"subscribed":true}` {
				t.Errorf("subscribeNewBlock %s", d)
			}
		}},
		{method: "subscribeAddresses", params: m{"addresses": []string{f.DemoAddress, "nonsense"}}, errPrefix: "Invalid address"},
	}
}

// A pending tx from the real mempool reaches the subscribers of the
// address it pays, rendered by the api.
func TestWebsocketAddressNotificationOnFixture(t *testing.T) {
	s := newServed(t)
	c := mustDial(t, s.srv)
	frame := `{"id":"sub","method":"subscribeAddresses","params":{"addresses":["` + s.f.UnusedAddress + `"]}}`
	if _, data := roundTrip(t, c, websocket.TextMessage, frame); string(data) != `{"subscribed":true}` {
		t.Fatalf("subscribe: %s", data)
	}
	child := s.f.PendingChild.TxHash().String()
	h, err := bchain.ParseHash(child)
	if err != nil {
		t.Fatal(err)
	}
	mtx, ok := s.f.Mempool.Tx(h)
	if !ok {
		t.Fatal("the pending child is not in the mempool")
	}
	s.ws.OnMempoolTx(s.svc.MempoolTxNotice(mtx))
	_ = c.SetReadDeadline(time.Now().Add(waitGuard))
	_, msg, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var n struct {
		ID   string `json:"id"`
		Data struct {
			Address string `json:"address"`
			Tx      api.Tx `json:"tx"`
		} `json:"data"`
	}
	if err := json.Unmarshal(msg, &n); err != nil || n.ID != "sub" || n.Data.Address != s.f.UnusedAddress ||
		n.Data.Tx.Txid != child || n.Data.Tx.BlockHeight != -1 || !amountIs(n.Data.Tx.Vout[0].Value, s.f.PendingChild.TxOut[0].Value) {
		t.Fatalf("notification %s (%v)", msg, err)
	}
}

// wantBlockPageSize checks getBlock's itemsOnPage.
func wantBlockPageSize(size int) func(t *testing.T, d json.RawMessage) {
	return func(t *testing.T, d json.RawMessage) {
		if b := decode[api.Block](t, "getBlock", d); b.ItemsOnPage != size || b.Page != 1 {
			t.Errorf("getBlock: page %d of %d, want page 1 of %d", b.Page, b.ItemsOnPage, size)
		}
	}
}
