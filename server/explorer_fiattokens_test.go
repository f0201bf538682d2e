package server

import (
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
)

// Token transfers are valued at the token's rate of the tx's time: one
// lookup per token for a list, none again for the same times; NFTs,
// tokens without a rate and bare txs get no value.
func TestTokenFiat(t *testing.T) {
	priced, unpriced := "0x00000000000000000000000000000000000000Aa", "0x00000000000000000000000000000000000000bB"
	var asked []string
	f := &fiatView{Code: "EUR", code: "eur", at: map[int64]timeRate{}, tokenAt: map[tokenTime]float64{}, log: func(err error) { t.Error(err) }}
	f.lookup = func(ts []int64) (*api.FiatTickers, error) { return &api.FiatTickers{}, nil }
	f.tokenLookup = func(ts []int64, token string) (*api.FiatTickers, error) {
		asked = append(asked, token)
		out := &api.FiatTickers{}
		for _, at := range ts {
			r := -1.0
			if token == strings.ToLower(priced) {
				r = float64(at) / 1000
			}
			out.Tickers = append(out.Tickers, api.FiatTicker{Timestamp: at, Rates: map[string]float64{"eur": r}})
		}
		return out, nil
	}
	erc20 := func(c string, v uint64) api.TokenTransfer {
		return api.TokenTransfer{Standard: "ERC20", Contract: c, Decimals: 6, Value: api.NewAmount(v)}
	}
	nft := api.TokenTransfer{Standard: "ERC721", Contract: priced, Value: api.NewAmount(7)}
	txs := []*api.Tx{
		{Txid: "a", BlockTime: 2000, TokenTransfers: []api.TokenTransfer{erc20(priced, 2_500_000), erc20(unpriced, 1_000_000), nft}},
		{Txid: "b", BlockTime: 3000, TokenTransfers: []api.TokenTransfer{erc20(priced, 1_000_000)}},
		{Txid: "c", BlockTime: 0, TokenTransfers: []api.TokenTransfer{erc20(priced, 1_000_000)}}, // no time: not valued
	}
	list := fiatTxs(f, txs)
	if len(asked) != 2 {
		t.Errorf("lookups %q, want one per ERC20 token", asked)
	}
	for _, c := range []struct {
		tx   int
		tt   api.TokenTransfer
		want string
	}{
		{0, txs[0].TokenTransfers[0], "5.00 EUR"}, // 2.5 at 2
		{0, txs[0].TokenTransfers[1], ""},
		{0, nft, ""},
		{1, txs[1].TokenTransfers[0], "3.00 EUR"},
		{2, txs[2].TokenTransfers[0], ""},
	} {
		if got := tokenFiat(list[c.tx], c.tt); got != c.want {
			t.Errorf("tx %d %s %s: %q, want %q", c.tx, c.tt.Standard, c.tt.Contract, got, c.want)
		}
	}
	if len(asked) != 2 {
		t.Errorf("the templates asked again: %q", asked)
	}
	if got := tokenFiat(txs[0], txs[0].TokenTransfers[0]); got != "" {
		t.Errorf("a bare tx valued %q", got)
	}
	if got := tokenFiat(fiatTxs(nil, txs[:1])[0], txs[0].TokenTransfers[0]); got != "" {
		t.Errorf("without rates valued %q", got)
	}
}
