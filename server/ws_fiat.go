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
// of one currency (nothing when the ticker lacks it) and {rates: {...all}}
// to those that named none. Each payload is encoded once; sending only
// queues, so this never waits for a client.
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
		if !done {
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
