package server

import (
	"context"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// Subscription methods. A subscription answers {subscribed: true}; its
// notifications reuse the subscribing request's id. Subscribing again
// replaces the previous subscription of the same kind.

type subscribed struct {
	Subscribed bool   `json:"subscribed"`
	Message    string `json:"message,omitempty"`
}

func wsSubscribeNewBlock(_ context.Context, c *wsConn, req *wsRequest) (any, error) {
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.ctx.Err() != nil {
		return subscribed{}, nil // closed meanwhile: its subscriptions are already gone
	}
	h.newBlock[c] = req.ID
	h.gauges()
	return subscribed{Subscribed: true}, nil
}

func wsUnsubscribeNewBlock(_ context.Context, c *wsConn, _ *wsRequest) (any, error) {
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.newBlock, c)
	h.gauges()
	return subscribed{Subscribed: false}, nil
}

// Blockbook's words when subscribeNewTransaction is off.
const newTxDisabled = " not enabled, use -enablesubnewtx flag to enable."

func wsSubscribeNewTransaction(_ context.Context, c *wsConn, req *wsRequest) (any, error) {
	if !c.s.cfg.EnableSubNewTx {
		return subscribed{Subscribed: false, Message: "subscribeNewTransaction" + newTxDisabled}, nil
	}
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.ctx.Err() != nil {
		return subscribed{}, nil // closed meanwhile: its subscriptions are already gone
	}
	h.newTx[c] = req.ID
	h.gauges()
	return subscribed{Subscribed: true}, nil
}

func wsUnsubscribeNewTransaction(_ context.Context, c *wsConn, _ *wsRequest) (any, error) {
	if !c.s.cfg.EnableSubNewTx {
		return subscribed{Subscribed: false, Message: "unsubscribeNewTransaction" + newTxDisabled}, nil
	}
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.newTx, c)
	h.gauges()
	return subscribed{Subscribed: false}, nil
}

func wsSubscribeAddresses(_ context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Addresses   []string `json:"addresses"`
		NewBlockTxs bool     `json:"newBlockTxs"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	limit := c.s.cfg.MaxAddresses
	if p.NewBlockTxs {
		limit = c.s.cfg.MaxAddressesBlocks
	}
	if len(p.Addresses) > limit {
		return nil, &api.Error{Msg: "addresses max " + strconv.Itoa(limit)}
	}
	descs := make([]string, 0, len(p.Addresses))
	seen := make(map[string]bool, len(p.Addresses))
	for _, a := range p.Addresses {
		d, err := c.s.svc.AddrDesc(a)
		if err != nil {
			return nil, err
		}
		if !seen[string(d)] {
			seen[string(d)] = true
			descs = append(descs, string(d))
		}
	}
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.ctx.Err() != nil {
		return subscribed{}, nil // closed meanwhile: its subscriptions are already gone
	}
	h.unsubscribeAddrsLocked(c)
	for _, d := range descs {
		subs := h.addrs[d]
		if subs == nil {
			subs = map[*wsConn]addrSub{}
			h.addrs[d] = subs
		}
		subs[c] = addrSub{id: req.ID, newBlockTxs: p.NewBlockTxs}
		if p.NewBlockTxs {
			h.blockTxSubs++
		}
	}
	c.addrs = descs
	h.gauges()
	return subscribed{Subscribed: true}, nil
}

func wsUnsubscribeAddresses(_ context.Context, c *wsConn, _ *wsRequest) (any, error) {
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unsubscribeAddrsLocked(c)
	h.gauges()
	return subscribed{Subscribed: false}, nil
}

func wsSubscribeFiatRates(_ context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Currency string   `json:"currency"`
		Tokens   []string `json:"tokens"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	// The list is kept for the connection's life: bound it.
	if err := api.CheckListLen("tokens", len(p.Tokens), wsMaxFiatTokens); err != nil {
		return nil, err
	}
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.ctx.Err() != nil {
		return subscribed{}, nil // closed meanwhile: its subscriptions are already gone
	}
	h.fiat[c] = fiatSub{id: req.ID, currency: strings.ToLower(p.Currency), tokens: p.Tokens}
	h.gauges()
	return subscribed{Subscribed: true}, nil
}

func wsUnsubscribeFiatRates(_ context.Context, c *wsConn, _ *wsRequest) (any, error) {
	h := c.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.fiat, c)
	h.gauges()
	return subscribed{Subscribed: false}, nil
}
