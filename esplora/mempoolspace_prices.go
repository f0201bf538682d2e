package esplora

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// mempool.space's prices and historical-price (its PricesRepository's
// ApiPrice and Conversion) from our fiat rates (fiat_rates in the coin's
// config). Its currencies, USD first; a currency our rates lack is -1, as
// in its empty price object. Prices are whole units, as its price table
// stores them.
var mpCurrencies = []string{"USD", "EUR", "GBP", "CAD", "CHF", "AUD", "JPY", "BGN", "BRL", "CNY", "CZK", "DKK", "HKD",
	"HRK", "HUF", "IDR", "ILS", "INR", "ISK", "KRW", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN", "RON", "RUB", "SEK", "SGD",
	"THB", "TRY", "ZAR"}

const noPrices = "Prices are not available: this server has no fiat rates (fiat_rates in the coin's config) or has not downloaded them yet"

// mpPrice renders a ticker as an ApiPrice object, keys in
// mempool.space's order.
func mpPrice(t *api.FiatTicker, only string) *wsMsg {
	m := &wsMsg{}
	m.addValue("time", t.Timestamp)
	for _, c := range mpCurrencies {
		if only != "" && c != only && c != "USD" {
			continue
		}
		m.addValue(c, priceOf(t, c))
	}
	return m
}

func priceOf(t *api.FiatTicker, c string) float64 {
	r, ok := t.Rates[strings.ToLower(c)]
	if !ok || r < 0 {
		return -1
	}
	return math.Round(r)
}

// currentPrices is the current ticker, or an error saying there is none.
func (s *Server) currentPrices(ctx context.Context) (*api.FiatTicker, error) {
	t, err := s.svc.CurrentFiatRates(ctx, nil, "")
	if err != nil || t == nil || t.Error != "" || len(t.Rates) == 0 {
		return nil, mpError(http.StatusNotFound, noPrices)
	}
	return t, nil
}

// prices answers /api/v1/prices.
func (s *Server) prices(ctx context.Context) (*reply, error) {
	t, err := s.currentPrices(ctx)
	if err != nil {
		return nil, err
	}
	return &reply{"application/json", mpPrice(t, "").bytes()}, nil
}

// conversions is the websocket's conversions part (nil without rates).
func (s *Server) conversions(ctx context.Context) []byte {
	t, err := s.currentPrices(ctx)
	if err != nil {
		return nil
	}
	return mpPrice(t, "").bytes()
}

// historicalPrice answers /api/v1/historical-price?timestamp=&currency=:
// the rates of the time (ours: the finest ticker that covers it, else the
// first daily ticker at or after it, Blockbook's rule; mempool.space takes
// the last at or before it) and
// the USD exchange rates of the current ticker. mempool.space lists its
// whole history without a timestamp; we keep no such list to serve and
// ask for one.
func (s *Server) historicalPrice(ctx context.Context, q url.Values) (*reply, error) {
	raw := q.Get("timestamp")
	ts, err := strconv.ParseInt(raw, 10, 64)
	if raw == "" || err != nil || ts <= 0 || ts > maxUnixTime {
		return nil, mpError(http.StatusBadRequest, "timestamp must be a Unix time in seconds: this server answers one time per request")
	}
	currency := strings.ToUpper(q.Get("currency"))
	if currency != "" && !contains(mpCurrencies, currency) {
		return nil, mpError(http.StatusBadRequest, "currency must be one of "+strings.Join(mpCurrencies, ", "))
	}
	latest, err := s.currentPrices(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.svc.FiatRatesForTimestamps(ctx, []int64{ts}, nil, "")
	if err != nil {
		return nil, err
	}
	if len(res.Tickers) != 1 || len(res.Tickers[0].Rates) == 0 {
		return nil, mpError(http.StatusNotFound, "no price at or after this time")
	}
	t := res.Tickers[0]
	if currency != "" && priceOf(&t, currency) < 0 {
		return nil, mpError(http.StatusNotFound, "no "+currency+" price at or after this time")
	}
	fx := &wsMsg{}
	usd := priceOf(latest, "USD")
	for _, c := range mpCurrencies[1:] {
		rate := 0.0
		if usd > 0.05 {
			rate = math.Round(math.Max(priceOf(latest, c), 0)/usd*100) / 100
		}
		fx.addValue("USD"+c, rate)
	}
	out := &wsMsg{}
	out.add("prices", append(append([]byte{'['}, mpPrice(&t, currency).bytes()...), ']'))
	out.add("exchangeRates", fx.bytes())
	return &reply{"application/json", out.bytes()}, nil
}

// maxUnixTime is the last second of year 9999.
const maxUnixTime = 253402300799
