package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// mempool.space's websocket (/api/v1/ws) on the Esplora listener of a real
// blockbook over btcd: init, want, track-address(es) seeing a payment enter
// the mempool, get replaced (RBF) and confirm, track-tx, track-rbf, bad
// frames; and the RBF REST routes over the same real replacement.

// mpWSClient reads a websocket's messages into a channel.
type mpWSClient struct {
	t    *testing.T
	c    *websocket.Conn
	msgs chan map[string]json.RawMessage
	done chan error                   // the read error that ended the connection
	kept []map[string]json.RawMessage // read, not yet taken by await
}

func dialMpWS(t *testing.T, esplora string) *mpWSClient {
	t.Helper()
	url := "ws" + strings.TrimPrefix(esplora, "http") + "/api/v1/ws"
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	w := &mpWSClient{t: t, c: c, msgs: make(chan map[string]json.RawMessage, 256), done: make(chan error, 1)}
	go func() {
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				w.done <- err
				close(w.msgs)
				return
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(data, &m); err != nil {
				w.done <- fmt.Errorf("not a JSON object: %s", data)
				close(w.msgs)
				return
			}
			w.msgs <- m
		}
	}()
	return w
}

func (w *mpWSClient) send(v any) {
	w.t.Helper()
	var err error
	if s, ok := v.(string); ok {
		err = w.c.WriteMessage(websocket.TextMessage, []byte(s))
	} else {
		err = w.c.WriteJSON(v)
	}
	if err != nil {
		w.t.Fatalf("websocket write: %v", err)
	}
}

// await returns the first message, kept or new, that has every key of
// keys and passes check (nil: any); the others are kept for later calls.
func (w *mpWSClient) await(what string, keys []string, check func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
	w.t.Helper()
	match := func(m map[string]json.RawMessage) bool {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		return check == nil || check(m)
	}
	for i, m := range w.kept {
		if match(m) {
			w.kept = append(w.kept[:i], w.kept[i+1:]...)
			return m
		}
	}
	timeout := time.After(waitFor)
	for {
		select {
		case m, ok := <-w.msgs:
			if !ok {
				w.t.Fatalf("%s: connection closed: %v", what, <-w.done)
			}
			if match(m) {
				return m
			}
			w.kept = append(w.kept, m)
		case <-timeout:
			w.t.Fatalf("%s: no message with %v", what, keys)
		}
	}
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	return v
}

// mpTx is the part of an Esplora tx the checks read.
type mpTx struct {
	Txid   string `json:"txid"`
	Status struct {
		Confirmed   bool   `json:"confirmed"`
		BlockHeight int32  `json:"block_height"`
		BlockHash   string `json:"block_hash"`
	} `json:"status"`
}

type mpAddressTxs struct {
	Mempool, Confirmed, Removed []mpTx
}

func TestE2EMempoolSpaceWebsocket(t *testing.T) {
	st, esplora := startEsploraStack(t)
	checkMiningRoutes(t, st, esplora)
	g := st.g
	ws := dialMpWS(t, esplora)

	// init: every part at once; the blocks are the last 8, oldest first.
	ws.send(map[string]string{"action": "init"})
	init := ws.await("init", []string{"blocks", "mempoolInfo", "mempool-blocks", "fees", "da", "vBytesPerSecond", "transactions", "backend"}, nil)
	type blockID struct {
		ID     string `json:"id"`
		Height int32  `json:"height"`
		Extras *struct {
			Reward uint64 `json:"reward"`
		} `json:"extras"`
	}
	blocks := decode[[]blockID](t, init["blocks"])
	tipH, tipHash := g.Tip()
	if len(blocks) != 8 || blocks[7].ID != tipHash.String() || blocks[7].Height != tipH || blocks[0].Height != tipH-7 || blocks[7].Extras == nil {
		t.Fatalf("init blocks: %s", init["blocks"])
	}
	if mb := decode[[]mempoolBlock](t, init["mempool-blocks"]); len(mb) != 0 {
		t.Fatalf("init mempool-blocks of an empty mempool: %s", init["mempool-blocks"])
	}

	// want: the newly wanted parts answer at once.
	ws.send(map[string]any{"action": "want", "data": []string{"blocks", "mempool-blocks", "stats"}})
	ws.await("want", []string{"blocks", "mempool-blocks", "mempoolInfo", "vBytesPerSecond", "fees", "da"}, nil)

	// Bad frames get an error each and the connection keeps serving.
	for _, bad := range []struct {
		frame any
		key   string
		text  string
	}{
		{"not json", "error", "invalid message"},
		{`[1,2]`, "error", "invalid message"},
		{map[string]string{"action": "dance"}, "error", "unknown action"},
		{map[string]any{"action": "want", "data": "blocks"}, "error", "data must be an array"},
		{map[string]any{"hello": 1}, "error", "unknown message"},
		{map[string]any{"track-addresses": "x"}, "track-addresses-error", "array of addresses"},
		{map[string]any{"track-address": "bc1notanaddress"}, "track-address-error", "not an address"},
		{map[string]any{"track-tx": "xyz"}, "track-tx-error", "not a txid"},
		{map[string]any{"track-mempool-block": 8}, "track-mempool-block-error", "not a projected block index"},
		{map[string]any{"track-mempool-block": "0"}, "track-mempool-block-error", "not a projected block index"},
	} {
		ws.send(bad.frame)
		m := ws.await(fmt.Sprintf("bad frame %v", bad.frame), []string{bad.key}, nil)
		if !strings.Contains(string(m[bad.key]), bad.text) {
			t.Errorf("bad frame %v: %s, want %q", bad.frame, m[bad.key], bad.text)
		}
	}
	ws.send(map[string]string{"action": "ping"})
	ws.await("pong after bad frames", []string{"pong"}, nil)

	// Past the caps: too many addresses is refused; a frame past 50,000
	// bytes closes that connection only.
	many := make([]string, 101)
	for i := range many {
		many[i] = mempoolAddr(t, g, chaingen.P2WPKH, 500+uint64(i))
	}
	ws.send(map[string]any{"track-addresses": many})
	ws.await("too many addresses", []string{"track-addresses-error"}, func(m map[string]json.RawMessage) bool {
		return strings.Contains(string(m["track-addresses-error"]), "maximum of 100 addresses")
	})
	big := dialMpWS(t, esplora)
	// The server may close before the whole frame is written: a failed
	// write is then expected.
	_ = big.c.WriteMessage(websocket.TextMessage, []byte(`{"track-addresses":["`+strings.Repeat("a", 60_000)+`"]}`))
	select {
	case _, ok := <-big.msgs:
		if ok {
			t.Fatalf("an oversized frame was answered")
		}
		var ce *websocket.CloseError
		if err := <-big.done; !asCloseError(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
			t.Fatalf("oversized frame: %v, want close 1009", err)
		}
	case <-time.After(waitFor):
		t.Fatal("an oversized frame did not close the connection")
	}

	// track-address and track-addresses see a payment enter the mempool.
	a, b := mempoolAddr(t, g, chaingen.P2WPKH, 70), mempoolAddr(t, g, chaingen.P2TR, 71)
	ws.send(map[string]any{"track-address": a})
	ws.send(map[string]any{"track-addresses": []string{a, b}})
	ws.send(map[string]any{"track-rbf": "all"})
	ws.await("track-rbf", []string{"rbfLatest"}, nil)
	pay, err := g.CreatePayment([]chaingen.Output{{Address: a, Value: 150_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	id := sendTx(t, st, pay)
	m := ws.await("address-transactions", []string{"address-transactions"}, nil)
	if txs := decode[[]mpTx](t, m["address-transactions"]); len(txs) != 1 || txs[0].Txid != id || txs[0].Status.Confirmed {
		t.Fatalf("address-transactions: %s", m["address-transactions"])
	}
	tookTx := time.Since(sent)
	if _, ok := m["multi-address-transactions"]; !ok {
		m = ws.await("multi-address-transactions", []string{"multi-address-transactions"}, nil)
	}
	multi := decode[map[string]mpAddressTxs](t, m["multi-address-transactions"])
	if e, ok := multi[a]; !ok || len(multi) != 1 || len(e.Mempool) != 1 || e.Mempool[0].Txid != id || len(e.Confirmed) != 0 {
		t.Fatalf("multi-address-transactions: %s", m["multi-address-transactions"])
	}
	ws.await("mempool-blocks after the payment", []string{"mempool-blocks", "mempoolInfo", "fees"}, func(m map[string]json.RawMessage) bool {
		mb := decode[[]mempoolBlock](t, m["mempool-blocks"])
		return len(mb) == 1 && *mb[0].NTx == 1
	})
	tookBlocks := time.Since(sent)
	t.Logf("push after a mempool tx: address-transactions in %v, mempool-blocks in %v", tookTx.Round(time.Millisecond), tookBlocks.Round(time.Millisecond))
	if tookBlocks > 3*time.Second {
		t.Errorf("mempool-blocks came %v after the tx (the projection rebuilds at most once a second)", tookBlocks)
	}

	// track-tx places the tx in projected block 0.
	ws.send(map[string]any{"track-tx": id})
	m = ws.await("txPosition", []string{"txPosition"}, nil)
	pos := decode[struct {
		Txid     string `json:"txid"`
		Position struct {
			Block int     `json:"block"`
			VSize float64 `json:"vsize"`
		} `json:"position"`
	}](t, m["txPosition"])
	if pos.Txid != id || pos.Position.Block != 0 || pos.Position.VSize <= 0 {
		t.Fatalf("txPosition: %s", m["txPosition"])
	}

	// A real replacement: the client tracking the tx hears of it, and the
	// RBF routes describe it.
	repl := replaceAt(t, g, pay, 12)
	idR := sendTx(t, st, repl)
	m = ws.await("rbfTransaction", []string{"rbfTransaction"}, nil)
	if got := decode[map[string]string](t, m["rbfTransaction"]); got["txid"] != idR {
		t.Fatalf("rbfTransaction: %s, want %s", m["rbfTransaction"], idR)
	}
	if !strings.Contains(string(m["rbfLatest"]), idR) { // the same push carries both
		t.Fatalf("rbfLatest with the rbfTransaction: %s", m["rbfLatest"])
	}
	checkRbfRoutes(t, esplora, id, idR)
	gs := newGoldenSet(t, filepath.Join(goldenDir, "mempoolspace-txs"), "TestE2EMempoolSpaceWebsocket")
	gs.check("tx-rbf-replaced", normalizeRbf(fetchGolden(t, esplora+"/api/v1/tx/"+id+"/rbf", 200)))
	gs.check("tx-rbf-none", fetchGolden(t, esplora+"/api/v1/tx/"+strings.Repeat("ab", 32)+"/rbf", 200))
	gs.check("replacements", normalizeRbf(fetchGolden(t, esplora+"/api/v1/replacements", 200)))

	// Mined: the block, the confirmed tx for both trackings, txConfirmed.
	ws.send(map[string]any{"track-tx": idR})
	if _, err := g.AddBlock(repl); err != nil {
		t.Fatal(err)
	}
	mined := time.Now()
	submit(t, g, st.node, g.Height())
	h, hash := g.Tip()
	m = ws.await("block", []string{"block", "txConfirmed", "block-transactions", "multi-address-transactions"}, nil)
	t.Logf("push after a block: %v from its submission to the node", time.Since(mined).Round(time.Millisecond))
	if time.Since(mined) > 3*time.Second {
		t.Errorf("the block's message came %v after the block (the sync worker polls every second at most)", time.Since(mined))
	}
	if blk := decode[blockID](t, m["block"]); blk.ID != hash.String() || blk.Height != h {
		t.Fatalf("block: %s", m["block"])
	}
	if got := decode[string](t, m["txConfirmed"]); got != idR {
		t.Fatalf("txConfirmed %s, want %s", got, idR)
	}
	if txs := decode[[]mpTx](t, m["block-transactions"]); len(txs) != 1 || txs[0].Txid != idR || !txs[0].Status.Confirmed || txs[0].Status.BlockHash != hash.String() {
		t.Fatalf("block-transactions: %s", m["block-transactions"])
	}
	multi = decode[map[string]mpAddressTxs](t, m["multi-address-transactions"])
	if e := multi[a]; len(e.Confirmed) != 1 || e.Confirmed[0].Txid != idR || len(e.Mempool) != 0 {
		t.Fatalf("multi-address-transactions on the block: %s", m["multi-address-transactions"])
	}
	var hist struct {
		Replacements struct {
			Mined bool `json:"mined"`
		} `json:"replacements"`
	}
	esploraJSON(t, esplora+"/api/v1/tx/"+id+"/rbf", &hist)
	if !hist.Replacements.Mined {
		t.Errorf("the replacement tree is not marked mined once its tx confirmed")
	}
	checkMempoolSpaceTxRoutes(t, esplora, g)
	for _, kind := range []chaingen.ScriptKind{chaingen.P2PKH, chaingen.P2SHP2WPKH, chaingen.P2WPKH, chaingen.P2TR} {
		gs.check("validate-address-"+kind.String(), fetchGolden(t, esplora+"/api/v1/validate-address/"+mempoolAddr(t, g, kind, 80), 200))
	}
	gs.check("validate-address-invalid", fetchGolden(t, esplora+"/api/v1/validate-address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", 200))
	gs.check("error-validate-address", fetchGolden(t, esplora+"/api/v1/validate-address/a-b", 400))
	gs.check("error-tx-rbf", fetchGolden(t, esplora+"/api/v1/tx/xyz/rbf", 400))
	gs.finish()
	checkWSSubscriptions(t, st, esplora)
	runMempoolWSScript(t, st, esplora)
	checkFullMempool(t, st, esplora)
}

const mempoolWSScript = "../tools/js/mempool-ws.mjs"

func asCloseError(err error, ce **websocket.CloseError) bool { return errors.As(err, ce) }

// checkRbfRoutes reads tx/:txid/rbf and replacements after old was
// replaced by repl.
func checkRbfRoutes(t *testing.T, esplora, old, repl string) {
	t.Helper()
	type tree struct {
		Tx struct {
			Txid    string `json:"txid"`
			Rbf     bool   `json:"rbf"`
			FullRbf *bool  `json:"fullRbf"`
		} `json:"tx"`
		FullRbf  bool   `json:"fullRbf"`
		Interval *int64 `json:"interval"`
		Replaces []tree `json:"replaces"`
	}
	var h struct {
		Replacements *tree    `json:"replacements"`
		Replaces     []string `json:"replaces"`
	}
	esploraJSON(t, esplora+"/api/v1/tx/"+repl+"/rbf", &h)
	r := h.Replacements
	if r == nil || r.Tx.Txid != repl || !r.Tx.Rbf || r.Tx.FullRbf == nil || *r.Tx.FullRbf || r.FullRbf ||
		len(r.Replaces) != 1 || r.Replaces[0].Tx.Txid != old || r.Replaces[0].Interval == nil || len(h.Replaces) != 1 || h.Replaces[0] != old {
		t.Fatalf("tx/%s/rbf: %+v", repl, h)
	}
	esploraJSON(t, esplora+"/api/v1/tx/"+old+"/rbf", &h)
	if h.Replacements == nil || h.Replacements.Tx.Txid != repl || h.Replaces != nil {
		t.Fatalf("tx/%s/rbf (the replaced tx): %+v", old, h)
	}
	var list []tree
	esploraJSON(t, esplora+"/api/v1/replacements", &list)
	if len(list) != 1 || list[0].Tx.Txid != repl {
		t.Fatalf("replacements: %+v", list)
	}
	esploraJSON(t, esplora+"/api/v1/fullrbf/replacements", &list)
	if len(list) != 0 {
		t.Fatalf("fullrbf/replacements of a signalled replacement: %+v", list)
	}
	esploraJSON(t, esplora+"/api/v1/tx/"+strings.Repeat("ab", 32)+"/rbf", &h)
	if h.Replacements != nil || h.Replaces != nil {
		t.Fatalf("tx/:txid/rbf of an unknown tx: %+v", h)
	}
}

// checkMempoolSpaceTxRoutes checks validate-address, txs/test and
// txs/package, and their bad input.
func checkMempoolSpaceTxRoutes(t *testing.T, esplora string, g *chaingen.Generator) {
	t.Helper()
	for _, kind := range []chaingen.ScriptKind{chaingen.P2PKH, chaingen.P2SHP2WPKH, chaingen.P2WPKH, chaingen.P2TR} {
		addr := mempoolAddr(t, g, kind, 80)
		var v struct {
			IsValid        bool   `json:"isvalid"`
			Address        string `json:"address"`
			ScriptPubKey   string `json:"scriptPubKey"`
			IsScript       *bool  `json:"isscript"`
			IsWitness      *bool  `json:"iswitness"`
			WitnessVersion *int   `json:"witness_version"`
		}
		esploraJSON(t, esplora+"/api/v1/validate-address/"+addr, &v)
		script, err := g.PkScript(kind, 9080)
		if err != nil {
			t.Fatal(err)
		}
		wantScript := kind == chaingen.P2SHP2WPKH || kind == chaingen.P2TR
		wantWitness := kind == chaingen.P2WPKH || kind == chaingen.P2TR
		if !v.IsValid || v.Address != addr || v.ScriptPubKey != fmt.Sprintf("%x", script) || v.IsScript == nil || *v.IsScript != wantScript ||
			v.IsWitness == nil || *v.IsWitness != wantWitness || (v.WitnessVersion != nil) != wantWitness {
			t.Errorf("validate-address %s (%v): %+v", addr, kind, v)
		}
	}
	for path, want := range map[string]struct {
		code int
		body string
	}{
		"/api/v1/validate-address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4": {200, `"isvalid":false`},
		"/api/v1/validate-address/" + strings.Repeat("a", 121):                {400, `{"error":"Invalid address"}`},
		"/api/v1/validate-address/a-b":                                        {400, `{"error":"Invalid address"}`},
		"/api/v1/tx/xyz/rbf":                                                  {400, `{"error":"Invalid transaction ID"}`},
		"/api/v1/replacements/x":                                              {404, `endpoint does not exist`},
	} {
		if code, body := esploraGet(t, esplora+path); code != want.code || !strings.Contains(string(body), want.body) {
			t.Errorf("GET %s: %d %s, want %d %q", path, code, body, want.code, want.body)
		}
	}
	for _, c := range []struct {
		path, body string
		code       int
		text       string
	}{
		{"/api/v1/txs/test", `["0100"]`, 400, "testmempoolaccept RPC error: not available"},
		{"/api/txs/test", `["0100"]`, 400, "testmempoolaccept RPC error: not available"},
		{"/api/v1/txs/package", `["0100","0200"]`, 400, "submitpackage RPC error: not available"},
		{"/api/txs/package", `["0100"]`, 400, "submitpackage RPC error: not available"},
		{"/api/v1/txs/test", `"0100"`, 400, "should be an array of hexadecimal strings"},
		{"/api/v1/txs/test", `["xyz"]`, 400, "Invalid hex string"},
		{"/api/v1/txs/package", `[` + strings.Repeat(`"00",`, 25) + `"00"]`, 400, "Exceeded maximum of 25 transactions"},
	} {
		resp, err := httpClient.Post(esplora+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != c.code || !strings.Contains(string(raw), c.text) {
			t.Errorf("POST %s %s: %d %s, want %d %q", c.path, c.body, resp.StatusCode, raw, c.code, c.text)
		}
		if strings.HasPrefix(c.path, "/api/v1/") && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("POST %s: content type %q, want JSON", c.path, resp.Header.Get("Content-Type"))
		}
	}
}

// runMempoolWSScript drives the websocket with mempool.js's own client
// (tools/js/mempool-ws.mjs): a payment pushed while pending, then mined.
func runMempoolWSScript(t *testing.T, st *demoStack, esplora string) {
	t.Helper()
	node := esploraPrereqs(t)
	g := st.g
	facts, err := json.Marshal(map[string]any{"address": mempoolAddr(t, g, chaingen.P2WPKH, 90), "tip": g.Height()})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mempool-ws-facts.json")
	if err := os.WriteFile(path, facts, 0o644); err != nil {
		t.Fatal(err)
	}
	var pay *wire.MsgTx
	runClientScript(t, node, mempoolWSScript, esplora, path, st.inst.logs, func(line string) (string, bool) {
		switch line {
		case "ready": // the client tracks the address: pay it
			if pay, err = g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 90), Value: 120_000}}, 4); err != nil {
				return "error " + err.Error(), true
			}
			return sendTx(t, st, pay), true
		case "pending": // the client saw it pending: mine it
			if _, err := g.AddBlock(pay); err != nil {
				return "error " + err.Error(), true
			}
			submit(t, g, st.node, g.Height())
			return "mined", true
		}
		return "", false
	})
}

// rbfTimes are the fields of an RBF tree that depend on when the test ran.
var rbfTimes = regexp.MustCompile(`"(time|interval)": [0-9]+`)

// normalizeRbf replaces the first-seen times and intervals of an RBF
// answer (the clock's) with 0.
func normalizeRbf(b []byte) []byte {
	return rbfTimes.ReplaceAll(b, []byte(`"$1": 0`))
}
