package e2e

// Token values in fiat end to end: the Ethereum scenario on a geth dev
// node, indexed with fiat_rates_params' platformIdentifier and
// platformVsCurrency as Blockbook's ethereum.json sets them, pointed at a
// local server that speaks CoinGecko's API (coins/list with platforms,
// simple/price by ids, market_chart per token). The provider lists a
// priced token the index knows, one it knows but does not price (the
// missing token) and one the index does not know, and answers one
// coins/list and one token market_chart with 429.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/fiat"
	"github.com/openexplorer/blockbook/fiat/fiattest"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

const (
	valTokenID   = "priced-token"
	valMissingID = "unpriced-token"
	valForeignID = "unindexed-token"
	valForeign   = "0x1111111111111111111111111111111111111111"
)

// erc20s returns the scenario's ERC20 contracts that some address holds,
// sorted, each with a holder.
func erc20s(t *testing.T, l *ethgen.Ledger) (contracts []common.Address, holders map[common.Address]common.Address) {
	t.Helper()
	holders = map[common.Address]common.Address{}
	for _, a := range l.SortedAddresses() {
		for c, h := range l.Addresses[a].Tokens {
			if ci := l.Contracts[c]; ci != nil && ci.Standard == "ERC20" && h.Balance != nil && h.Balance.Sign() > 0 {
				if _, ok := holders[c]; !ok {
					holders[c] = a
					contracts = append(contracts, c)
				}
			}
		}
	}
	slices.SortFunc(contracts, func(a, b common.Address) int { return strings.Compare(a.Hex(), b.Hex()) })
	if len(contracts) < 2 {
		t.Fatalf("the scenario has %d held ERC20 tokens, want 2", len(contracts))
	}
	return contracts, holders
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestEthTokenFiatValues(t *testing.T) {
	dev, ledger, raw := startEthScenario(t, gethdev.Options{})
	tokens, holders := erc20s(t, ledger)
	priced, missing := tokens[0], tokens[1]
	lower := func(a common.Address) string { return strings.ToLower(a.Hex()) }

	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	prov := fiattest.New("ethereum", now)
	t.Cleanup(prov.Close)
	prov.SetSupported("btc", "eth", "usd", "eur")
	prov.SetCurrent(map[string]float64{"usd": 2000, "eur": 1800, "eth": 1})
	for d, usd := range map[int]float64{-2: 1900, -1: 1950} {
		day := today.AddDate(0, 0, d)
		prov.AddDay("usd", day, usd)
		prov.AddDay("eur", day, usd*0.9)
	}
	prov.AddToken(valTokenID, "ethereum", lower(priced))
	prov.AddToken(valMissingID, "ethereum", lower(missing))
	prov.AddToken(valForeignID, "ethereum", valForeign)
	prov.SetTokenCurrent(valTokenID, "usd", 1.25)
	prov.SetTokenCurrent(valForeignID, "usd", 7)
	prov.AddTokenDay(valTokenID, "usd", today.AddDate(0, 0, -2), 1.1)
	prov.AddTokenDay(valTokenID, "usd", today.AddDate(0, 0, -1), 1.2)
	prov.ThrottlePath("/coins/list", 1)
	prov.ThrottlePath("/coins/"+valTokenID+"/market_chart", 1)

	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["fiat_rates"] = "coingecko"
	cfg["fiat_rates_params"] = fmt.Sprintf(`{"coin": "ethereum", "platformIdentifier": "ethereum", "platformVsCurrency": "usd", "periodSeconds": 900, "url": %q, "tipUrl": %q}`, prov.URL(), prov.URL())
	cfg["fiat_rates_vs_currencies"] = "usd,eur"
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	downloaders := make(chan *fiat.Downloader, 1)
	inst := startInProcess(t, cfgPath, t.TempDir(), func(o *app.Options) {
		o.FiatConfig = func(c *fiat.Config) { c.RequestGap, c.MaxBackoff = time.Millisecond, 200*time.Millisecond }
		o.OnFiat = func(dl *fiat.Downloader) { downloaders <- dl }
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("provider requests %q\n%s", prov.Requests(), tail(inst.logs.String(), 60))
		}
	})
	dl := <-downloaders
	e := &ethE2E{dev: dev, ledger: ledger, inst: inst}
	e.waitHead(t)
	base := inst.base
	waitStatus(t, base, func(s *api.SystemInfo) bool {
		return s.Blockbook.InSync && s.Blockbook.CurrentFiatRatesTime != nil && s.Blockbook.HistoricalFiatRatesTime != nil
	})
	// The index knows the tokens now; the next period's download (made
	// now) prices them, and wakes the history for them.
	dl.Refresh()
	tokenQ := "&token=" + priced.Hex()
	yesterday := today.AddDate(0, 0, -1).Unix()
	var hist []api.FiatTicker // multi-tickers answers an array
	waitUntil(t, "token rates current and history", func() bool {
		var cur api.FiatTicker
		if code, _ := tryGet(base+"/api/v2/tickers/?currency=usd"+tokenQ, &cur); code != 200 {
			return false
		}
		code, _ := tryGet(fmt.Sprintf("%s/api/v2/multi-tickers/?timestamp=%d,%d&currency=usd%s", base, yesterday-3600, now.Unix()+86400, tokenQ), &hist)
		return code == 200 && len(hist) == 2 && hist[0].Timestamp == yesterday // not the current ticker
	})

	st := waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.HistoricalTokenFiatRatesTime != nil })
	if b := st.Blockbook; !b.HasTokenFiatRates || !b.HistoricalTokenFiatRatesTime.Equal(time.Unix(yesterday, 0)) {
		t.Errorf("status token fields %v %v", b.HasTokenFiatRates, b.HistoricalTokenFiatRatesTime)
	}
	// REST fiat calls with token: current, history (the 429 on the token's
	// chart was waited out: both days are there), list; the missing token
	// has no tickers.
	if r := hist[0]; r.Timestamp != yesterday || !closeTo(r.Rates["usd"], 1.2) {
		t.Errorf("token history %+v", hist)
	}
	if r := hist[1]; !closeTo(r.Rates["usd"], 1.25) {
		t.Errorf("token after the history: %+v", r)
	}
	var tk api.FiatTicker
	getJSON(t, fmt.Sprintf("%s/api/v2/tickers/?timestamp=%d%s", base, today.AddDate(0, 0, -2).Unix()-5, tokenQ), 200, &tk)
	if !closeTo(tk.Rates["usd"], 1.1) || !closeTo(tk.Rates["eur"], 1.1*0.9) {
		t.Errorf("token day -2: %+v", tk)
	}
	getJSON(t, base+"/api/v2/tickers/?currency=eur"+tokenQ, 200, &tk)
	if !closeTo(tk.Rates["eur"], 1.25/2000*1800) {
		t.Errorf("token current eur %+v", tk)
	}
	var list api.AvailableVsCurrencies
	getJSON(t, fmt.Sprintf("%s/api/v2/tickers-list/?timestamp=%d%s", base, yesterday, tokenQ), 200, &list)
	if !slices.Equal(list.Currencies, []string{"eur", "usd"}) {
		t.Errorf("tickers-list %+v", list)
	}
	var apiErr struct{ Error string }
	getJSON(t, base+"/api/v2/tickers/?currency=usd&token="+missing.Hex(), 400, &apiErr)
	if !strings.Contains(apiErr.Error, "No tickers found") {
		t.Errorf("missing token: %+v", apiErr)
	}
	getJSON(t, fmt.Sprintf("%s/api/v2/multi-tickers/?timestamp=%d&currency=usd&token=%s", base, yesterday, missing.Hex()), 200, &hist)
	if len(hist) != 1 || hist[0].Rates["usd"] != -1 {
		t.Errorf("missing token history %+v", hist)
	}
	// Only tokens the index knows are asked for; the 429 on coins/list was
	// waited out.
	reqs := strings.Join(prov.Requests(), "\n")
	if strings.Contains(reqs, valForeignID) || !strings.Contains(reqs, valMissingID) || strings.Count(reqs, "/coins/list?") < 2 {
		t.Errorf("provider requests:\n%s", reqs)
	}

	// The new fields are in the OpenAPI spec.
	l := &liveCheck{t: t, c: openAPIChecker(t), base: base, asked: map[openapicheck.Op]int{}}
	l.get("/api/v2", 200)
	l.get("/api/v2/tickers/?currency=usd"+tokenQ, 200)
	l.get("/api/v2/address/"+holders[priced].Hex()+"?details=tokenBalances&secondary=usd", 200)

	checkTokenValues(t, base, priced, missing, holders)
	checkContractRates(t, base, ledger, priced, missing)
	checkTokenFiatWS(t, base, priced, missing, prov, dl)
}

// checkTokenValues: the priced token's balance has values, the missing
// token's none, and the address's totals add up.
func checkTokenValues(t *testing.T, base string, priced, missing common.Address, holders map[common.Address]common.Address) {
	t.Helper()
	for _, c := range []common.Address{priced, missing} {
		var a api.Address
		getJSON(t, base+"/api/v2/address/"+holders[c].Hex()+"?details=tokenBalances&secondary=EUR", 200, &a)
		checkExplorerTokenFiat(t, base, &a)
		bal, _ := new(big.Float).SetInt((*big.Int)(a.Balance)).Float64()
		coins := bal / 1e18
		var sumBase, sumSec float64
		seen := false
		for i, tk := range a.Tokens {
			if i > 0 && tk.BaseValue > a.Tokens[i-1].BaseValue {
				t.Errorf("tokens not sorted by value: %+v", a.Tokens)
			}
			if !strings.EqualFold(tk.Contract, priced.Hex()) {
				if tk.BaseValue != 0 || tk.SecondaryValue != 0 {
					t.Errorf("unpriced token %s valued: %+v", tk.Contract, tk)
				}
				seen = seen || strings.EqualFold(tk.Contract, missing.Hex())
				continue
			}
			seen = true
			amt, _ := new(big.Float).SetInt((*big.Int)(tk.Balance)).Float64()
			want := amt / math.Pow10(tk.Decimals) * 1.25 / 2000
			if !closeTo(tk.BaseValue, want) || !closeTo(tk.SecondaryValue, want*1800) {
				t.Errorf("%s: values %v %v, want %v %v", tk.Contract, tk.BaseValue, tk.SecondaryValue, want, want*1800)
			}
			sumBase, sumSec = sumBase+tk.BaseValue, sumSec+tk.SecondaryValue
		}
		if !seen {
			t.Errorf("holder of %s lists no such token: %+v", c.Hex(), a.Tokens)
		}
		if !closeTo(a.TokensBaseValue, sumBase) || !closeTo(a.TokensSecondaryValue, sumSec) ||
			!closeTo(a.TotalBaseValue, coins+sumBase) || !closeTo(a.TotalSecondaryValue, (coins+sumBase)*1800) ||
			!closeTo(a.SecondaryValue, coins*1800) {
			t.Errorf("address %s totals: %+v", a.Address, a)
		}
	}
}

// checkTokenFiatWS: the websocket's fiat calls with token, and
// subscribeFiatRates with tokens pushes the priced one's new rate.
func checkTokenFiatWS(t *testing.T, base string, priced, missing common.Address, prov *fiattest.Server, dl *fiat.Downloader) {
	t.Helper()
	ws := newWS(t, base)
	var cur api.FiatTicker
	ws.ok("getCurrentFiatRates", map[string]any{"currencies": []string{"usd"}, "token": priced.Hex()}, &cur)
	if !closeTo(cur.Rates["usd"], 1.25) {
		t.Errorf("getCurrentFiatRates token %+v", cur)
	}
	ws.fails("getCurrentFiatRates", map[string]any{"currencies": []string{"usd"}, "token": missing.Hex()}, "No tickers found")
	var hist api.FiatTickers
	ws.ok("getFiatRatesForTimestamps", map[string]any{"timestamps": []int64{0}, "currencies": []string{"eur"}, "token": priced.Hex()}, &hist)
	if len(hist.Tickers) != 1 || !closeTo(hist.Tickers[0].Rates["eur"], 1.1*0.9) {
		t.Errorf("getFiatRatesForTimestamps token %+v", hist)
	}
	var list api.AvailableVsCurrencies
	ws.ok("getFiatRatesTickersList", map[string]any{"timestamp": 0, "token": priced.Hex()}, &list)
	if len(list.Currencies) != 2 {
		t.Errorf("getFiatRatesTickersList token %+v", list)
	}

	var sub struct{ Subscribed bool }
	id := ws.ok("subscribeFiatRates", map[string]any{"currency": "usd", "tokens": []string{priced.Hex(), missing.Hex()}}, &sub)
	prov.SetTokenCurrent(valTokenID, "usd", 1.5)
	prov.SetCurrent(map[string]float64{"usd": 2500, "eur": 2250, "eth": 1})
	dl.Refresh()
	for {
		var note struct {
			Rates      map[string]float64 `json:"rates"`
			TokenRates map[string]float64 `json:"tokenRates"`
		}
		ws.notification(id, &note)
		if note.Rates["usd"] != 2500 {
			continue // a push of the previous rates
		}
		if len(note.Rates) != 1 || len(note.TokenRates) != 1 || !closeTo(note.TokenRates[priced.Hex()], 1.5) {
			t.Errorf("notification %+v", note)
		}
		break
	}
}

// A staking pool on the dev chain with the read methods of Everstake's,
// configured as Blockbook takes it (<SHORTCUT>_STAKING_POOL_CONTRACT):
// the status lists it, an address with a part in it gets its values read
// from the contract, one without gets no stakingPools.
func TestEthStakingPool(t *testing.T) {
	ctx := t.Context()
	dev, err := gethdev.Start(ctx, gethdev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	w, err := ethgen.NewWallet(ctx, dev.Client())
	if err != nil {
		t.Fatal(err)
	}
	pool := ethgen.MustContract(ethgen.StakingPoolContract)
	// The contract's selectors are the ones api/eth_staking.go calls.
	for m, sel := range map[string]string{"pendingBalanceOf": "59b8c763", "pendingDepositedBalanceOf": "80f14ecc",
		"depositedBalanceOf": "68b48254", "withdrawRequest": "14cbc46a", "restakedRewardOf": "0c98929a", "autocompoundBalanceOf": "2fec7966"} {
		if data := pool.MustCalldata(m, common.Address{}); fmt.Sprintf("%x", data[:4]) != sel {
			t.Fatalf("%s selector %x, want %s", m, data[:4], sel)
		}
	}
	owner := ethgen.AccountFromKey("dev", dev.DevKey)
	staker, stranger := ethgen.NewAccount("staker"), ethgen.NewAccount("stranger")
	_, poolAddr, err := w.Deploy(ctx, owner, pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Transfer(ctx, owner, staker.Addr, big.NewInt(3e18), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Transfer(ctx, owner, stranger.Addr, big.NewInt(1e18), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}
	vals := [7]*big.Int{big.NewInt(1), big.NewInt(2), big.NewInt(3e18), big.NewInt(4), big.NewInt(5), big.NewInt(6), big.NewInt(7)}
	if _, err := w.Call(ctx, owner, poolAddr, nil, pool, "setAccount", staker.Addr, vals); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Call(ctx, staker, poolAddr, big.NewInt(1e18), pool, "stake"); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}

	raw, err := json.Marshal(map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": dev.HTTPURL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 20, "block_addresses_to_keep": 100, "processInternalTransactions": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	configured := "Everstake/" + poolAddr.Hex()
	t.Setenv("RETH_STAKING_POOL_CONTRACT", configured)
	e := &ethE2E{dev: dev, inst: startInProcess(t, cfgPath, t.TempDir(), nil)}
	e.waitHead(t)

	var st api.SystemInfo
	e.get(t, "/api/v2", &st)
	if !slices.Equal(st.Blockbook.SupportedStakingPools, []string{configured}) {
		t.Errorf("supportedStakingPools %q", st.Blockbook.SupportedStakingPools)
	}
	var a api.Address
	e.get(t, "/api/v2/address/"+staker.Addr.Hex()+"?details=basic", &a)
	want := []string{"1000000000000000001", "2", "3000000000000000000", "4", "5", "6", "7"} // stake() added 1 ether pending
	if len(a.StakingPools) != 1 {
		t.Fatalf("staker's stakingPools %+v", a.StakingPools)
	}
	p := a.StakingPools[0]
	got := []string{p.PendingBalance.String(), p.PendingDepositedBalance.String(), p.DepositedBalance.String(),
		p.WithdrawTotalAmount.String(), p.ClaimableAmount.String(), p.RestakedReward.String(), p.AutocompoundBalance.String()}
	if p.Name != "Everstake" || p.Contract != poolAddr.Hex() || !slices.Equal(got, want) {
		t.Errorf("staking pool %s %s %v, want %v", p.Name, p.Contract, got, want)
	}
	var sa api.Address
	e.get(t, "/api/v2/address/"+stranger.Addr.Hex(), &sa)
	if sa.StakingPools != nil || sa.Balance.String() != "1000000000000000000" {
		t.Errorf("stranger's stakingPools %+v (balance %s)", sa.StakingPools, sa.Balance)
	}
	l := &liveCheck{t: t, c: openAPIChecker(t), base: e.inst.base, asked: map[openapicheck.Op]int{}}
	l.get("/api/v2", 200)
	l.get("/api/v2/address/"+staker.Addr.Hex(), 200)
	// The websocket's getAccountInfo answers the same.
	var wa api.Address
	newWS(t, e.inst.base).ok("getAccountInfo", map[string]any{"descriptor": staker.Addr.Hex()}, &wa)
	if len(wa.StakingPools) != 1 || wa.StakingPools[0].DepositedBalance.String() != "3000000000000000000" {
		t.Errorf("getAccountInfo stakingPools %+v", wa.StakingPools)
	}
}
