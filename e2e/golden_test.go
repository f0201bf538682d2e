package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// update rewrites the golden files; review the diff before committing.
var update = flag.Bool("update", false, "rewrite e2e/testdata/*.golden.json from the current answers")

const goldenDir = "testdata"

// notableTxs finds, in the generator's blocks, the txs the goldens show: the
// first spend of each script class, data carriers, the largest txs.
func notableTxs(t *testing.T, g *chaingen.Generator) map[string]string {
	t.Helper()
	out := map[string]string{}
	prev := map[wire.OutPoint][]byte{}
	maxIn, maxOut := 0, 0
	for h, b := range g.Blocks() {
		for i, tx := range b.Transactions {
			txid := tx.TxHash().String()
			if h == 1 && i == 0 {
				out["coinbase"] = txid
			}
			for _, in := range tx.TxIn {
				script, ok := prev[in.PreviousOutPoint]
				if !ok {
					continue
				}
				name := "spend-" + strings.ToLower(txscript.GetScriptClass(script).String())
				if txscript.GetScriptClass(script) == txscript.PubKeyTy && len(script) == 67 {
					name += "-uncompressed"
				}
				if _, seen := out[name]; !seen {
					out[name] = txid
				}
			}
			for n, o := range tx.TxOut {
				prev[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o.PkScript
				if bytes.Contains(o.PkScript, chaingen.OPReturnText) {
					out["opreturn-text"] = txid
				}
				if bytes.Contains(o.PkScript, chaingen.OPReturnBinary) {
					out["opreturn-binary"] = txid
				}
			}
			if len(tx.TxIn) > maxIn {
				maxIn, out["many-inputs"] = len(tx.TxIn), txid
			}
			if len(tx.TxOut) > maxOut {
				maxOut, out["many-outputs"] = len(tx.TxOut), txid
			}
		}
	}
	for _, want := range []string{"spend-pubkeyhash", "spend-witness_v0_keyhash", "spend-scripthash", "spend-witness_v0_scripthash",
		"spend-witness_v1_taproot", "spend-pubkey", "spend-pubkey-uncompressed", "spend-multisig", "spend-nonstandard",
		"opreturn-text", "opreturn-binary"} {
		if out[want] == "" {
			t.Fatalf("demo chain has no %s tx (found %v)", want, out)
		}
	}
	return out
}

// Golden answers of every REST endpoint over the deterministic demo chain.
// They are type-checked against the wallet client's typings by
// tools/js/check-goldens.mjs.
func TestE2EGoldens(t *testing.T) {
	f := startGoldenFixture(t)
	inst, txs, hash, miner, unused, txBlock := f.inst, f.txs, f.hash, f.miner, f.unused, f.txBlock
	addr := f.addr

	type req struct {
		name, path string
		code       int
	}
	reqs := []req{
		{"status-regtest", "/api/v2", 200},
		{"block-index-100", "/api/v2/block-index/100", 200},
		{"block-height-1", "/api/v2/block/1", 200},
		{"block-tip-by-hash", "/api/v2/block/" + hash, 200},
		{"block-many-outputs", fmt.Sprintf("/api/v2/block/%d", txBlock), 200},
		{"rawblock-1", "/api/v2/rawblock/1", 200},
		{"feestats-many-outputs", fmt.Sprintf("/api/v2/feestats/%d", txBlock), 200},
		{"rawtx-coinbase", "/api/v2/rawtx/" + txs["coinbase"], 200},
		{"tx-specific-coinbase", "/api/v2/tx-specific/" + txs["coinbase"], 200},
		{"address-p2tr", "/api/v2/address/" + addr(chaingen.P2TR), 200},
		{"address-p2tr-basic", "/api/v2/address/" + addr(chaingen.P2TR) + "?details=basic", 200},
		{"address-p2tr-txslight", "/api/v2/address/" + addr(chaingen.P2TR) + "?details=txslight", 200},
		{"address-p2tr-txs", "/api/v2/address/" + addr(chaingen.P2TR) + "?details=txs", 200},
		{"address-p2wpkh-inputs", "/api/v2/address/" + addr(chaingen.P2WPKH) + "?filter=inputs", 200},
		{"address-p2wpkh-outputs", "/api/v2/address/" + addr(chaingen.P2WPKH) + "?filter=outputs", 200},
		{"address-p2pk-as-p2pkh", "/api/v2/address/" + addr(chaingen.P2PK), 200},
		{"address-miner-page2", "/api/v2/address/" + miner + "?pageSize=5&page=2", 200},
		{"address-miner-page-clamped", "/api/v2/address/" + miner + "?pageSize=5000&page=999", 200},
		{"address-miner-from-to", "/api/v2/address/" + miner + "?from=10&to=20", 200},
		{"address-unused", "/api/v2/address/" + unused, 200},
		{"utxo-p2wsh", "/api/v2/utxo/" + addr(chaingen.P2WSHMultisig), 200},
		{"utxo-miner", "/api/v2/utxo/" + miner, 200},
		{"estimatefee-2", "/api/v2/estimatefee/2", 200},
		{"balancehistory-p2tr-daily", "/api/v2/balancehistory/" + addr(chaingen.P2TR) + "?groupBy=86400", 200},
		{"balancehistory-p2tr-range", "/api/v2/balancehistory/" + addr(chaingen.P2TR) + "?from=1&to=1704067200&groupBy=zz", 200},
		{"error-balancehistory-address", "/api/v2/balancehistory/nope", 400},
		{"error-invalid-txid", "/api/v2/tx/xyz", 400},
		{"error-unknown-tx", "/api/v2/tx/" + strings.Repeat("ab", 32), 400},
		{"error-invalid-address", "/api/v2/address/notanaddress", 400},
		{"error-mainnet-address", "/api/v2/address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", 400},
		{"error-unknown-block", "/api/v2/block/99999", 400},
		{"error-bad-block-id", "/api/v2/block/-1", 400},
		{"block-index-beyond-tip", "/api/v2/block-index/99999", 200},
		{"error-estimatefee-bad", "/api/v2/estimatefee/0", 400},
		{"error-sendtx-garbage", "/api/v2/sendtx/zz", 400},
		{"status-unknown-endpoint", "/api/v2/nosuch", 200},
		{"error-missing-txid", "/api/v2/tx/", 400},
		// Filters are off in this config: Trezor's default scriptType is refused.
		{"error-block-filters-disabled", "/api/v2/block-filters/?scriptType=taproot-noordinals&lastN=1", 400},
	}
	for name, txid := range txs {
		reqs = append(reqs, req{"tx-" + name, "/api/v2/tx/" + txid, 200})
	}
	// Last, as it changes the node's mempool: a payment, then the answer for
	// the unconfirmed tx, and a double spend the node rejects.
	pay, payHex := f.payment(t)
	reqs = append(reqs,
		req{"sendtx-payment", "/api/v2/sendtx/" + payHex, 200},
		req{"error-sendtx-rejected-duplicate", "/api/v2/sendtx/" + payHex, 400},
		// Answered once the mempool holds the payment (see below).
		req{"tx-unconfirmed-payment", "/api/v2/tx/" + pay.TxHash().String(), 200},
		req{"address-unused-pending", "/api/v2/address/" + unused + "?details=txs", 200},
		req{"utxo-unused-pending", "/api/v2/utxo/" + unused, 200},
		req{"utxo-unused-pending-confirmed-only", "/api/v2/utxo/" + unused + "?confirmed=true", 200},
	)

	waitMempoolInSync(t, inst.base)
	gs := newGoldenSet(t, goldenDir, "TestE2EGoldens")
	for _, r := range reqs {
		if r.name == "tx-unconfirmed-payment" {
			waitAddress(t, inst.base, unused, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
		}
		got := fetchGolden(t, inst.base+r.path, r.code)
		switch {
		case strings.HasPrefix(r.name, "status-"):
			got = normalizeStatus(t, got)
		case strings.Contains(r.name, "pending") || strings.Contains(r.name, "unconfirmed"):
			got = normalizeFirstSeen(t, got)
		}
		gs.check(r.name, got)
	}
	gs.finish()
}

// goldenFixture is the demo chain on btcd (with a tx index, so the node can
// describe confirmed txs for tx-specific) and an instance synced to it, with
// the objects the golden requests name.
type goldenFixture struct {
	inst          *instance
	g             *chaingen.Generator
	txs           map[string]string // notableTxs
	hash          string            // the tip's
	miner, unused string
	txBlock       int32                            // the block of the many-outputs tx
	addr          func(chaingen.ScriptKind) string // the demo address of a kind
}

func startGoldenFixture(t *testing.T) *goldenFixture {
	t.Helper()
	node := startNodeWith(t, regtest.Options{TxIndex: true})
	f := &goldenFixture{g: demoChain(t)}
	submit(t, f.g, node, 1)
	f.inst = startInProcess(t, writeConfig(t, node, nil), t.TempDir(), nil)
	h, hash := f.g.Tip()
	f.hash = hash.String()
	waitTip(t, f.inst.base, h, f.hash, f.inst.logs)
	f.txs = notableTxs(t, f.g)
	var err error
	if f.miner, err = f.g.Address(chaingen.P2PKH, chaingen.MinerIndex); err != nil {
		t.Fatal(err)
	}
	if f.unused, err = f.g.Address(chaingen.P2WPKH, 999_999); err != nil {
		t.Fatal(err)
	}
	f.txBlock = f.g.Ledger().Txs[f.txs["many-outputs"]].Height
	f.addr = func(k chaingen.ScriptKind) string {
		a, err := f.g.Address(k, chaingen.DemoIndex)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return f
}

// payment makes a signed payment to the unused address, not yet sent.
func (f *goldenFixture) payment(t *testing.T) (*wire.MsgTx, string) {
	t.Helper()
	pay, err := f.g.CreatePayment([]chaingen.Output{{Address: f.unused, Value: 12345}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pay.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return pay, fmt.Sprintf("%x", buf.Bytes())
}

// goldenSet compares answers with the golden files of one directory,
// rewriting them with -update; finish reports (or, with -update, removes)
// files no answer matched.
type goldenSet struct {
	t         *testing.T
	dir, test string
	seen      map[string]bool
}

func newGoldenSet(t *testing.T, dir, test string) *goldenSet {
	return &goldenSet{t: t, dir: dir, test: test, seen: map[string]bool{}}
}

func (g *goldenSet) check(name string, got []byte) {
	g.t.Helper()
	file := filepath.Join(g.dir, name+".golden.json")
	g.seen[filepath.Base(file)] = true
	if *update {
		if err := os.MkdirAll(g.dir, 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			g.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		g.t.Errorf("%s: %v (run go test -run %s -update . and review the diff)", name, err, g.test)
		return
	}
	if !bytes.Equal(got, want) {
		g.t.Errorf("%s: answer differs from %s (run with -update and review the diff)\n got: %s", name, file, truncateBytes(got, 600))
	}
}

func (g *goldenSet) finish() {
	g.t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.dir, "*.golden.json"))
	for _, f := range files {
		if !g.seen[filepath.Base(f)] {
			if *update {
				_ = os.Remove(f)
			} else {
				g.t.Errorf("stale golden file %s", f)
			}
		}
	}
}

// fetchGolden returns the answer re-indented for reviewable diffs.
func fetchGolden(t *testing.T, url string, code int) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != code {
		t.Fatalf("GET %s: %d, want %d: %s", url, resp.StatusCode, code, truncateBytes(body, 300))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("GET %s: content type %q", url, ct)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatalf("GET %s: not JSON: %v", url, err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// normalizeStatus replaces the fields that change from run to run.
func normalizeStatus(t *testing.T, b []byte) []byte {
	t.Helper()
	var st map[string]map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"host": "host", "version": "version", "gitCommit": "commit", "buildTime": "build-time",
		"lastBlockTime": "2024-01-01T00:00:00Z", "lastMempoolTime": "2024-01-01T00:00:00Z", "dbSize": 1} {
		if _, ok := st["blockbook"][k]; !ok {
			t.Fatalf("status has no blockbook.%s", k)
		}
		st["blockbook"][k] = v
	}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// pendingBlockTime matches the blockTime of a pending tx in an indented
// answer (fields in wire order).
var pendingBlockTime = regexp.MustCompile(`("blockHeight": -1,\s*"confirmations": 0,\s*(?:"confirmationETABlocks": \d+,\s*)?(?:"confirmationETASeconds": \d+,\s*)?"blockTime": )\d+`)

// normalizeFirstSeen fixes the blockTime of pending txs, which is when this
// process first saw them.
func normalizeFirstSeen(t *testing.T, b []byte) []byte {
	t.Helper()
	if bytes.Contains(b, []byte(`"blockHeight": -1`)) && !pendingBlockTime.Match(b) {
		t.Fatalf("pending tx without blockTime:\n%s", b)
	}
	return pendingBlockTime.ReplaceAll(b, []byte("${1}1700000000"))
}

// waitMempoolInSync waits until the status says the mempool is loaded.
func waitMempoolInSync(t testing.TB, base string) {
	t.Helper()
	waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.InSyncMempool })
}

func truncateBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
