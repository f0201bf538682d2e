package server

import (
	"html/template"
	"math"
	"math/big"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// Fiat values of token amounts (Ethereum-type chains): an ERC20 transfer
// of a token the rates price is valued at the token's rate at the tx's
// time, as REST tickers?timestamp=&token= answers it (the token's rate in
// coins times the coin's rate of the same ticker: the first daily ticker
// at or after the time with the token, else the current one); a token
// balance at the api's secondaryValue (the current rate). A token without
// a rate shows no value, as in Blockbook.

// tokenTime keys a token's rate at a time.
type tokenTime struct {
	token string // the contract, lower case
	t     int64
}

// tokenRatesAt looks up, one query per token, the rates of the ERC20
// transfers of txs at the txs' times not known yet.
func (f *fiatView) tokenRatesAt(txs []*api.Tx) {
	if f.tokenLookup == nil {
		return
	}
	missing := map[string][]int64{}
	var order []string
	for _, tx := range txs {
		for _, tt := range tx.TokenTransfers {
			k := tokenTime{strings.ToLower(tt.Contract), tx.BlockTime}
			if !valuedTransfer(tt) || k.t <= 0 {
				continue
			}
			if _, ok := f.tokenAt[k]; ok {
				continue
			}
			f.tokenAt[k] = 0
			if _, ok := missing[k.token]; !ok {
				order = append(order, k.token)
			}
			missing[k.token] = append(missing[k.token], k.t)
		}
	}
	for _, token := range order {
		ts := missing[token]
		res, err := f.tokenLookup(ts, token)
		if err != nil {
			f.log(err)
			continue
		}
		for i, tk := range res.Tickers {
			if r := tk.Rates[f.code]; i < len(ts) && r > 0 && !math.IsInf(r, 0) {
				f.tokenAt[tokenTime{token, ts[i]}] = r
			}
		}
	}
}

// valuedTransfer tells a transfer that can have a fiat value: an ERC20
// amount (NFTs and ERC1155 ids have no rates).
func valuedTransfer(tt api.TokenTransfer) bool {
	return tt.Standard == bchain.TokenERC20.String() && tt.Value != nil
}

// tokenFiat is a transfer's value in the chosen currency at the rate of
// its tx's time, "" when unknown; v is what the tx templates are given.
func tokenFiat(v any, tt api.TokenTransfer) string {
	ft, ok := v.(fiatTx)
	if !ok || ft.fiat == nil || !valuedTransfer(tt) {
		return ""
	}
	f := ft.fiat.fiatView
	f.tokenRatesAt([]*api.Tx{ft.Tx}) // known already for a list
	rate := f.tokenAt[tokenTime{strings.ToLower(tt.Contract), ft.BlockTime}]
	if rate <= 0 {
		return ""
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(min(max(tt.Decimals, 0), 77))), nil)
	amount, _ := new(big.Rat).SetFrac(amountInt(tt.Value), unit).Float64()
	return f.format(amount*rate, false)
}

// tokenFiatFuncs are the template functions of token values.
func tokenFiatFuncs() template.FuncMap {
	return template.FuncMap{
		"tokenFiat": tokenFiat,
		// fiatTxOne is one tx with its valuation (the tx page), the tx
		// itself without rates.
		"fiatTxOne": func(f *fiatView, tx *api.Tx) fiatTx { return fiatTxs(f, []*api.Tx{tx})[0] },
		// tokenList is an address's tokens with the page's fiat choice.
		"tokenList": func(f *fiatView, tokens []api.Token) tokenList { return tokenList{Fiat: f, Tokens: tokens} },
	}
}

// tokenList is what the tokens table is given.
type tokenList struct {
	Fiat   *fiatView
	Tokens []api.Token
}
