package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// Fiat rate endpoints, with Blockbook's parameters and error texts
// (server/public.go there: apiTickers, apiMultiTickers, apiTickersList).

// fiatQuery reads the single currency and the token, lowercased.
func fiatQuery(r *http.Request) (currencies []string, token string) {
	q := r.URL.Query()
	if c := strings.ToLower(q.Get("currency")); c != "" {
		currencies = []string{c}
	}
	return currencies, strings.ToLower(q.Get("token"))
}

// tickers serves /api/v2/tickers/: the rates at a block's time (block, a
// height or hash), at a time (timestamp), or the current ones.
func (p *Public) tickers(r *http.Request) (any, error) {
	currencies, token := fiatQuery(r)
	q := r.URL.Query()
	if block := q.Get("block"); block != "" {
		return p.svc.FiatRatesForBlock(r.Context(), block, currencies, token)
	}
	if s := q.Get("timestamp"); s != "" {
		ts, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, &api.Error{Msg: "Parameter 'timestamp' is not a valid Unix timestamp."}
		}
		res, err := p.svc.FiatRatesForTimestamps(r.Context(), []int64{ts}, currencies, token)
		if err != nil {
			return nil, err
		}
		return &res.Tickers[0], nil
	}
	return p.svc.CurrentFiatRates(r.Context(), currencies, token)
}

// multiTickers serves /api/v2/multi-tickers/?timestamp=t1,t2,…: an array
// of tickers, one per timestamp.
func (p *Public) multiTickers(r *http.Request) (any, error) {
	currencies, token := fiatQuery(r)
	s := r.URL.Query().Get("timestamp")
	if s == "" {
		return nil, &api.Error{Msg: "Parameter 'timestamp' is missing."}
	}
	// Counted before parsing so that a huge list costs no allocation.
	if err := api.CheckListLen("timestamps", strings.Count(s, ",")+1, api.MaxFiatTimestamps); err != nil {
		return nil, err
	}
	parts := strings.Split(s, ",")
	ts := make([]int64, len(parts))
	for i, part := range parts {
		v, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return nil, &api.Error{Msg: "Parameter 'timestamp' does not contain a valid Unix timestamp."}
		}
		ts[i] = v
	}
	res, err := p.svc.FiatRatesForTimestamps(r.Context(), ts, currencies, token)
	if err != nil {
		return nil, err
	}
	return res.Tickers, nil
}

// tickersList serves /api/v2/tickers-list/?timestamp=: the currencies with
// rates at that time.
func (p *Public) tickersList(r *http.Request) (any, error) {
	_, token := fiatQuery(r)
	ts, err := strconv.ParseInt(strings.ToLower(r.URL.Query().Get("timestamp")), 10, 64)
	if err != nil {
		return nil, &api.Error{Msg: `Parameter "timestamp" is not a valid Unix timestamp.`}
	}
	return p.svc.FiatRatesTickersList(r.Context(), ts, token)
}
