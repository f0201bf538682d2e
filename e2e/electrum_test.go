package e2e

import (
	"bufio"
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/electrum"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The Electrum server against btcd and the demo chain: every ledger
// address restored by script hash (history, balance, UTXOs), a payment
// broadcast through the server and notified to its subscriber, its
// confirmation, a reorg that changes the status again, and the TLS and
// websocket transports.
func TestElectrumE2E(t *testing.T) {
	node, g := startNode(t), demoChain(t)
	submit(t, g, node, 1)
	cfg := writeConfig(t, node, nil)
	certBase := writeCert(t)
	addrs := make(chan [2]string, 3)
	inst := startInProcess(t, cfg, t.TempDir(), func(o *app.Options) {
		o.CertFile = certBase // the TLS listener's; public and internal speak HTTPS too
		o.Electrum.TCP, o.Electrum.TLS, o.Electrum.WS = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
		next := o.OnListen
		o.OnListen = func(name, addr string) {
			if strings.HasPrefix(name, "electrum") {
				addrs <- [2]string{name, addr}
				return
			}
			next(name, addr)
		}
	})
	listen := map[string]string{}
	for range 3 {
		select {
		case a := <-addrs:
			listen[a[0]] = a[1]
		case <-time.After(waitFor):
			t.Fatal("the Electrum listeners did not start")
		}
	}
	c := dialElectrum(t, listen["electrum"])
	defer func() {
		if t.Failed() {
			t.Log(tail(inst.logs.String(), 30))
		}
	}()
	if v := c.ok("server.version", "e2e", []string{"1.4", "1.6"}); !strings.HasPrefix(string(v), `["blockbook-go`) || !strings.HasSuffix(string(v), `"1.6"]`) {
		t.Fatalf("server.version: %s", v)
	}
	h, hash := g.Tip()
	c.waitTip(h, hash.String())

	parser := btc.NewParser(&chaincfg.RegressionNetParams)
	shOf := func(addr string) string {
		script, err := parser.AddrDescFromAddress(addr)
		if err != nil {
			t.Fatal(err)
		}
		return electrum.ScriptHash(script)
	}
	checkElectrumLedger(t, c, g.Ledger(), shOf)
	ops := startOutpointFlow(t, listen["electrum"], g, node)

	// A payment to a fresh address, broadcast through the server, is
	// notified to its subscriber; its confirmation and a reorg that undoes
	// it change the status again.
	x, err := g.Address(chaingen.P2WPKH, 9101)
	if err != nil {
		t.Fatal(err)
	}
	shX := shOf(x)
	if st := c.ok("blockchain.scripthash.subscribe", shX); string(st) != "null" {
		t.Fatalf("status of a fresh address: %s", st)
	}
	c.ok("blockchain.headers.subscribe")
	tx, err := g.CreatePayment([]chaingen.Output{{Address: x, Value: 150_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if id := c.ok("blockchain.transaction.broadcast", hexOf(t, tx)); string(id) != `"`+tx.TxHash().String()+`"` {
		t.Fatalf("broadcast: %s", id)
	}
	txid := tx.TxHash().String()
	c.waitStatus(shX, electrumStatus(txid+":0:"))
	t.Logf("payment notified %s after the broadcast", time.Since(sent).Round(time.Millisecond))
	if _, err := g.AddBlock(append([]*wire.MsgTx{tx}, ops.pair...)...); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, g.Height())
	mined := g.Height()
	c.waitStatus(shX, electrumStatus(fmt.Sprintf("%s:%d:", txid, mined)))
	c.waitHeader(mined)
	ops.confirmed(mined)
	if b := c.ok("blockchain.scripthash.get_balance", shX); string(b) != `{"confirmed":150000,"unconfirmed":0}` {
		t.Errorf("balance after the block: %s", b)
	}
	// Reorg: a longer branch from below the block, without the payment;
	// btcd takes the payment back into its mempool.
	_, tipHash := g.Tip()
	if err := node.InvalidateBlock(context.Background(), tipHash.String()); err != nil {
		t.Fatal(err)
	}
	b := competingBranch(t, g, node, mined-1, 1, "electrum-reorg")
	bh, _ := b.Tip()
	c.waitHeader(bh)
	ops.reorged(mined)
	var after string
	for _, s := range []string{electrumStatus(txid + ":0:"), "null"} {
		if c.hasStatus(shX, s) {
			after = s
		}
	}
	if after == "" {
		after = c.nextStatus(shX)
	}
	if after == electrumStatus(fmt.Sprintf("%s:%d:", txid, mined)) {
		t.Fatalf("the reorg did not change the status")
	}
	hist := c.ok("blockchain.scripthash.get_history", shX)
	if want := statusOfHistory(t, hist); want != after {
		t.Errorf("status after the reorg %s, history %s", after, hist)
	}

	// TLS and websocket carry the same protocol.
	t.Logf("status after the reorg: %s (the payment %s)", after, map[bool]string{true: "dropped", false: "pending again"}[after == "null"])
	checkElectrumTLS(t, listen["electrumtls"], certBase, shX, string(c.ok("blockchain.scripthash.get_balance", shX)))
	checkElectrumWS(t, listen["electrumws"], bh)
}

// checkElectrumLedger restores every ledger address by script hash.
func checkElectrumLedger(t *testing.T, c *electrumClient, l *chaingen.Ledger, shOf func(string) string) {
	t.Helper()
	type item struct {
		TxHash string `json:"tx_hash"`
		Height int64  `json:"height"`
	}
	type utxo struct {
		TxPos  uint32 `json:"tx_pos"`
		Value  int64  `json:"value"`
		TxHash string `json:"tx_hash"`
		Height int64  `json:"height"`
	}
	if len(l.Addresses) < 50 {
		t.Fatalf("ledger has only %d addresses", len(l.Addresses))
	}
	for addr, want := range l.Addresses {
		sh := shOf(addr)
		var hist []item
		c.decode(c.ok("blockchain.scripthash.get_history", sh), &hist)
		wantHist := make([]item, 0, len(want.Txids))
		for _, txid := range want.Txids {
			wantHist = append(wantHist, item{txid, int64(l.Txs[txid].Height)})
		}
		slices.SortFunc(wantHist, func(a, b item) int {
			return cmp.Or(cmp.Compare(a.Height, b.Height), cmp.Compare(l.Txs[a.TxHash].Position, l.Txs[b.TxHash].Position))
		})
		if !slices.Equal(hist, wantHist) {
			t.Errorf("%s: history\n got %v\nwant %v", addr, hist, wantHist)
		}
		if bal := c.ok("blockchain.scripthash.get_balance", sh); string(bal) != fmt.Sprintf(`{"confirmed":%d,"unconfirmed":0}`, want.Balance) {
			t.Errorf("%s: balance %s, want %d", addr, bal, want.Balance)
		}
		var utxos []utxo
		c.decode(c.ok("blockchain.scripthash.listunspent", sh), &utxos)
		wantU := make([]utxo, 0, len(want.Utxos))
		for _, u := range want.Utxos {
			wantU = append(wantU, utxo{u.Vout, u.Value, u.Txid, int64(u.Height)})
		}
		key := func(a, b utxo) int { return cmp.Or(strings.Compare(a.TxHash, b.TxHash), cmp.Compare(a.TxPos, b.TxPos)) }
		slices.SortFunc(utxos, key)
		slices.SortFunc(wantU, key)
		if !slices.Equal(utxos, wantU) {
			t.Errorf("%s: listunspent\n got %v\nwant %v", addr, utxos, wantU)
		}
		st := c.ok("blockchain.scripthash.subscribe", sh)
		if want := statusOfHistory(t, c.ok("blockchain.scripthash.get_history", sh)); string(st) != want {
			t.Errorf("%s: status %s, want %s", addr, st, want)
		}
		c.ok("blockchain.scripthash.unsubscribe", sh)
	}
}

// electrumStatus is the JSON of the status of a "txid:height:" string.
func electrumStatus(s string) string {
	sum := sha256.Sum256([]byte(s))
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func statusOfHistory(t *testing.T, hist json.RawMessage) string {
	t.Helper()
	var items []struct {
		TxHash string `json:"tx_hash"`
		Height int64  `json:"height"`
	}
	if err := json.Unmarshal(hist, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) == 0 {
		return "null"
	}
	var sb strings.Builder
	for _, it := range items {
		sb.WriteString(it.TxHash + ":" + strconv.FormatInt(it.Height, 10) + ":")
	}
	return electrumStatus(sb.String())
}

func checkElectrumTLS(t *testing.T, addr, certBase, sh, balance string) {
	t.Helper()
	pemData, err := os.ReadFile(certBase + ".crt")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemData)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS: %v", err)
	}
	c := &electrumClient{t: t, c: conn, r: bufio.NewReader(conn)}
	t.Cleanup(func() { _ = conn.Close() })
	c.ok("server.version", "tls", "1.4")
	if b := c.ok("blockchain.scripthash.get_balance", sh); string(b) != balance {
		t.Errorf("TLS get_balance: %s, over TCP %s", b, balance)
	}
}

func checkElectrumWS(t *testing.T, addr string, height int32) {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/", nil)
	if err != nil {
		t.Fatalf("websocket: %v", err)
	}
	defer ws.Close()
	for i, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"server.version","params":["ws","1.6"]}`,
		`{"jsonrpc":"2.0","id":2,"method":"blockchain.headers.subscribe","params":[]}`,
	} {
		if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
		_ = ws.SetReadDeadline(time.Now().Add(waitFor))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && !strings.Contains(string(msg), fmt.Sprintf(`"height":%d`, height)) {
			t.Errorf("websocket headers.subscribe: %s", msg)
		}
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 as
// <base>.crt and <base>.key (the -certfile layout).
func writeCert(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "electrum")
	if err := os.WriteFile(base+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return base
}

// electrumClient is a newline-delimited JSON-RPC client that keeps the
// notifications it reads.
type electrumClient struct {
	t     *testing.T
	c     net.Conn
	r     *bufio.Reader
	id    int
	notes []electrumNote
}

type electrumNote struct {
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

func dialElectrum(t *testing.T, addr string) *electrumClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &electrumClient{t: t, c: conn, r: bufio.NewReaderSize(conn, 1<<20)}
}

// read reads one message (a failure guard bounds the wait).
func (c *electrumClient) read() map[string]json.RawMessage {
	c.t.Helper()
	_ = c.c.SetReadDeadline(time.Now().Add(waitFor))
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("electrum read: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("electrum message %q: %v", line, err)
	}
	if _, isNote := m["method"]; isNote {
		var n electrumNote
		if err := json.Unmarshal(line, &n); err != nil {
			c.t.Fatal(err)
		}
		c.notes = append(c.notes, n)
	}
	return m
}

// ok calls a method that must succeed and returns its result.
func (c *electrumClient) ok(method string, params ...any) json.RawMessage {
	c.t.Helper()
	res, e := c.try(method, params...)
	if e != nil {
		c.t.Fatalf("%s %v: %s", method, params, e)
	}
	return res
}

// try calls a method and returns its result or its error.
func (c *electrumClient) try(method string, params ...any) (json.RawMessage, json.RawMessage) {
	c.t.Helper()
	c.id++
	if params == nil {
		params = []any{}
	}
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	_ = c.c.SetWriteDeadline(time.Now().Add(waitFor))
	if _, err := c.c.Write(append(req, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for {
		m := c.read()
		if string(m["id"]) != strconv.Itoa(c.id) {
			continue
		}
		if e, bad := m["error"]; bad {
			return nil, e
		}
		return m["result"], nil
	}
}

func (c *electrumClient) decode(raw json.RawMessage, v any) {
	c.t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		c.t.Fatalf("%s: %v", raw, err)
	}
}

// takeNote removes and returns the first kept notification of method
// that match accepts.
func (c *electrumClient) takeNote(method string, match func(electrumNote) bool) bool {
	for i, n := range c.notes {
		if n.Method == method && match(n) {
			c.notes = slices.Delete(c.notes, i, i+1)
			return true
		}
	}
	return false
}

// waitNote waits for a notification of method that match accepts.
func (c *electrumClient) waitNote(method string, match func(electrumNote) bool) {
	c.t.Helper()
	for !c.takeNote(method, match) {
		c.read()
	}
}

func (c *electrumClient) waitStatus(sh, status string) {
	c.t.Helper()
	c.waitNote("blockchain.scripthash.subscribe", func(n electrumNote) bool {
		return len(n.Params) == 2 && string(n.Params[0]) == `"`+sh+`"` && string(n.Params[1]) == status
	})
}

func (c *electrumClient) hasStatus(sh, status string) bool {
	return c.takeNote("blockchain.scripthash.subscribe", func(n electrumNote) bool {
		return len(n.Params) == 2 && string(n.Params[0]) == `"`+sh+`"` && string(n.Params[1]) == status
	})
}

// nextStatus waits for the next status notification of sh.
func (c *electrumClient) nextStatus(sh string) string {
	c.t.Helper()
	var got string
	c.waitNote("blockchain.scripthash.subscribe", func(n electrumNote) bool {
		if len(n.Params) == 2 && string(n.Params[0]) == `"`+sh+`"` {
			got = string(n.Params[1])
			return true
		}
		return false
	})
	return got
}

func (c *electrumClient) waitHeader(height int32) {
	c.t.Helper()
	c.waitNote("blockchain.headers.subscribe", func(n electrumNote) bool {
		return len(n.Params) == 1 && strings.Contains(string(n.Params[0]), fmt.Sprintf(`"height":%d,`, height))
	})
}

// waitTip waits until headers.subscribe shows the block.
func (c *electrumClient) waitTip(height int32, hash string) {
	c.t.Helper()
	var note struct {
		Height int32  `json:"height"`
		Hex    string `json:"hex"`
	}
	// The index may have no block yet: the server says to retry.
	deadline := time.Now().Add(waitFor)
	for {
		res, e := c.try("blockchain.headers.subscribe")
		if e == nil {
			c.decode(res, &note)
			break
		}
		if !strings.Contains(string(e), "-102") || time.Now().After(deadline) {
			c.t.Fatalf("headers.subscribe: %s", e)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for note.Height != height {
		c.read()
		for len(c.notes) > 0 {
			n := c.notes[0]
			c.notes = c.notes[1:]
			if n.Method == "blockchain.headers.subscribe" && len(n.Params) == 1 {
				c.decode(n.Params[0], &note)
			}
		}
	}
	raw, err := hex.DecodeString(note.Hex)
	if err != nil {
		c.t.Fatal(err)
	}
	first := sha256.Sum256(raw)
	sum := sha256.Sum256(first[:])
	slices.Reverse(sum[:])
	if hex.EncodeToString(sum[:]) != hash {
		c.t.Fatalf("tip header hashes to %x, want %s", sum, hash)
	}
}
