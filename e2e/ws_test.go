package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// wsCovered records which websocket methods the tests exercised, so that
// TestWebsocketEveryMethodTested can demand all of them.
var wsCovered = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

func covered(methods ...string) {
	wsCovered.Lock()
	defer wsCovered.Unlock()
	for _, m := range methods {
		wsCovered.m[m] = true
	}
}

// wsFilterConfig turns on Blockbook's filter settings.
var wsFilterConfig = map[string]any{
	"block_golomb_filter_p": 20, "block_filter_scripts": "taproot-noordinals", "block_filter_use_zeroed_key": true,
	"mempool_golomb_filter_p": 20, "mempool_filter_scripts": "taproot", "mempool_filter_use_zeroed_key": false,
}

// Every query method answers what the chain holds, checked against the
// generator's ledger and the REST API.
func TestWebsocketQueries(t *testing.T) {
	st := startDemoStack(t, wsFilterConfig)
	ws := newWS(t, st.inst.base)
	led := st.g.Ledger()
	height, tipHash := st.g.Tip()

	{ // getInfo
		var info api.WsInfo
		ws.ok("getInfo", nil, &info)
		covered("getInfo")
		if info.Name != "Regtest" || info.Shortcut != "rBTC" || !info.Testnet || info.Decimals != 8 ||
			info.BestHeight != uint32(height) || info.BestHash != tipHash.String() ||
			info.Block0Hash != chaincfg.RegressionNetParams.GenesisHash.String() || info.Version == "" || info.Backend.Version == "" {
			t.Fatalf("getInfo: %+v", info)
		}
	}
	{ // getBlockHash
		var res struct{ Hash string }
		ws.ok("getBlockHash", map[string]any{"height": 1}, &res)
		covered("getBlockHash")
		want, err := st.node.BlockHash(context.Background(), 1)
		if err != nil || res.Hash != want {
			t.Fatalf("getBlockHash 1: %q, want %q (%v)", res.Hash, want, err)
		}
		ws.ok("getBlockHash", map[string]any{"height": height + 10}, &res)
		if res.Hash != "" {
			t.Fatalf("a height above the tip answers %q, want an empty hash as Blockbook", res.Hash)
		}
		ws.fails("getBlockHash", map[string]any{"height": -1}, "Block height -1 is out of range")
		ws.fails("getBlockHash", map[string]any{"height": "1"}, "height must be a number")
	}
	{ // getBlock
		var blk api.Block
		ws.ok("getBlock", map[string]any{"id": strconv.Itoa(int(height) - 1), "page": 2, "pageSize": 1}, &blk)
		covered("getBlock")
		var rest api.Block
		getJSON(t, st.inst.base+"/api/v2/block/"+strconv.Itoa(int(height)-1), 200, &rest)
		if blk.Hash != rest.Hash || blk.TxCount != rest.TxCount || len(blk.Txs) != 1 || blk.Page != 2 || blk.ItemsOnPage != 1 ||
			blk.Txs[0].Txid != rest.Txs[1].Txid {
			t.Fatalf("getBlock page 2 of size 1: %+v\nREST: %+v", blk, rest)
		}
		ws.fails("getBlock", map[string]any{"id": "nonsense"}, "Invalid block height or hash")
		// Blockbook's websocket page size: up to 10,000 (REST: 1000).
		var big api.Block
		ws.ok("getBlock", map[string]any{"id": "1", "pageSize": 20000}, &big)
		if big.ItemsOnPage != 10000 || big.Page != 1 || big.TotalPages != 1 {
			t.Fatalf("getBlock pageSize 20000: paging %+v", big.Paging)
		}
	}
	demo, err := st.g.Address(chaingen.P2WPKH, chaingen.DemoIndex)
	if err != nil {
		t.Fatal(err)
	}
	al := led.Addresses[demo]
	{ // getAccountInfo
		var basic api.Address
		ws.ok("getAccountInfo", map[string]any{"descriptor": demo}, &basic)
		covered("getAccountInfo")
		if basic.Balance.String() != strconv.FormatInt(al.Balance, 10) || basic.Txs != al.TxCount() || basic.Txids != nil || basic.Transactions != nil {
			t.Fatalf("basic (the websocket default): %+v, ledger %+v", basic, al)
		}
		var txids api.Address
		ws.ok("getAccountInfo", map[string]any{"descriptor": demo, "details": "txids", "page": 1, "pageSize": 2}, &txids)
		if !slices.Equal(txids.Txids, al.Txids[:2]) || txids.TotalPages != (al.TxCount()+1)/2 {
			t.Fatalf("txids page 1: %v pages %d, want %v", txids.Txids, txids.TotalPages, al.Txids[:2])
		}
		for _, details := range []string{"txslight", "txs"} {
			var page api.Address
			ws.ok("getAccountInfo", map[string]any{"descriptor": demo, "details": details, "page": 2, "pageSize": 2}, &page)
			var got []string
			for _, tx := range page.Transactions {
				got = append(got, tx.Txid)
			}
			if !slices.Equal(got, al.Txids[2:4]) {
				t.Fatalf("%s page 2: %v, want %v", details, got, al.Txids[2:4])
			}
		}
		ws.fails("getAccountInfo", map[string]any{"descriptor": "notanaddress"}, "Invalid address")
		ws.fails("getAccountInfo", map[string]any{"descriptor": demo, "page": "x"}, "page must be a number")
	}
	{ // getAccountUtxo
		var utxos []api.Utxo
		ws.ok("getAccountUtxo", map[string]any{"descriptor": demo}, &utxos)
		covered("getAccountUtxo")
		var got, want []string
		for _, u := range utxos {
			got = append(got, u.Txid+":"+strconv.Itoa(int(u.Vout))+"="+u.Value.String())
		}
		for _, u := range al.Utxos {
			want = append(want, u.Txid+":"+strconv.Itoa(int(u.Vout))+"="+strconv.FormatInt(u.Value, 10))
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Fatalf("utxos %v, want %v", got, want)
		}
	}
	txid := al.Txids[1]
	{ // getTransaction
		var tx api.Tx
		ws.ok("getTransaction", map[string]any{"txid": txid}, &tx)
		covered("getTransaction")
		if tx.Txid != txid || tx.Hex == "" || tx.BlockHeight != int64(led.Txs[txid].Height) || tx.Fees.String() != strconv.FormatInt(led.Txs[txid].Fee, 10) {
			t.Fatalf("getTransaction: %+v, ledger %+v", tx, led.Txs[txid])
		}
		ws.fails("getTransaction", map[string]any{"txid": "00"}, "Invalid txid")
		ws.fails("getTransaction", map[string]any{"txid": 5}, "txid must be a string")
	}
	{ // getTransactionSpecific
		// btcd without -txindex cannot describe confirmed txs: a clear error.
		ws.fails("getTransactionSpecific", map[string]any{"txid": txid}, "it needs a transaction index (-txindex)")
		pay, err := st.g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, st.g, chaingen.P2WPKH, 30), Value: 10_000}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		pending := sendTx(t, st, pay)
		var res struct {
			Txid string
			Vout []json.RawMessage
		}
		ws.ok("getTransactionSpecific", map[string]any{"txid": pending}, &res)
		covered("getTransactionSpecific")
		if res.Txid != pending || len(res.Vout) != len(pay.TxOut) {
			t.Fatalf("getTransactionSpecific: %+v", res)
		}
	}
	{ // getBalanceHistory
		var hist []api.BalanceHistory
		ws.ok("getBalanceHistory", map[string]any{"descriptor": demo}, &hist)
		covered("getBalanceHistory")
		var txs uint32
		var received, sent int64
		for i, b := range hist {
			if b.Time%3600 != 0 || (i > 0 && b.Time <= hist[i-1].Time) {
				t.Fatalf("buckets not hourly and ascending: %+v", hist)
			}
			r, _ := strconv.ParseInt(b.Received.String(), 10, 64)
			s, _ := strconv.ParseInt(b.Sent.String(), 10, 64)
			txs, received, sent = txs+b.Txs, received+r, sent+s
		}
		if int(txs) != al.TxCount() || received != al.Received || sent != al.Sent {
			t.Fatalf("history sums txs %d received %d sent %d, ledger %d %d %d", txs, received, sent, al.TxCount(), al.Received, al.Sent)
		}
		var none []api.BalanceHistory
		ws.ok("getBalanceHistory", map[string]any{"descriptor": demo, "from": 1, "to": 2}, &none)
		if len(none) != 0 {
			t.Fatalf("a range before the chain: %+v", none)
		}
	}
	{ // estimateFee
		var fees []struct{ FeePerUnit, FeePerTx string }
		ws.ok("estimateFee", map[string]any{"blocks": []int{1, 6}, "specific": map[string]any{"conservative": false, "txsize": 250}}, &fees)
		covered("estimateFee")
		if len(fees) != 2 {
			t.Fatalf("estimateFee: %+v", fees)
		}
		for _, f := range fees {
			rate, err := strconv.ParseInt(f.FeePerUnit, 10, 64)
			if err != nil || rate <= 0 || f.FeePerTx != strconv.FormatInt((rate*250+500)/1000, 10) {
				t.Fatalf("estimateFee entry %+v", f)
			}
		}
		blocks := make([]int, 33)
		for i := range blocks {
			blocks[i] = 1
		}
		ws.fails("estimateFee", map[string]any{"blocks": blocks}, "blocks max 32")
		ws.fails("estimateFee", map[string]any{"blocks": []int{0}}, "Invalid number of blocks")
		ws.fails("estimateFee", map[string]any{"blocks": 1}, "blocks must be an array")
	}
	{ // longTermFeeRate: the trezor client has no call for it, so only
		// this raw request drives it. btcd has no long-term estimate; the
		// answer falls back exactly as estimateFee's for 1008 blocks does.
		var lt struct {
			FeePerUnit string `json:"feePerUnit"`
			Blocks     int    `json:"blocks"`
		}
		ws.ok("longTermFeeRate", nil, &lt)
		covered("longTermFeeRate")
		var fees []struct{ FeePerUnit string }
		ws.ok("estimateFee", map[string]any{"blocks": []int{1008}, "specific": map[string]any{"conservative": false}}, &fees)
		rate, err := strconv.ParseInt(lt.FeePerUnit, 10, 64)
		if err != nil || rate <= 0 || lt.Blocks != 1008 || len(fees) != 1 || fees[0].FeePerUnit != lt.FeePerUnit {
			t.Fatalf("longTermFeeRate %+v, estimateFee for 1008 blocks %+v", lt, fees)
		}
	}
	{ // ping
		_, data := ws.call("ping", nil)
		covered("ping")
		if string(data) != "{}" {
			t.Fatalf("ping: %s", data)
		}
	}
	{ // fiatRates
		// No rate source is configured: clean answers, unknown rates -1.
		ws.fails("getCurrentFiatRates", map[string]any{"currencies": []string{"usd"}}, "No tickers found")
		var tickers api.FiatTickers
		ws.ok("getFiatRatesForTimestamps", map[string]any{"timestamps": []int64{1600000000}, "currencies": []string{"USD"}}, &tickers)
		if len(tickers.Tickers) != 1 || tickers.Tickers[0].Rates["usd"] != -1 || tickers.Tickers[0].Timestamp != 1600000000 {
			t.Fatalf("getFiatRatesForTimestamps: %+v", tickers)
		}
		ws.fails("getFiatRatesForTimestamps", map[string]any{}, "No timestamps provided")
		ws.fails("getFiatRatesTickersList", map[string]any{"timestamp": 1600000000}, "No tickers found")
		covered("getCurrentFiatRates", "getFiatRatesForTimestamps", "getFiatRatesTickersList")
	}
}

// uncoveredWebsocketMethods lists the websocket methods no test exercised;
// TestMain fails the run on any when the whole suite ran.
func uncoveredWebsocketMethods() []string {
	wsCovered.Lock()
	defer wsCovered.Unlock()
	var out []string
	for _, m := range server.WebsocketMethods() {
		if !wsCovered.m[m] {
			out = append(out, m)
		}
	}
	return out
}
