package esplora

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// The websocket's messages: what a client asks (handle) and the keyed
// answers (wsMsg), with the shared data each push carries (wsData).

// wantable is mempool.space's list of "want" subscriptions.
var wantable = []string{"blocks", "mempool-blocks", "live-2h-chart", "stats", "tomahawk"}

// mpAddressRE is mempool.space's testAddress pattern (base58, bech32 in
// one case, or a public key).
var mpAddressRE = regexp.MustCompile(`^([a-km-zA-HJ-NP-Z1-9]{26,35}|[a-km-zA-HJ-NP-Z1-9]{80}|[a-z]{2,5}1[ac-hj-np-z02-9]{8,100}|[A-Z]{2,5}1[AC-HJ-NP-Z02-9]{8,100}|04[a-fA-F0-9]{128}|(02|03)[a-fA-F0-9]{64})$`)

// wsMsg is one answer: keys in order, each with its JSON value. A value
// is a push's shared part (wsData's, the same slice for every client) or
// private (encoded for this client alone).
type wsMsg struct {
	keys []string
	vals []json.RawMessage
	priv []bool
}

func (m *wsMsg) add(key string, v json.RawMessage) { m.put(key, v, false) }

// addPrivate adds a value rendered for this client alone.
func (m *wsMsg) addPrivate(key string, v json.RawMessage) { m.put(key, v, true) }

func (m *wsMsg) put(key string, v json.RawMessage, private bool) {
	if v != nil {
		m.keys, m.vals, m.priv = append(m.keys, key), append(m.vals, v), append(m.priv, private)
	}
}

// addValue encodes v under key, for this client alone.
func (m *wsMsg) addValue(key string, v any) {
	b, err := json.Marshal(v)
	if err == nil {
		m.addPrivate(key, b)
	}
}

// bytes encodes every part in one object (nil without any).
func (m *wsMsg) bytes() []byte { return m.encode(func(int) bool { return true }) }

func (m *wsMsg) encode(keep func(i int) bool) []byte {
	var b bytes.Buffer
	for i, k := range m.keys {
		if !keep(i) {
			continue
		}
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(m.vals[i])
	}
	if b.Len() == 0 {
		return nil
	}
	b.WriteByte('}')
	return b.Bytes()
}

// sendSplit sends a push's message as one frame of parts: the shared
// values (a mempool delta, a projected block's txs, the stats: the same
// buffers for every client) by reference, and the keys and the client's
// own values in small buffers of its own, which alone count against the
// shared budget. A client that does not read so holds its own parts
// alone, never a copy of the shared ones.
func sendSplit(c *wsConn, m *wsMsg) {
	if len(m.keys) == 0 {
		return
	}
	var parts [][]byte
	var cur []byte
	own := 0
	for i, k := range m.keys {
		if i == 0 {
			cur = append(cur, '{')
		} else {
			cur = append(cur, ',')
		}
		kb, _ := json.Marshal(k)
		cur = append(append(cur, kb...), ':')
		if m.priv[i] {
			cur = append(cur, m.vals[i]...)
			continue
		}
		parts = append(parts, cur, m.vals[i])
		own += len(cur)
		cur = nil
	}
	cur = append(cur, '}')
	own += len(cur)
	c.SendParts(append(parts, cur), own)
}

// wsError is an answer to a message the server cannot take: {"error": msg}.
func wsError(msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return b
}

// handle answers one client message. Mempool.space ignores what it does
// not understand and closes the connection on unparsable JSON; we answer
// both with an error and keep the connection.
func (w *mpWS) handle(c *wsConn, data []byte) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(data, &msg); err != nil || msg == nil {
		c.send(wsError("invalid message: send a JSON object such as {\"action\":\"init\"}"))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
	defer cancel()
	d := w.newData(ctx)
	out := &wsMsg{}
	known := false
	var action string
	if raw, ok := msg["action"]; ok {
		known = true
		if json.Unmarshal(raw, &action) != nil || (action != "init" && action != "want" && action != "ping") {
			out.addValue("error", fmt.Sprintf("unknown action %s: the actions are init, want and ping", bound(raw)))
		}
	}
	if action == "want" {
		w.want(c, msg["data"], d, out)
	}
	if v, ok := msg["refresh-blocks"]; ok && string(v) != "false" && string(v) != "null" {
		known = true
		out.add("blocks", d.get("blocks"))
	}
	for _, h := range []struct {
		key string
		fn  func(json.RawMessage)
	}{
		{"track-tx", func(raw json.RawMessage) { w.trackTx(c, raw, d, out) }},
		{"track-address", func(raw json.RawMessage) { w.trackAddress(c, raw, out) }},
		{"track-addresses", func(raw json.RawMessage) { w.trackAddresses(c, raw, out) }},
		{"track-rbf", func(raw json.RawMessage) { w.trackRbf(c, "track-rbf", raw, d, out) }},
		{"track-rbf-summary", func(raw json.RawMessage) { w.trackRbf(c, "track-rbf-summary", raw, d, out) }},
		{"track-mempool-block", func(raw json.RawMessage) { w.trackMempoolBlock(c, raw, d, out) }},
		{"track-txs", func(raw json.RawMessage) { w.trackTxs(c, raw, d, out) }},
		{"track-scriptpubkeys", func(raw json.RawMessage) { w.trackScriptPubkeys(c, raw, out) }},
		{"track-mempool", func(raw json.RawMessage) { w.trackMempool(c, "track-mempool", raw, out) }},
		{"track-mempool-txids", func(raw json.RawMessage) { w.trackMempool(c, "track-mempool-txids", raw, out) }},
	} {
		if raw, ok := msg[h.key]; ok {
			known = true
			h.fn(raw)
		}
	}
	if action == "ping" {
		out.add("pong", json.RawMessage("true"))
	}
	if !known {
		c.send(wsError("unknown message: it has none of the keys action, track-tx, track-txs, track-address, track-addresses, track-scriptpubkeys, track-rbf, track-rbf-summary, track-mempool-block, track-mempool, track-mempool-txids"))
		return
	}
	if action == "init" {
		c.send(w.initData(d))
	}
	if b := out.bytes(); b != nil {
		c.send(b)
	}
}

// bound quotes at most 64 bytes of a client's value in an error.
func bound(raw json.RawMessage) string {
	if len(raw) > 64 {
		return string(raw[:64]) + "…"
	}
	return string(raw)
}

// want sets the client's subscriptions and answers the data of the newly
// wanted ones, as mempool.space does.
func (w *mpWS) want(c *wsConn, raw json.RawMessage, d *wsData, out *wsMsg) {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || raw == nil {
		out.addValue("error", "want: data must be an array of strings, e.g. [\"blocks\",\"mempool-blocks\",\"stats\"]")
		return
	}
	now := map[string]bool{}
	c.mu.Lock()
	for _, sub := range wantable {
		wants := contains(list, sub)
		if wants && !c.wants[sub] {
			now[sub] = true
		}
		c.wants[sub] = wants
	}
	c.mu.Unlock()
	if now["blocks"] {
		out.add("blocks", d.get("blocks"))
	}
	if now["mempool-blocks"] {
		out.add("mempool-blocks", d.get("mempool-blocks"))
	}
	if now["stats"] {
		d.addStats(out, false)
	}
}

// trackTx follows one txid (mempool.space answers its position when it is
// in the mempool); "stop" or anything that is not a txid stops.
func (w *mpWS) trackTx(c *wsConn, raw json.RawMessage, d *wsData, out *wsMsg) {
	var s string
	_ = json.Unmarshal(raw, &s)
	h, err := bchain.ParseHash(strings.ToLower(s))
	valid := len(s) == 64 && err == nil
	c.mu.Lock()
	c.trackTx = nil
	if valid {
		c.trackTx = &h
	}
	c.cpfpTold = nil
	c.updateWatchLocked()
	c.mu.Unlock()
	if !valid {
		if s != "stop" {
			out.addValue("track-tx-error", "track-tx: not a txid (64 hex digits); tracking stopped")
		}
		return
	}
	if pos := d.positions(map[bchain.Hash]struct{}{h: {}}); pos != nil {
		if p, ok := pos[h]; ok {
			out.addValue("txPosition", txPosition{Txid: h.String(), Position: p})
		}
	}
	c.mu.Lock()
	c.toldReplaced = bchain.Hash{}
	c.mu.Unlock()
	w.addReplaced(c, h, "txReplaced", out)
}

// canonical is mempool.space's testAddress's canonical form and our
// descriptor of it; false when it is no address of this chain.
func (w *mpWS) canonical(a string) (string, bchain.AddrDesc, bool) {
	if !mpAddressRE.MatchString(a) {
		return "", nil, false
	}
	if strings.ToUpper(a) == a && strings.Contains(a, "1") && !strings.HasPrefix(a, "0") {
		a = strings.ToLower(a) // an upper-case bech32 address
	}
	desc, err := w.s.svc.AddrDesc(a)
	if err != nil || len(desc) == 0 {
		return "", nil, false
	}
	return a, desc, true
}

// setAddrs replaces c's tracked addresses (single is track-address's, ""
// to keep it; multi those of track-addresses, nil to keep them).
func (w *mpWS) setAddrs(c *wsConn, single *string, singleDesc bchain.AddrDesc, multi map[string]bchain.AddrDesc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c.mu.Lock()
	keepSingle, keepMulti := c.trackAddr, c.multi
	c.mu.Unlock()
	old := map[string]bchain.AddrDesc{}
	addrs := map[string]bchain.AddrDesc{}
	c.mu.Lock()
	for a, d := range c.addrs {
		old[a] = d
		if strings.HasPrefix(a, spkKey) {
			addrs[a] = d // track-scriptpubkeys's scripts stay
		}
	}
	c.mu.Unlock()
	w.untrackLocked(c)
	if single == nil {
		if keepSingle != "" {
			addrs[keepSingle] = old[keepSingle]
		}
	} else if *single != "" {
		addrs[*single] = singleDesc
	}
	if multi == nil {
		for a := range keepMulti {
			addrs[a] = old[a]
		}
	} else {
		keepMulti = map[string]bool{}
		for a, d := range multi {
			addrs[a] = d
			keepMulti[a] = true
		}
	}
	c.mu.Lock()
	if single != nil {
		c.trackAddr = *single
	}
	c.multi = keepMulti
	c.mu.Unlock()
	w.indexLocked(c, addrs)
}

func (w *mpWS) trackAddress(c *wsConn, raw json.RawMessage, out *wsMsg) {
	var s string
	_ = json.Unmarshal(raw, &s)
	a, desc, ok := w.canonical(s)
	if !ok {
		a = ""
		if s != "stop" {
			out.addValue("track-address-error", "track-address: not an address of this chain; tracking stopped")
		}
	}
	w.setAddrs(c, &a, desc, nil)
}

func (w *mpWS) trackAddresses(c *wsConn, raw json.RawMessage, out *wsMsg) {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		out.addValue("track-addresses-error", "track-addresses: send an array of addresses")
		return
	}
	m := map[string]bchain.AddrDesc{}
	var bad []string
	for _, s := range list {
		if a, d, ok := w.canonical(s); ok {
			m[a] = d
		} else if len(bad) < 3 {
			bad = append(bad, s[:min(len(s), 100)])
		}
	}
	if len(m) > w.cfg.MaxAddresses {
		out.addValue("track-addresses-error", fmt.Sprintf("too many addresses requested, this connection supports tracking a maximum of %d addresses", w.cfg.MaxAddresses))
		m = map[string]bchain.AddrDesc{}
	} else if len(bad) > 0 {
		out.addValue("track-addresses-error", fmt.Sprintf("track-addresses: not addresses of this chain (left out): %q", bad))
	}
	w.setAddrs(c, nil, nil, m)
}

// trackMempoolBlock follows projected block i (0-7; -1 stops): its txs now
// and whenever they change, as projected-block-transactions.
func (w *mpWS) trackMempoolBlock(c *wsConn, raw json.RawMessage, d *wsData, out *wsMsg) {
	var i float64
	err := json.Unmarshal(raw, &i)
	valid := err == nil && i == float64(int(i)) && i >= 0 && i < mempoolBlocks
	if !valid {
		c.blockMu.Lock()
		c.mu.Lock()
		c.mempoolBlock = -1
		c.mu.Unlock()
		c.blockMu.Unlock()
		if i != -1 || err != nil {
			out.addValue("track-mempool-block-error", fmt.Sprintf("track-mempool-block: not a projected block index (0 to %d); tracking stopped", mempoolBlocks-1))
		}
		return
	}
	// Its own frame, sent at once: see startTracking.
	w.startTracking(c, int(i), d)
}
