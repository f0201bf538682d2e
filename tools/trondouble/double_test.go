package trondouble

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"sort"
	"testing"
)

// keyPaths lists every object key path of a JSON value ("a.b[].c"); arrays
// contribute their elements' paths.
func keyPaths(v any, prefix string, out map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			p := prefix + "." + k
			out[p] = true
			keyPaths(e, p, out)
		}
	case []any:
		for _, e := range t {
			keyPaths(e, prefix+"[]", out)
		}
	}
}

func recorded(t *testing.T, name string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../bchain/coins/tron/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	keyPaths(v, "", out)
	return out
}

func post(t *testing.T, url string, body any) any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// missing lists the recorded answer's key paths the double's lacks.
func missing(want map[string]bool, got any) []string {
	have := map[string]bool{}
	keyPaths(got, "", have)
	var out []string
	for k := range want {
		if !have[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestShapesOfRecordedAnswers: every field of java-tron's recorded
// answers (a block, a contract call, its outcome) is in the double's.
func TestShapesOfRecordedAnswers(t *testing.T) {
	c := New(Options{Seed: 1, SolidDepth: 3})
	c.Mine(40, 6)
	s := Serve(c)
	defer s.Close()
	var call, info any
	for n := 1; n < 40 && (call == nil || info == nil); n++ {
		b := post(t, s.URL+"/wallet/getblockbynum", map[string]any{"num": n}).(map[string]any)
		if m := missing(recorded(t, "nile_getblockbynum_66987565.json"), map[string]any{"blockID": b["blockID"], "block_header": b["block_header"]}); len(m) > 0 {
			t.Fatalf("block lacks %v", m)
		}
		infos := post(t, s.URL+"/wallet/gettransactioninfobyblocknum", map[string]any{"num": n}).([]any)
		txs, _ := b["transactions"].([]any)
		if len(txs) != len(infos) {
			t.Fatalf("block %d: %d txs, %d infos", n, len(txs), len(infos))
		}
		for i, tx := range txs {
			inf := infos[i].(map[string]any)
			if tx.(map[string]any)["raw_data"].(map[string]any)["contract"].([]any)[0].(map[string]any)["type"] == KindTrigger && inf["log"] != nil && inf["internal_transactions"] != nil {
				call, info = tx, inf
			}
		}
	}
	if call == nil {
		t.Fatal("no successful contract call in 40 blocks")
	}
	if m := missing(recorded(t, "nile_gettransactionbyid_01b4cde4.json"), call); len(m) > 0 {
		t.Errorf("tx lacks %v", m)
	}
	if m := missing(recorded(t, "nile_gettransactioninfobyid_01b4cde4.json"), info); len(m) > 0 {
		t.Errorf("tx info lacks %v", m)
	}
}

// The solidity API serves solidified blocks only, and reorgs stop at the
// solidified height.
func TestSolidityAndReorgBounds(t *testing.T) {
	c := New(Options{Seed: 2, SolidDepth: 5})
	c.Mine(20, 3)
	s := Serve(c)
	defer s.Close()
	if c.Solidified() != 15 {
		t.Fatalf("solidified %d", c.Solidified())
	}
	if b := post(t, s.URL+"/walletsolidity/getblockbynum", map[string]any{"num": 16}).(map[string]any); len(b) != 0 {
		t.Errorf("solidity node served unsolidified block 16: %v", b["blockID"])
	}
	if b := post(t, s.URL+"/walletsolidity/getblock", map[string]any{"detail": false}).(map[string]any); b["block_header"].(map[string]any)["raw_data"].(map[string]any)["number"] != float64(15) {
		t.Errorf("latest solidified = %v", b)
	}
	if err := c.Reorg(6, 2); err == nil {
		t.Error("a reorg reached the solidified block")
	}
	old := c.Tip()
	if err := c.Reorg(3, 2); err != nil {
		t.Fatal(err)
	}
	if c.Tip().Number != old.Number+1 || c.Tip().ID == old.ID {
		t.Errorf("reorg tip %d", c.Tip().Number)
	}
	r := post(t, s.URL+"/jsonrpc", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "eth_getBlockByHash", "params": []any{"0x" + hexID(old.ID), false}}).(map[string]any)
	if r["result"] == nil {
		t.Error("a reorged block is unknown by hash")
	}
	if r := post(t, s.URL+"/jsonrpc", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "eth_nope"}).(map[string]any); r["error"] == nil {
		t.Error("unknown method answered")
	}
}

func hexID(id [32]byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 64)
	for i, b := range id {
		out[2*i], out[2*i+1] = digits[b>>4], digits[b&15]
	}
	return string(out)
}
