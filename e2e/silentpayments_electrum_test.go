package e2e

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/internal/bip352"
	"github.com/openexplorer/blockbook/tools/spchain"
)

// spElectrum is a raw Electrum connection for the Silent Payments
// methods, whose notifications (Frigate's named params, Cake Wallet's
// maps) the shared client does not read.
type spElectrum struct {
	t     *testing.T
	c     net.Conn
	r     *bufio.Reader
	id    int
	notes []spNote
}

type spNote struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func dialSPElectrum(t *testing.T, addr string) *spElectrum {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &spElectrum{t: t, c: c, r: bufio.NewReaderSize(c, 1<<20)}
}

// call sends a call and reads up to its answer, keeping the
// notifications before it; it returns the result or the error.
func (e *spElectrum) call(method string, params ...any) (json.RawMessage, json.RawMessage) {
	e.t.Helper()
	e.id++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.id, "method": method, "params": params})
	_ = e.c.SetWriteDeadline(time.Now().Add(waitFor))
	if _, err := e.c.Write(append(req, '\n')); err != nil {
		e.t.Fatal(err)
	}
	for {
		m := e.read()
		if string(m["id"]) == strconv.Itoa(e.id) {
			return m["result"], m["error"]
		}
	}
}

func (e *spElectrum) read() map[string]json.RawMessage {
	e.t.Helper()
	_ = e.c.SetReadDeadline(time.Now().Add(waitFor))
	line, err := e.r.ReadBytes('\n')
	if err != nil {
		e.t.Fatalf("electrum read: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		e.t.Fatalf("electrum message %q: %v", line, err)
	}
	if _, ok := m["method"]; ok {
		var n spNote
		_ = json.Unmarshal(line, &n)
		e.notes = append(e.notes, n)
	}
	return m
}

// cakeOutput is an output of a tweaks.subscribe notification.
type cakeOutput struct {
	txid    string
	vout    uint32
	value   uint64
	spender bool
}

// cakeScan fetches count blocks from height with blockchain.tweaks.subscribe
// and scans them as Cake Wallet does: the outputs found, and the heights
// notified in order.
func cakeScan(t *testing.T, e *spElectrum, s *bip352.Scanner, height, count int, historical bool) (map[[32]byte]cakeOutput, []int) {
	t.Helper()
	e.notes = nil
	res, bad := e.call("blockchain.tweaks.subscribe", height, count, historical)
	if bad != nil {
		t.Fatalf("tweaks.subscribe %d %d: %s", height, count, bad)
	}
	if !strings.Contains(string(res), `"params":[{"message":"done"}]`) {
		t.Errorf("tweaks.subscribe result %s", res)
	}
	found := map[[32]byte]cakeOutput{}
	var heights []int
	done := false
	for _, n := range e.notes {
		if n.Method != "blockchain.tweaks.subscribe" {
			continue
		}
		var p []map[string]json.RawMessage
		if err := json.Unmarshal(n.Params, &p); err != nil || len(p) != 1 {
			t.Fatalf("tweaks notification %s", n.Params)
		}
		if msg, ok := p[0]["message"]; ok {
			done = string(msg) == `"done"`
			continue
		}
		if done {
			t.Errorf("a block after done: %s", n.Params)
		}
		for k, raw := range p[0] {
			h, _ := strconv.Atoi(k)
			heights = append(heights, h)
			var txs map[string]struct {
				Tweak   string                       `json:"tweak"`
				Outputs map[string][]json.RawMessage `json:"output_pubkeys"`
			}
			if err := json.Unmarshal(raw, &txs); err != nil {
				t.Fatalf("block %s: %v", k, err)
			}
			for txid, tx := range txs {
				byKey := map[[32]byte]cakeOutput{}
				var keys [][32]byte
				for vout, o := range tx.Outputs {
					var key string
					var k [32]byte
					var value uint64
					_ = json.Unmarshal(o[0], &key)
					_ = json.Unmarshal(o[1], &value)
					if b, err := hex.DecodeString(key); err != nil || len(b) != 32 {
						t.Fatalf("output key %s", o[0])
					} else {
						copy(k[:], b)
					}
					v, _ := strconv.Atoi(vout)
					keys = append(keys, k)
					byKey[k] = cakeOutput{txid: txid, vout: uint32(v), value: value, spender: len(o) > 2 && string(o[2]) != "null"}
				}
				scanTx(t, s, tx.Tweak, keys, byKey, found)
			}
		}
	}
	if !done {
		t.Errorf("no done message after %v", heights)
	}
	return found, heights
}

// scanTx scans a tx's output keys with its tweak (hex) and files the
// outputs found (described by byKey) in found.
func scanTx(t *testing.T, s *bip352.Scanner, tweak string, keys [][32]byte, byKey, found map[[32]byte]cakeOutput) {
	t.Helper()
	tw, _ := hex.DecodeString(tweak)
	ms, err := s.Scan(tw, keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		found[m.Output] = byKey[m.Output]
	}
}

// checkCake requires cakeScan of the payment block to find exactly the
// payments, less those of txs whose outputs are all spent (dropped names
// them) unless historical, when the spent ones name their spender.
func checkCake(t *testing.T, c *spchain.Chain, e *spElectrum, s *bip352.Scanner, tip int, spent, dropped []wire.OutPoint, historical bool) {
	t.Helper()
	pay := int(c.SP.PayHeight)
	found, heights := cakeScan(t, e, s, pay-1, 3, historical)
	var wantHeights []int
	for h := pay - 1; h <= min(pay+1, tip); h++ {
		wantHeights = append(wantHeights, h)
	}
	if !slices.Equal(heights, wantHeights) {
		t.Errorf("blocks notified %v, want %v", heights, wantHeights)
	}
	if historical {
		dropped = nil
	}
	checkSPFound(t, "tweaks.subscribe", c, found, spent, dropped, historical)
}

// checkSPFound requires found to hold exactly the payments less those of
// dropped txs, with the spent flag (flagSpent) of those in spent.
func checkSPFound(t *testing.T, what string, c *spchain.Chain, found map[[32]byte]cakeOutput, spent, dropped []wire.OutPoint, flagSpent bool) {
	t.Helper()
	want := 0
	for _, p := range c.SP.Payments {
		f, ok := found[p.Key]
		isSpent := slices.Contains(spent, p.Outpoint)
		if slices.Contains(dropped, p.Outpoint) {
			if ok {
				t.Errorf("%s: payment %v of a spent tx sent", what, p.Outpoint)
			}
			continue
		}
		want++
		if !ok || f.txid != p.Outpoint.Hash.String() || f.vout != p.Outpoint.Index || f.value != uint64(p.Value) || f.spender != (isSpent && flagSpent) {
			t.Errorf("%s: payment %v found as %+v (%v), spent %v", what, p.Outpoint, f, ok, isSpent)
		}
	}
	if len(found) != want {
		t.Errorf("%s: found %d outputs, want %d", what, len(found), want)
	}
	if _, ok := found[c.SP.Skipped.Key]; ok {
		t.Errorf("%s: found the payment of the tx with a witness v2 input", what)
	}
}

// checkSPPage scans the payment block's tweak page of our own REST and
// websocket APIs (filterSpent): the same payments as the other wires.
func checkSPPage(t *testing.T, c *spchain.Chain, base string, ws *wsClient, s *bip352.Scanner, spent, dropped []wire.OutPoint) {
	t.Helper()
	pay := c.SP.PayHeight
	var rest, page api.TweakPage
	if err := spchain.GetJSON(base, fmt.Sprintf("/api/v2/sp-tweaks/%d?filterSpent=true", pay), &rest); err != nil {
		t.Fatal(err)
	}
	ws.ok("getSilentPaymentTweaks", map[string]any{"height": pay, "filterSpent": true}, &page)
	covered("getSilentPaymentTweaks")
	if !reflect.DeepEqual(rest, page) {
		t.Errorf("REST page %+v, websocket page %+v", rest, page)
	}
	if page.Height != uint32(pay) || page.Hash != c.Main[pay].Hash.String() || !page.FilterSpent {
		t.Errorf("page header %d %s %v", page.Height, page.Hash, page.FilterSpent)
	}
	found := map[[32]byte]cakeOutput{}
	for _, tx := range page.Txs {
		keys := make([][32]byte, len(tx.Outputs))
		byKey := map[[32]byte]cakeOutput{}
		for i, o := range tx.Outputs {
			if _, err := hex.Decode(keys[i][:], []byte(o.Key)); err != nil {
				t.Fatalf("output key %q", o.Key)
			}
			v, _ := strconv.ParseUint(o.Value, 10, 64)
			byKey[keys[i]] = cakeOutput{txid: tx.Txid, vout: o.N, value: v, spender: o.Spent}
		}
		scanTx(t, s, tx.Tweak, keys, byKey, found)
	}
	checkSPFound(t, "sp-tweaks", c, found, spent, dropped, true)
	ws.fails("getSilentPaymentTweaks", map[string]any{}, "Missing height")
	ws.fails("getSilentPaymentTweaks", map[string]any{"height": 1 << 30}, "above the tip")
	ws.fails("getSilentPaymentTweaks", map[string]any{"height": "x"}, "height must be a number")
	for q, want := range map[string]string{"/x": "invalid block height", "/1?filterSpent=2": "invalid filterSpent", "/1?dustLimit=-1": "invalid dustLimit"} {
		if err := spchain.GetJSON(base, "/api/v2/sp-tweaks"+q, &page); err == nil || !strings.Contains(err.Error(), "status 400") || !strings.Contains(err.Error(), want) {
			t.Errorf("/api/v2/sp-tweaks%s: %v, want a 400 with %q", q, err, want)
		}
	}
}

// frigateNote is a blockchain.silentpayments.subscribe notification.
type frigateNote struct {
	Subscription struct {
		Address     string `json:"address"`
		StartHeight int    `json:"start_height"`
	} `json:"subscription"`
	Progress float64 `json:"progress"`
	History  []struct {
		Height int    `json:"height"`
		TxHash string `json:"tx_hash"`
	} `json:"history"`
}

// frigateWait reads notifications of addr until one with progress 1 and
// gives the history they carried.
func frigateWait(t *testing.T, e *spElectrum, addr string) []string {
	t.Helper()
	var got []string
	for {
		for len(e.notes) > 0 {
			n := e.notes[0]
			e.notes = e.notes[1:]
			if n.Method != "blockchain.silentpayments.subscribe" {
				continue
			}
			var f frigateNote
			if err := json.Unmarshal(n.Params, &f); err != nil {
				t.Fatalf("silentpayments notification %s: %v", n.Params, err)
			}
			if f.Subscription.Address != addr {
				continue
			}
			for _, h := range f.History {
				got = append(got, fmt.Sprintf("%d:%s", h.Height, h.TxHash))
			}
			if f.Progress == 1 {
				return got
			}
		}
		e.read()
	}
}

// checkFrigate subscribes with the receiver's keys (and its label) from
// start and requires the history to be exactly the payment txs.
func checkFrigate(t *testing.T, c *spchain.Chain, e *spElectrum, start int) string {
	t.Helper()
	r := c.Receiver
	res, bad := e.call("blockchain.silentpayments.subscribe", hex.EncodeToString(r.ScanKey()), hex.EncodeToString(r.SpendPub()), start, r.Labels)
	if bad != nil {
		t.Fatalf("silentpayments.subscribe: %s", bad)
	}
	var addr string
	_ = json.Unmarshal(res, &addr)
	want, _ := bip352.Address("sprt", r.ScanKey(), r.SpendPub())
	if addr != want {
		t.Fatalf("subscribed address %s, want %s", addr, want)
	}
	got := frigateWait(t, e, addr)
	var exp []string
	for _, p := range c.SP.Payments {
		if s := fmt.Sprintf("%d:%s", c.SP.PayHeight, p.Outpoint.Hash); !slices.Contains(exp, s) {
			exp = append(exp, s)
		}
	}
	slices.Sort(got)
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		t.Errorf("silentpayments history %v, want %v", got, exp)
	}
	return addr
}

// checkSPElectrumErrors: bad input gets clear errors, and the caps hold.
func checkSPElectrumErrors(t *testing.T, c *spchain.Chain, e *spElectrum, tip int) {
	t.Helper()
	scan, spend := hex.EncodeToString(c.Receiver.ScanKey()), hex.EncodeToString(c.Receiver.SpendPub())
	cases := []struct {
		method string
		params []any
		want   string
	}{
		{"blockchain.tweaks.subscribe", []any{tip + 1, 1, false}, "above the tip"},
		{"blockchain.tweaks.subscribe", []any{1, 0, false}, "count must be at least 1"},
		{"blockchain.tweaks.subscribe", []any{-1, 1, false}, "non-negative integer"},
		{"blockchain.tweaks.subscribe", []any{"x", 1}, "non-negative integer"},
		{"blockchain.silentpayments.subscribe", []any{"zz", spend}, "scan_private_key must be 64 hex"},
		{"blockchain.silentpayments.subscribe", []any{strings.Repeat("ff", 32), spend}, "scan key"},
		{"blockchain.silentpayments.subscribe", []any{scan, "02" + strings.Repeat("00", 32)}, "spend key is not a compressed point"},
		{"blockchain.silentpayments.subscribe", []any{scan, spend[:64]}, "spend_public_key must be 66 hex"},
		{"blockchain.silentpayments.subscribe", []any{scan, spend, tip + 1}, "above the tip"},
		{"blockchain.silentpayments.subscribe", []any{scan, spend, 0, []int{-1}}, "label -1"},
		{"blockchain.silentpayments.subscribe", []any{scan, spend, 0, make([]int, 101)}, "too many labels"},
		{"blockchain.silentpayments.unsubscribe", []any{scan}, "spend_public_key is required"},
	}
	for _, tc := range cases {
		if _, bad := e.call(tc.method, tc.params...); !strings.Contains(string(bad), tc.want) {
			t.Errorf("%s %v: error %s, want %q", tc.method, tc.params, bad, tc.want)
		}
	}
	// The connection's cap: 4 addresses (one is the receiver's already).
	for i := range 4 {
		k := fmt.Sprintf("%064x", i+7)
		_, bad := e.call("blockchain.silentpayments.subscribe", k, spend, tip)
		if i < 3 && bad != nil {
			t.Fatalf("subscription %d: %s", i, bad)
		}
		if i == 3 && !strings.Contains(string(bad), "too many Silent Payments subscriptions on this connection (limit 4)") {
			t.Errorf("the 5th subscription: %s", bad)
		}
	}
	for i := range 3 {
		if _, bad := e.call("blockchain.silentpayments.unsubscribe", fmt.Sprintf("%064x", i+7), spend); bad != nil {
			t.Errorf("unsubscribe: %s", bad)
		}
	}
}
