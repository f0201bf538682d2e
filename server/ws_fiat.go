package server

import (
	"encoding/json"

	"github.com/openexplorer/blockbook/api"
)

// wsMaxFiatTokens bounds subscribeFiatRates' tokens, held for as long as
// the subscription lasts (Blockbook: unbounded).
const wsMaxFiatTokens = 1000

// OnFiatRates delivers new current fiat rates to the subscribeFiatRates
// subscribers, in Blockbook's shapes: {rates: {<currency>: rate}} to those
// of one currency (nothing when the ticker lacks it), with tokenRates
// {<token>: rate in the currency} of the subscribed tokens that have one,
// and {rates: {...all}} to those that named none (without tokenRates, as
// Blockbook). Payloads without tokens are encoded once per currency;
// sending only queues, so this never waits for a client.
func (s *Websocket) OnFiatRates(t *api.FiatTicker) {
	h := s.hub
	h.mu.Lock()
	subs := make(map[*wsConn]fiatSub, len(h.fiat))
	for c, sub := range h.fiat {
		subs[c] = sub
	}
	h.mu.Unlock()
	payloads := map[string][]byte{}
	for c, sub := range subs {
		data, done := payloads[sub.currency]
		switch {
		case sub.currency != "" && len(sub.tokens) > 0:
			data = fiatTokenPayload(t, sub.currency, sub.tokens)
		case !done:
			data = fiatPayload(t, sub.currency)
			payloads[sub.currency] = data
		}
		if data != nil && c.send(notification(sub.id, data)) {
			s.m.notifications.WithLabelValues("fiatRates").Inc()
		}
	}
}

// fiatPayload renders the notification for subscribers of currency ("":
// all rates); nil when the ticker has no such rate.
func fiatPayload(t *api.FiatTicker, currency string) []byte {
	rates := t.Rates
	if currency != "" {
		r, ok := t.Rates[currency]
		if !ok {
			return nil
		}
		rates = map[string]float64{currency: r}
	}
	data, err := json.Marshal(struct {
		Rates map[string]float64 `json:"rates"`
	}{rates})
	if err != nil {
		return nil
	}
	return data
}

// fiatTokenPayload renders the notification for a subscriber of currency
// and tokens; nil when the ticker has no such rate.
func fiatTokenPayload(t *api.FiatTicker, currency string, tokens []string) []byte {
	r, ok := t.Rates[currency]
	if !ok {
		return nil
	}
	data, err := json.Marshal(struct {
		Rates      map[string]float64 `json:"rates"`
		TokenRates map[string]float64 `json:"tokenRates,omitempty"`
	}{map[string]float64{currency: r}, api.TokenFiatRates(t, tokens, currency)})
	if err != nil {
		return nil
	}
	return data
}
