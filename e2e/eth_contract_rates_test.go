package e2e

// getContractInfo's rates (Blockbook's ContractInfoRates) on the fiat
// scenario of TestEthTokenFiatValues: the priced token at 1.25 USD with
// ETH at 2000 USD and 1800 EUR.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

func checkContractRates(t *testing.T, base string, l *ethgen.Ledger, priced, missing common.Address) {
	t.Helper()
	coins := 1.25 / 2000
	get := func(path string) (api.ContractInfo, any) {
		t.Helper()
		var raw json.RawMessage
		getJSON(t, base+path, 200, &raw)
		var ci api.ContractInfo
		return ci, wireOf(t, raw, &ci)
	}
	ci, wire := get("/api/v2/contract/" + priced.Hex() + "?currency=EUR")
	if r := ci.Rates; r == nil || !closeTo(r.BaseRate, coins) || r.Currency != "eur" || !closeTo(r.SecondaryRate, coins*1800) {
		t.Errorf("priced token in eur: rates %+v", ci.Rates)
	}
	goldenShape(t, "eth", "TestEthTokenFiatValues", "contract-rates", wire)
	if ci, _ := get("/api/v2/contract/" + priced.Hex()); ci.Rates == nil || !closeTo(ci.Rates.BaseRate, coins) || ci.Rates.Currency != "" || ci.Rates.SecondaryRate != 0 {
		t.Errorf("priced token without currency: rates %+v", ci.Rates)
	}
	// As Blockbook: a currency the ticker lacks leaves no ticker, so only
	// the currency is echoed; a token without a rate gets the currency
	// alone, or no rates.
	for path, want := range map[string]*api.ContractInfoRates{
		priced.Hex() + "?currency=xyz":  {Currency: "xyz"},
		missing.Hex() + "?currency=usd": {Currency: "usd"},
		missing.Hex():                   nil,
	} {
		ci, _ := get("/api/v2/contract/" + path)
		if (want == nil) != (ci.Rates == nil) || (want != nil && *want != *ci.Rates) {
			t.Errorf("%s: rates %+v, want %+v", path, ci.Rates, want)
		}
	}
	// A contract of another standard has no rates.
	for c, info := range l.Contracts {
		if info.Standard != "ERC20" {
			if ci, _ := get("/api/v2/contract/" + c.Hex() + "?currency=usd"); ci.Rates != nil {
				t.Errorf("%s contract %s: rates %+v", info.Standard, c.Hex(), ci.Rates)
			}
			break
		}
	}
	lc := &liveCheck{t: t, c: openAPIChecker(t), base: base, asked: map[openapicheck.Op]int{}}
	lc.get("/api/v2/contract/"+priced.Hex()+"?currency=usd", 200)

	ws := newWS(t, base)
	var raw json.RawMessage
	ws.ok("getContractInfo", map[string]any{"contract": strings.ToLower(priced.Hex()), "currency": "USD"}, &raw)
	var wci api.ContractInfo
	goldenShape(t, "eth", "TestEthTokenFiatValues", "ws-getContractInfo-rates", wireOf(t, raw, &wci))
	if r := wci.Rates; r == nil || !closeTo(r.BaseRate, coins) || r.Currency != "usd" || !closeTo(r.SecondaryRate, 1.25) {
		t.Errorf("getContractInfo priced token in usd: rates %+v", wci.Rates)
	}
}
