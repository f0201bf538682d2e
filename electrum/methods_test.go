package electrum

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// server.version picks the highest common version; only the first call
// negotiates; no common version ends the connection; the version decides
// which methods exist.
func TestVersionNegotiation(t *testing.T) {
	s := newServed(t, Config{ServerVersion: "test-server"})
	for _, tc := range []struct {
		param any
		want  string
	}{
		{"1.4", "1.4"}, {[]string{"1.4", "1.6"}, "1.6"}, {[]string{"1.2", "1.4.2"}, "1.4.2"},
		{[]string{"1.4", "1.5"}, "1.4.2"}, {[]string{"1.6", "2.0"}, "1.6"},
	} {
		c := dial(t, s.addr)
		got := ok[[]string](t, c, "server.version", "test", tc.param)
		if len(got) != 2 || got[0] != "test-server" || got[1] != tc.want {
			t.Errorf("server.version %v: %v, want %s", tc.param, got, tc.want)
		}
		fails(t, c, codeBadRequest, "already", "server.version", "test", tc.param)
	}
	// 1.6 tolerates extra arguments.
	c := dial(t, s.addr)
	if got := ok[[]string](t, c, "server.version", "electrum/4.6", []string{"1.4", "1.6"}, "garbage", 9999.9); got[1] != "1.6" {
		t.Errorf("with extra args: %v", got)
	}
	// No common version: an error, then the server closes.
	c = dial(t, s.addr)
	fails(t, c, codeBadRequest, "unsupported protocol version", "server.version", "old", []string{"1.0", "1.2"})
	if line := c.readLine(); line != "" {
		t.Errorf("after a failed negotiation the server sent %q", line)
	}
	// A client that never negotiates speaks 1.4; it may still negotiate
	// once, within 1.4.
	c = dial(t, s.addr)
	if fee := ok[float64](t, c, "blockchain.relayfee"); fee != 0.00001 {
		t.Errorf("relayfee %v", fee)
	}
	if got := ok[[]string](t, c, "server.version", "late", []string{"1.4", "1.6"}); got[1] != "1.4.2" {
		t.Errorf("late server.version: %v", got)
	}
	c14, c16 := s.negotiated(t, "1.4"), s.negotiated(t, "1.6")
	fails(t, c14, codeMethodNotFound, "unknown method", "mempool.get_info")
	fails(t, c14, codeMethodNotFound, "unknown method", "blockchain.transaction.broadcast_package", []string{"00"})
	fails(t, c16, codeMethodNotFound, "unknown method", "blockchain.relayfee")
	info := ok[map[string]float64](t, c16, "mempool.get_info")
	if info["minrelaytxfee"] != 0.00001 || info["mempoolminfee"] != 0.00001 || info["incrementalrelayfee"] != 0.00001 {
		t.Errorf("mempool.get_info %v", info)
	}
	fails(t, c14, codeInvalidParams, "1.6", "blockchain.estimatefee", 2, "ECONOMICAL")
	fails(t, c16, codeBadRequest, "unknown estimate mode", "blockchain.estimatefee", 2, "FAST")
	for _, c := range []*client{c14, c16} {
		if fee := ok[float64](t, c, "blockchain.estimatefee", 2); fee <= 0 && fee != -1 {
			t.Errorf("estimatefee %v", fee)
		}
	}
	if fee := ok[float64](t, c16, "blockchain.estimatefee", 6, "CONSERVATIVE"); fee <= 0 && fee != -1 {
		t.Errorf("estimatefee with mode %v", fee)
	}
}

// The server.* methods.
func TestServerMethods(t *testing.T) {
	s := newServed(t, Config{Banner: "hello", DonationAddress: "bcrt1qdonate"})
	c := s.negotiated(t, "1.6")
	if b := ok[string](t, c, "server.banner"); b != "hello" {
		t.Errorf("banner %q", b)
	}
	if d := ok[string](t, c, "server.donation_address"); d != "bcrt1qdonate" {
		t.Errorf("donation address %q", d)
	}
	f := ok[map[string]any](t, c, "server.features")
	if f["genesis_hash"] != s.f.BlockHash(0) || f["hash_function"] != "sha256" || f["protocol_min"] != "1.4" || f["protocol_max"] != "1.6" {
		t.Errorf("features %v", f)
	}
	if p := c.call("server.ping"); p.Error != nil || string(p.Result) != "null" {
		t.Errorf("ping %s %v", p.Result, p.Error)
	}
	if p := ok[[]any](t, c, "server.peers.subscribe"); len(p) != 0 {
		t.Errorf("peers %v", p)
	}
	if a := ok[bool](t, c, "server.add_peer", map[string]any{}); a {
		t.Error("add_peer accepted")
	}
}

// Malformed frames: parse errors and invalid requests are answered and
// the connection goes on; notifications from the client get no answer;
// batches are answered as batches.
func TestFrames(t *testing.T) {
	s := newServed(t, Config{})
	c := s.negotiated(t, "1.4")
	for _, tc := range []struct{ line, want string }{
		{`{"id":1,"method":`, `"code":-32700`},
		{`"just a string"`, `"code":-32600`},
		{`{"id":2}`, `"code":-32600`},
		{`{"id":3,"method":"no.such.method"}`, `"code":-32601`},
		{`{"id":4,"method":"server.ping","params":"x"}`, `"code":-32602`},
		{`[]`, `"code":-32600`},
		{`{"jsonrpc":"2.0","method":"server.ping"}` + "\n" + `{"id":5,"method":"server.ping"}`, `"id":5`},
	} {
		c.sendLine(tc.line)
		if got := c.readLine(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s, want %s", tc.line, got, tc.want)
		}
	}
	c.sendLine(`[{"jsonrpc":"2.0","id":7,"method":"server.ping"},{"jsonrpc":"2.0","method":"server.ping"},{"id":8,"method":"nope"},5]`)
	var batch []answer
	if err := json.Unmarshal([]byte(c.readLine()), &batch); err != nil {
		t.Fatal(err)
	}
	if len(batch) != 3 || string(batch[0].ID) != "7" || batch[0].Error != nil || batch[1].Error.Code != codeMethodNotFound || batch[2].Error.Code != codeInvalidRequest {
		t.Errorf("batch %+v", batch)
	}
	if p := c.call("server.ping"); p.Error != nil {
		t.Errorf("after bad frames: %v", p.Error)
	}
}

// A message over the size limit is refused and ends the connection; the
// server keeps serving others.
func TestOversizedFrame(t *testing.T) {
	s := newServed(t, Config{MaxRequestBytes: 1000})
	c := s.negotiated(t, "1.4")
	c.sendLine(`{"id":1,"method":"blockchain.transaction.broadcast","params":["` + strings.Repeat("00", 1000) + `"]}`)
	if got := c.readLine(); !strings.Contains(got, `"code":-101`) || !strings.Contains(got, "too large") {
		t.Errorf("oversized: %s", got)
	}
	if got := c.readLine(); got != "" {
		t.Errorf("connection still open: %s", got)
	}
	if p := s.negotiated(t, "1.4").call("server.ping"); p.Error != nil {
		t.Error(p.Error)
	}
}

// Connection and subscription limits answer the protocol's errors; a
// loopback peer (a local proxy) is exempt from the per-address cap, as on
// every listener.
func TestLimits(t *testing.T) {
	s := newServed(t, Config{MaxConnsPerIP: 2, MaxSubs: 2})
	local := []*client{s.negotiated(t, "1.4"), s.negotiated(t, "1.4"), s.negotiated(t, "1.4")}
	for _, c := range local {
		if p := c.call("server.ping"); p.Error != nil {
			t.Fatalf("a third loopback connection, exempt from the per-address cap: %+v", p.Error)
		}
		_ = c.c.Close()
	}
	deadline := time.Now().Add(ioGuard)
	for s.srv.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.srv.hooks.limitLocal.Store(true) // from here the test's loopback clients are counted
	a, b := s.negotiated(t, "1.4"), s.negotiated(t, "1.4")
	third := dial(t, s.addr)
	if got := third.readLine(); !strings.Contains(got, `"code":-101`) || !strings.Contains(got, "too many connections") {
		t.Errorf("third connection: %q", got)
	}
	for i := range 2 {
		ok[*string](t, a, "blockchain.scripthash.subscribe", ScriptHash([]byte{byte(i)}))
	}
	fails(t, a, codeExcessive, "too many subscriptions", "blockchain.scripthash.subscribe", ScriptHash([]byte{9}))
	// Subscribing again to the same hash is no new subscription.
	ok[*string](t, a, "blockchain.scripthash.subscribe", ScriptHash([]byte{1}))
	_ = b
	// The global cap, and a place freed when a client leaves.
	g := newServed(t, Config{MaxConns: 1})
	first := g.negotiated(t, "1.4")
	if got := dial(t, g.addr).readLine(); !strings.Contains(got, `"code":-101`) || !strings.Contains(got, "too many connections (limit 1)") {
		t.Errorf("over the global cap: %q", got)
	}
	_ = first.c.Close()
	deadline = time.Now().Add(ioGuard)
	for g.srv.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	g.negotiated(t, "1.6")
}

// Headers: single, chunks in both versions' shapes, and proofs to a
// checkpoint that verify against every header hash.
func TestHeaders(t *testing.T) {
	s := newServed(t, Config{})
	c14, c16 := s.negotiated(t, "1.4"), s.negotiated(t, "1.6")
	tip := s.f.TipHeight()
	raw := func(h int) string { return hex.EncodeToString(s.f.Raw[h][:80]) }
	if h := ok[string](t, c14, "blockchain.block.header", 5); h != raw(5) {
		t.Errorf("header 5: %s", h)
	}
	fails(t, c14, codeBadRequest, "out of range", "blockchain.block.header", tip+1)
	fails(t, c14, codeInvalidParams, "non-negative", "blockchain.block.header", -1)
	h14 := ok[headersAnswer](t, c14, "blockchain.block.headers", tip-2, 10)
	if h14.Count != 3 || h14.Max != maxHeaders || h14.Hex == nil || *h14.Hex != raw(tip-2)+raw(tip-1)+raw(tip) || h14.Headers != nil {
		t.Errorf("1.4 headers %+v", h14)
	}
	h16 := ok[headersAnswer](t, c16, "blockchain.block.headers", tip-2, 10)
	if h16.Count != 3 || h16.Hex != nil || len(h16.Headers) != 3 || h16.Headers[2] != raw(tip) {
		t.Errorf("1.6 headers %+v", h16)
	}
	if e := c16.call("blockchain.block.headers", tip+5, 3); e.Error != nil || !strings.Contains(string(e.Result), `"headers":[]`) {
		t.Errorf("past the tip: %s %v", e.Result, e.Error)
	}
	// Proofs to a checkpoint: leaves are the header hashes 0..cp.
	cp := tip - 1
	var leaves [][32]byte
	for h := 0; h <= cp; h++ {
		leaves = append(leaves, hash256(s.f.Raw[h][:80]))
	}
	root := naiveRoot(leaves)
	for _, h := range []int{0, 5, cp} {
		p := ok[headerProof](t, c14, "blockchain.block.header", h, cp)
		if p.Header != raw(h) || p.Root != shown(root) || fold(t, leaves[h], h, p.Branch) != shown(root) {
			t.Errorf("proof of %d to %d: %+v", h, cp, p)
		}
	}
	hp := ok[headersAnswer](t, c16, "blockchain.block.headers", cp-3, 4, cp)
	if hp.Root != shown(root) || fold(t, leaves[cp], cp, hp.Branch) != shown(root) {
		t.Errorf("headers proof %+v", hp)
	}
	fails(t, c14, codeBadRequest, "cp_height", "blockchain.block.header", 10, 5)
	fails(t, c14, codeBadRequest, "above the tip", "blockchain.block.header", 10, tip+1)
	fails(t, c16, codeBadRequest, "cp_height", "blockchain.block.headers", cp-3, 10, cp)
	// headers.subscribe: the tip.
	n := ok[headerNote](t, c14, "blockchain.headers.subscribe")
	if int(n.Height) != tip || n.Hex != raw(tip) {
		t.Errorf("headers.subscribe %+v", n)
	}
}

// naiveRoot is the merkle root the plain way, for checking.
func naiveRoot(level [][32]byte) [32]byte {
	for len(level) > 1 {
		var next [][32]byte
		for i := 0; i < len(level); i += 2 {
			j := min(i+1, len(level)-1)
			next = append(next, hash256(append(append([]byte{}, level[i][:]...), level[j][:]...)))
		}
		level = next
	}
	return level[0]
}

// fold climbs a branch from a leaf at index, returning the root as shown.
func fold(t *testing.T, leaf [32]byte, index int, branch []string) string {
	t.Helper()
	h := leaf
	for _, b := range branch {
		sib, err := bchain.ParseHash(b)
		if err != nil {
			t.Fatal(err)
		}
		s := internal(sib)
		if index%2 == 0 {
			h = hash256(append(append([]byte{}, h[:]...), s[:]...))
		} else {
			h = hash256(append(append([]byte{}, s[:]...), h[:]...))
		}
		index /= 2
	}
	return shown(h)
}

// Transactions: raw and verbose, merkle proofs that fold to the block's
// merkle root, id_from_pos, and a broadcast the node refuses.
func TestTransactions(t *testing.T) {
	s := newServed(t, Config{})
	c := s.negotiated(t, "1.6")
	blk := s.f.Block(112)
	rootInHeader := shown([32]byte(s.f.Raw[112][36:68]))
	for pos, tx := range blk.Transactions {
		txid := tx.TxHash().String()
		var buf bytes.Buffer
		if err := tx.Serialize(&buf); err != nil {
			t.Fatal(err)
		}
		if got := ok[string](t, c, "blockchain.transaction.get", txid); got != hex.EncodeToString(buf.Bytes()) {
			t.Errorf("tx %s: %.40s", txid, got)
		}
		m := ok[merkleAnswer](t, c, "blockchain.transaction.get_merkle", txid, 112)
		h, _ := bchain.ParseHash(txid)
		if m.Pos != pos || m.BlockHeight != 112 || fold(t, internal(h), pos, m.Merkle) != rootInHeader {
			t.Errorf("merkle of %s: %+v", txid, m)
		}
		if id := ok[string](t, c, "blockchain.transaction.id_from_pos", 112, pos); id != txid {
			t.Errorf("id_from_pos %d: %s", pos, id)
		}
		if p := ok[idFromPosAnswer](t, c, "blockchain.transaction.id_from_pos", 112, pos, true); p.TxHash != txid || fold(t, internal(h), pos, p.Merkle) != rootInHeader {
			t.Errorf("id_from_pos with merkle %d: %+v", pos, p)
		}
	}
	txid := blk.Transactions[1].TxHash().String()
	v := ok[map[string]any](t, c, "blockchain.transaction.get", txid, true)
	if v["txid"] != txid {
		t.Errorf("verbose tx %v", v)
	}
	fails(t, c, codeBadRequest, "not in block", "blockchain.transaction.get_merkle", txid, 111)
	fails(t, c, codeBadRequest, "no tx at position", "blockchain.transaction.id_from_pos", 112, len(blk.Transactions))
	fails(t, c, codeBadRequest, "not found", "blockchain.transaction.id_from_pos", s.f.TipHeight()+1, 0)
	fails(t, c, codeBadRequest, "not a valid transaction hash", "blockchain.transaction.get", "xyz")
	fails(t, c, codeBadRequest, "rejected by network rules", "blockchain.transaction.broadcast", "0100")
	fails(t, c, codeBadRequest, "rejected by network rules", "blockchain.transaction.broadcast", "not hex")
	// btcd has no package relay: the daemon's error, after the params are checked.
	fails(t, c, codeInvalidParams, "raw_txs", "blockchain.transaction.broadcast_package", "00")
	fails(t, c, codeDaemonError, "package relay", "blockchain.transaction.broadcast_package", []string{"00", "01"})
}

// The fee histogram bins every pending tx's vsize.
func TestFeeHistogram(t *testing.T) {
	s := newServed(t, Config{})
	c := s.negotiated(t, "1.4")
	hist := ok[[][2]float64](t, c, "mempool.get_fee_histogram")
	var total float64
	for i, b := range hist {
		total += b[1]
		if i > 0 && b[0] > hist[i-1][0] {
			t.Errorf("histogram not by falling rate: %v", hist)
		}
	}
	var want int
	for _, tx := range s.f.Mempool.Txs() {
		if _, ok := tx.Fee(); ok {
			want += tx.VSize
		}
	}
	if want == 0 || total != float64(want) {
		t.Errorf("histogram %v sums %v vbytes, want %d", hist, total, want)
	}
}
