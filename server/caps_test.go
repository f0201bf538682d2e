package server

import (
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// bareService has only the core: every optional call must be answered
// from the capability table, after the parameters are checked as before.
type bareService struct {
	fakeService
	chain bchain.ChainType
}

func (b *bareService) Capabilities() api.Capabilities { return api.Capabilities{Chain: b.chain} }

func (b *bareService) CheckFeeTargets(blocks []int) error {
	for _, n := range blocks {
		if n < 1 {
			return &api.Error{Msg: "Invalid number of blocks"}
		}
	}
	return nil
}

func (b *bareService) Address(_ context.Context, a string, _ api.AddressQuery) (*api.Address, error) {
	return &api.Address{Address: a}, nil
}

func newBare(chain bchain.ChainType) *bareService {
	return &bareService{fakeService: fakeService{info: okInfo}, chain: chain}
}

func TestRESTMissingCapabilities(t *testing.T) {
	for _, tc := range []struct {
		chain      bchain.ChainType
		path, want string
	}{
		{bchain.ChainEthereumType, "/api/v2/rawblock/1", "Raw blocks are not supported for Ethereum-type coins"},
		{bchain.ChainEthereumType, "/api/v2/tx-specific/ab", "Node-specific tx data is not supported for Ethereum-type coins"},
		{bchain.ChainEthereumType, "/api/v2/rawtx/ab", "Raw transactions are not supported for Ethereum-type coins"},
		{bchain.ChainEthereumType, "/api/v2/utxo/0xab", "UTXOs are not supported for Ethereum-type coins"},
		{bchain.ChainEthereumType, "/api/v2/xpub/xpub6abc", "Xpubs and descriptors are not supported for Ethereum-type coins"},
		{bchain.ChainEthereumType, "/api/v2/xpub/", "Missing xpub"}, // the parameter first
		{bchain.ChainEthereumType, "/api/v2/feestats/1", "Fee stats are not supported for Ethereum-type coins"},
		{bchain.ChainEthereumType, "/api/v2/block-filters/?lastN=1", "Block filters are not supported for Ethereum-type coins"},
		{bchain.ChainEthereumType, "/api/v2/estimatefee/x", "Invalid number of blocks 'x', use 1 to 1008"},
		{bchain.ChainEthereumType, "/api/v2/estimatefee/2", "Fee estimation is not supported for this coin"},
		{bchain.ChainBitcoinType, "/api/v2/contract/0xab", "getContractInfo is not supported on this coin"},
		{bchain.ChainBitcoinType, "/api/v2/xpub/xpub6abc", "XPUB functionality is not supported"},
		{bchain.ChainBitcoinType, "/api/v2/estimatefee/1009", "Invalid number of blocks '1009', use 1 to 1008"},
	} {
		p := NewPublic(newBare(tc.chain), PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		var body errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 400 || body.Error != tc.want {
			t.Errorf("%v %s: %d %s, want 400 %q", tc.chain, tc.path, rec.Code, rec.Body, tc.want)
		}
	}
	// The explorer's xpub page shows the same answer.
	p := NewPublic(newBare(bchain.ChainEthereumType), PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/xpub/xpub6abc", nil))
	if body := html.UnescapeString(rec.Body.String()); rec.Code != 400 || !strings.Contains(body, "Xpubs and descriptors are not supported for Ethereum-type coins") {
		t.Errorf("explorer xpub page: %d\n%s", rec.Code, body)
	}
}

func TestWebsocketMissingCapabilities(t *testing.T) {
	for _, tc := range []struct {
		chain       bchain.ChainType
		frame, want string
	}{
		{bchain.ChainEthereumType, `{"id":"1","method":"getAccountUtxo","params":{"descriptor":"0xab"}}`, `error:UTXOs are not supported for Ethereum-type coins`},
		{bchain.ChainEthereumType, `{"id":"1","method":"getAccountUtxo","params":[1]}`, `error:Invalid params: expected an object, got array`},
		{bchain.ChainEthereumType, `{"id":"1","method":"getTransactionSpecific","params":{"txid":"ab"}}`, `error:Node-specific tx data is not supported for Ethereum-type coins`},
		{bchain.ChainEthereumType, `{"id":"1","method":"getMempoolFilters","params":{}}`, `error:Mempool filters are not supported for Ethereum-type coins`},
		{bchain.ChainEthereumType, `{"id":"1","method":"getBlockFilter","params":{}}`, `error:Block filters are not supported for Ethereum-type coins`},
		{bchain.ChainEthereumType, `{"id":"1","method":"getBlockFiltersBatch","params":{}}`, `error:Block filters are not supported for Ethereum-type coins`},
		{bchain.ChainEthereumType, `{"id":"1","method":"estimateFee","params":{"blocks":[]}}`, `[]`},
		{bchain.ChainEthereumType, `{"id":"1","method":"estimateFee","params":{"blocks":[0]}}`, `error:Invalid number of blocks`},
		{bchain.ChainEthereumType, `{"id":"1","method":"estimateFee","params":{"blocks":[1]}}`, `error:Fee estimation is not supported for this coin`},
		{bchain.ChainEthereumType, `{"id":"1","method":"getAccountInfo","params":{"descriptor":"0xab"}}`, `"address":"0xab"`},
		{bchain.ChainBitcoinType, `{"id":"1","method":"rpcCall","params":{"to":"0xab"}}`, `error:rpcCall is not supported for Bitcoin-type coins`},
		{bchain.ChainBitcoinType, `{"id":"1","method":"getAccountInfo","params":{"descriptor":"xpub6abc"}}`, `"address":"xpub6abc"`},
	} {
		_, srv := startWS(t, newBare(tc.chain), WebsocketConfig{})
		c := mustDial(t, srv)
		_, data := roundTrip(t, c, websocket.TextMessage, tc.frame)
		if msg, ok := strings.CutPrefix(tc.want, "error:"); ok {
			if got := errorMessage(data); got != msg {
				t.Errorf("%v %s: %s, want error %q", tc.chain, tc.frame, data, msg)
			}
		} else if !strings.Contains(string(data), tc.want) {
			t.Errorf("%v %s: %s, want %s", tc.chain, tc.frame, data, tc.want)
		}
	}
}
