package api

import (
	"context"
	"math/big"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
)

const (
	tokA = "0xdac17f958d2ee523a2206206994597c13d831ec7"
	tokB = "0x514910771af9ca656af840dff83e8264ecf986ca"
)

// tokenFiatService stores token rates (in coins): tokA on days 0 and 4 and
// in the current ticker, tokB on day 1 only (the provider prices it no
// more), as fiat does on an Ethereum-type chain with 18 decimals.
func tokenFiatService(t *testing.T) *core {
	t.Helper()
	d := apitest.OpenStore(t, db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	err := d.WriteFiatTickers([]*db.FiatTicker{
		{Time: fday(0), Rates: map[string]float64{"usd": 100, "eur": 90}, TokenRates: map[string]float64{tokA: 0.01}},
		{Time: fday(1), Rates: map[string]float64{"usd": 110, "eur": 99}, TokenRates: map[string]float64{tokB: 0.5}},
		{Time: fday(4), Rates: map[string]float64{"usd": 140}, TokenRates: map[string]float64{tokA: 0.0075}},
	})
	if err == nil {
		err = d.WriteFiatCurrent(&db.FiatTicker{Time: fday(5) + 3600, Rates: map[string]float64{"usd": 150, "eur": 135},
			TokenRates: map[string]float64{tokA: 0.008}})
	}
	if err != nil {
		t.Fatal(err)
	}
	b := &bchain.Backend{Type: bchain.ChainEthereumType, Params: bchain.CoinParams{Decimals: 18}}
	return &NewUtxoService(d, b, nil, Config{FiatRates: true}).core
}

func TestTokenFiatRates(t *testing.T) {
	s := tokenFiatService(t)
	ctx := context.Background()
	// Current: the token's rate in coins times the coin's; the contract in
	// any case; a currency the ticker lacks is -1.
	got, err := s.CurrentFiatRates(ctx, []string{"usd", "jpy"}, "0xDAC17F958D2ee523a2206206994597C13D831ec7")
	if want := `{"ts":1700442000,"rates":{"jpy":-1,"usd":1.2}}`; err != nil || jsonOf(t, got) != want {
		t.Errorf("current: %s %v", jsonOf(t, got), err)
	}
	got, err = s.CurrentFiatRates(ctx, nil, tokA)
	if want := `{"ts":1700442000,"rates":{"eur":1.08,"usd":1.2}}`; err != nil || jsonOf(t, got) != want {
		t.Errorf("current, all: %s %v", jsonOf(t, got), err)
	}
	// A token the current ticker lacks: no tickers (the days are not
	// searched, as Blockbook); one currency the current ticker lacks too.
	for _, c := range []struct {
		token string
		cur   []string
	}{{tokB, nil}, {tokA, []string{"jpy"}}, {"0x00", nil}} {
		_, err = s.CurrentFiatRates(ctx, c.cur, c.token)
		wantUserErr(t, err, "No tickers found!")
	}

	// Timestamps: the first day at or after with the token, else current.
	ts := []int64{0, fday(1), fday(4) - 1, fday(4) + 1}
	tt, err := s.FiatRatesForTimestamps(ctx, ts, []string{"usd", "eur"}, tokA)
	want := `{"tickers":[{"ts":1700006400,"rates":{"eur":0.9,"usd":1}},{"ts":1700352000,"rates":{"eur":-1,"usd":1.05}},` +
		`{"ts":1700352000,"rates":{"eur":-1,"usd":1.05}},{"ts":1700442000,"rates":{"eur":1.08,"usd":1.2}}]}`
	if err != nil || jsonOf(t, tt) != want {
		t.Errorf("timestamps:\n got %s %v\nwant %s", jsonOf(t, tt), err, want)
	}
	// Not priced now: -1 everywhere, though a day has it.
	tt, err = s.FiatRatesForTimestamps(ctx, []int64{fday(1)}, []string{"usd"}, tokB)
	if want := `{"tickers":[{"ts":1700092800,"rates":{"usd":-1}}]}`; err != nil || jsonOf(t, tt) != want {
		t.Errorf("unpriced token: %s %v", jsonOf(t, tt), err)
	}
	list, err := s.FiatRatesTickersList(ctx, fday(1), tokA)
	if want := `{"ts":1700352000,"available_currencies":["usd"]}`; err != nil || jsonOf(t, list) != want {
		t.Errorf("tickers list: %s %v", jsonOf(t, list), err)
	}
	_, err = s.FiatRatesTickersList(ctx, 0, tokB)
	wantUserErr(t, err, "No tickers found")

	ws := TokenFiatRates(&FiatTicker{Rates: map[string]float64{"usd": 150}, TokenRates: map[string]float64{tokA: 0.008}},
		[]string{"0xDAC17F958D2ee523a2206206994597C13D831ec7", tokB}, "usd")
	if len(ws) != 1 || ws["0xDAC17F958D2ee523a2206206994597C13D831ec7"] != 1.2 {
		t.Errorf("subscription token rates %v", ws)
	}
}

// Address values: priced ERC20 balances get values, others none; the
// totals add the balance; tokens sort by value.
func TestTokenValues(t *testing.T) {
	s := tokenFiatService(t)
	bal, _ := new(big.Int).SetString("2000000000000000000", 10) // 2 coins
	usdt, _ := new(big.Int).SetString("250000000", 10)          // 250 of 6 decimals
	out := &Address{Tokens: []Token{
		{Standard: "ERC20", Name: "B", Contract: "0x514910771AF9Ca656af840dff83E8264EcF986CA", Decimals: 18, Balance: NewAmount(5)},
		{Standard: "ERC20", Name: "Tether", Contract: "0xdAC17F958D2ee523a2206206994597C13D831ec7", Decimals: 6, Balance: (*Amount)(usdt)},
		{Standard: "ERC721", Name: "A", Contract: tokA},
	}}
	s.ethAddressValues(context.Background(), out, bal, "eur")
	tk := out.Tokens[0]
	if tk.Name != "Tether" || tk.BaseValue != 2 || tk.SecondaryValue != 270 {
		t.Fatalf("valued token %+v", tk)
	}
	for _, o := range out.Tokens[1:] {
		if o.BaseValue != 0 || o.SecondaryValue != 0 {
			t.Errorf("unpriced token valued: %+v", o)
		}
	}
	if out.TokensBaseValue != 2 || out.TokensSecondaryValue != 270 || out.TotalBaseValue != 4 || out.TotalSecondaryValue != 540 {
		t.Errorf("totals %+v", out)
	}
	// A currency without a rate: values in coins only.
	out = &Address{Tokens: []Token{{Standard: "ERC20", Contract: tokA, Decimals: 6, Balance: (*Amount)(usdt)}}}
	s.ethAddressValues(context.Background(), out, bal, "xyz")
	if out.Tokens[0].BaseValue != 2 || out.Tokens[0].SecondaryValue != 0 || out.TotalBaseValue != 4 || out.TotalSecondaryValue != 0 {
		t.Errorf("no rate in xyz: %+v", out)
	}
}
