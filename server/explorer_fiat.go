package server

import (
	"cmp"
	"context"
	"html"
	"html/template"
	"maps"
	"math"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/api"
)

// Fiat (secondary) values on the explorer's pages, chosen as in Blockbook's
// explorer: the query parameters secondary (a currency) and use_secondary
// (amounts shown in it) win over the cookie secondary_coin ("EUR=true"),
// which every page sets to the choice it shows; with neither the currency
// is USD and amounts show in coins. The rates are the api's (as REST
// tickers answers): the current one for balances and "now" values, the one
// at a tx's time for its amounts. Without rates no page shows fiat and none
// fails for lack of them.

const (
	secondaryCookie  = "secondary_coin"
	defaultSecondary = "usd"
)

// fiatKeep are the page parameters the currency form carries over.
var fiatKeep = []string{"page", "filter", "range", "tokens", "gap", "hex"}

// fiatView is a request's choice of fiat currency, nil without rates.
type fiatView struct {
	Code       string   // as shown: "USD"
	Rate       float64  // the current rate: one coin in Code
	Use        bool     // amounts in lists show in Code (use_secondary)
	Currencies []string // the choices, upper case, sorted
	Path       string   // the currency form's action: this page
	Keep       []keptParam

	code   string // the api's, lower case
	nowTS  int64  // the current ticker's time
	cookie string // the cookie value that keeps this choice
	coin   coinInfo
	at     map[int64]timeRate // rates at tx times
	lookup func([]int64) (*api.FiatTickers, error)
	log    func(error)
	// Token rates at tx times (explorer_fiattokens.go).
	tokenAt     map[tokenTime]float64
	tokenLookup func(ts []int64, token string) (*api.FiatTickers, error)
}

// timeRate is the rate at a time (0 when unknown); now marks the current
// ticker's, which a time after the last daily close gets.
type timeRate struct {
	rate float64
	now  bool
}

// keptParam is a page parameter the currency form sends again.
type keptParam struct{ Name, Value string }

type fiatKey struct{}

// withFiat resolves the request's fiat choice once, for the page handler
// (address queries, charts) and the layout.
func (e *explorer) withFiat(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), fiatKey{}, e.fiatChoice(r)))
}

// fiatFrom is the request's fiat choice (nil without rates).
func fiatFrom(r *http.Request) *fiatView {
	f, _ := r.Context().Value(fiatKey{}).(*fiatView)
	return f
}

// fiatCode is the lower-case currency for api queries ("" without rates).
func fiatCode(r *http.Request) string {
	if f := fiatFrom(r); f != nil {
		return f.code
	}
	return ""
}

// secondaryCookieValue splits a secondary_coin cookie ("EUR=true").
func secondaryCookieValue(r *http.Request) (code string, use bool) {
	c, err := r.Cookie(secondaryCookie)
	if err != nil {
		return "", false
	}
	code, u, ok := strings.Cut(c.Value, "=")
	if !ok {
		return "", false
	}
	use, _ = strconv.ParseBool(u)
	return code, use
}

// fiatChoice reads the choice from the query and the cookie and the rates
// from the api: the asked currency, else USD, else the first the rates have
// (Blockbook stops at USD, and so shows nothing where USD is not kept).
func (e *explorer) fiatChoice(r *http.Request) *fiatView {
	ctx := r.Context()
	t, err := e.svc.CurrentFiatRates(ctx, nil, "")
	if err != nil {
		if _, user := api.AsUserError(err); !user && ctx.Err() == nil {
			e.log.Warn("current fiat rates unavailable", "err", err)
		}
		return nil
	}
	var codes []string
	for c, v := range t.Rates {
		if v > 0 && !math.IsInf(v, 0) {
			codes = append(codes, c)
		}
	}
	if len(codes) == 0 {
		return nil
	}
	slices.Sort(codes)
	q := r.URL.Query()
	cookieCode, cookieUse := secondaryCookieValue(r)
	code := strings.ToLower(cmp.Or(q.Get("secondary"), cookieCode, defaultSecondary))
	if !slices.Contains(codes, code) {
		code = defaultSecondary
		if !slices.Contains(codes, code) {
			code = codes[0]
		}
	}
	// An explicit use_secondary wins over the cookie either way (Blockbook
	// lets only "true" win; a form without script needs "false" too).
	use, err := strconv.ParseBool(q.Get("use_secondary"))
	if err != nil {
		use = cookieUse
	}
	f := &fiatView{Code: strings.ToUpper(code), code: code, Rate: t.Rates[code], Use: use, nowTS: t.Timestamp,
		Path: r.URL.EscapedPath(), coin: e.coinInfo(ctx), at: map[int64]timeRate{}}
	for _, c := range codes {
		f.Currencies = append(f.Currencies, strings.ToUpper(c))
	}
	for _, k := range fiatKeep {
		if q.Has(k) {
			f.Keep = append(f.Keep, keptParam{Name: k, Value: truncate(q.Get(k), 200)})
		}
	}
	f.cookie = f.Code + "=" + strconv.FormatBool(use)
	f.lookup = func(ts []int64) (*api.FiatTickers, error) {
		return e.svc.FiatRatesForTimestamps(ctx, ts, []string{code}, "")
	}
	f.tokenAt = map[tokenTime]float64{}
	f.tokenLookup = func(ts []int64, token string) (*api.FiatTickers, error) {
		return e.svc.FiatRatesForTimestamps(ctx, ts, []string{code}, token)
	}
	f.log = func(err error) {
		if ctx.Err() == nil {
			e.log.Warn("fiat rates at tx times unavailable", "err", err)
		}
	}
	return f
}

// pageFiat is the choice a page shows; it keeps the choice in the cookie,
// as Blockbook does on every page (a session cookie on path /).
func (e *explorer) pageFiat(w http.ResponseWriter, r *http.Request) *fiatView {
	f := fiatFrom(r)
	if f == nil {
		return nil
	}
	w.Header().Add("Vary", "Cookie")
	if c, err := r.Cookie(secondaryCookie); err != nil || c.Value != f.cookie {
		http.SetCookie(w, &http.Cookie{Name: secondaryCookie, Value: f.cookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	return f
}

// ratesAt looks up, in one query, the rates at the times not known yet.
func (f *fiatView) ratesAt(times []int64) {
	var missing []int64
	for _, t := range times {
		if _, ok := f.at[t]; !ok && t > 0 {
			f.at[t] = timeRate{}
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return
	}
	res, err := f.lookup(missing)
	if err != nil {
		f.log(err)
		return
	}
	for i, tk := range res.Tickers {
		if r := tk.Rates[f.code]; i < len(missing) && r > 0 {
			f.at[missing[i]] = timeRate{rate: r, now: tk.Timestamp == f.nowTS}
		}
	}
}

// fiatAmounts values the amounts of one tx: at the rate of its time where
// known (Day is then its UTC day), else at the current rate.
type fiatAmounts struct {
	*fiatView         // its Rate is the current one
	txRate    float64 // the rate the amounts show at
	Day       string
}

// forTime is the valuation at time t (ratesAt asked before).
func (f *fiatView) forTime(t int64) *fiatAmounts {
	// A time valued at the current ticker is "now", not a day of its own.
	if r := f.at[t]; r.rate > 0 && !r.now {
		return &fiatAmounts{fiatView: f, txRate: r.rate, Day: time.Unix(t, 0).UTC().Format("2006-01-02")}
	}
	return &fiatAmounts{fiatView: f, txRate: f.Rate}
}

// fiatThen is an amount at the rate of a day (Then, "" if that rate is
// unknown) and at the current rate.
type fiatThen struct{ Then, Day, Now string }

// fiatTx is a tx of a list with the valuation of its amounts.
type fiatTx struct {
	*api.Tx
	fiat *fiatAmounts
}

// txOf unwraps what the tx templates are given.
func txOf(v any) *api.Tx {
	switch t := v.(type) {
	case *api.Tx:
		return t
	case fiatTx:
		return t.Tx
	}
	panic("explorer: not a tx") // a template bug, recovered as a 500
}

// fiatTxs values a list of txs with one rate lookup for all their times;
// without rates the txs are passed on as they are.
func fiatTxs(f *fiatView, txs []*api.Tx) []fiatTx {
	out := make([]fiatTx, len(txs))
	if f != nil {
		times := make([]int64, len(txs))
		for i, tx := range txs {
			times[i] = tx.BlockTime
		}
		f.ratesAt(times)
		f.tokenRatesAt(txs)
	}
	for i, tx := range txs {
		out[i].Tx = tx
		if f != nil {
			out[i].fiat = f.forTime(tx.BlockTime)
		}
	}
	return out
}

// coinValue is an amount of base units in coins.
func (f *fiatView) coinValue(a *api.Amount) float64 {
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(f.coin.Decimals)), nil)
	v, _ := new(big.Rat).SetFrac(amountInt(a), unit).Float64()
	return v
}

// format renders a value in the currency: two decimals, or six for a coin
// as currency (Blockbook's rule for BTC and ETH), digits grouped.
func (f *fiatView) format(v float64, signed bool) string {
	prec := 2
	if f.code == "btc" || f.code == "eth" {
		prec = 6
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', prec, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err == nil {
		whole = groupDigits(n)
	}
	s = whole + "." + frac
	switch {
	case v < 0 && strings.Trim(s, "0.,") != "":
		s = "-" + s
	case signed && v > 0 && strings.Trim(s, "0.,") != "":
		s = "+" + s
	}
	return s + " " + f.Code
}

// money renders an amount of a list: in fiat when the choice is to show
// fiat (the coins in its title), else in coins.
func (e *explorer) money(fa *fiatAmounts, a *api.Amount, signed bool) template.HTML {
	d, unit := e.decimals()
	text := formatAmount(amountInt(a), d)
	if signed {
		text = formatSigned(amountInt(a), d)
	}
	coins := html.EscapeString(withUnit(text, unit))
	if fa == nil || !fa.Use || fa.txRate <= 0 {
		return template.HTML(coins)
	}
	v := fa.coinValue(a) * fa.txRate
	return template.HTML(`<span class="fiat" title="` + coins + `">` + html.EscapeString(fa.format(v, signed)) + `</span>`)
}

// fiatFuncs are the template functions of fiat values.
func (e *explorer) fiatFuncs() template.FuncMap {
	m := template.FuncMap{
		"fiatTxs": fiatTxs,
		// fiatTx values one tx (the tx page), nil without rates.
		"fiatTx": func(f *fiatView, tx *api.Tx) *fiatAmounts {
			if f == nil {
				return nil
			}
			f.ratesAt([]int64{tx.BlockTime})
			return f.forTime(tx.BlockTime)
		},
		// txFiat is a list tx's valuation (nil for a bare tx).
		"txFiat": func(v any) *fiatAmounts {
			if t, ok := v.(fiatTx); ok {
				return t.fiat
			}
			return nil
		},
		"money":       func(fa *fiatAmounts, a *api.Amount) template.HTML { return e.money(fa, a, false) },
		"signedMoney": func(fa *fiatAmounts, a *api.Amount) template.HTML { return e.money(fa, a, true) },
		// fiatPair is an amount at the rate of the tx's day and now.
		"fiatPair": func(fa *fiatAmounts, a *api.Amount) fiatThen {
			v := fa.coinValue(a)
			p := fiatThen{Now: fa.format(v*fa.Rate, false), Day: fa.Day}
			if fa.Day != "" {
				p.Then = fa.format(v*fa.txRate, false)
			}
			return p
		},
		// fiatNow is an amount at the current rate.
		"fiatNow": func(f *fiatView, a *api.Amount) string { return f.format(f.coinValue(a)*f.Rate, false) },
		// fiatValue renders a value the api computed (secondaryValue).
		"fiatValue": func(f *fiatView, v float64) string { return f.format(v, false) },
		// fiatPrice is one coin at time t ("" when unknown).
		"fiatPrice": func(f *fiatView, t int64) string {
			f.ratesAt([]int64{t})
			if r := f.at[t].rate; r > 0 {
				return f.format(r, false)
			}
			return ""
		},
	}
	maps.Copy(m, tokenFiatFuncs())
	return m
}
