package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/openapicheck"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// pushdataOracle computes what the pushdata search must answer from the
// generator's raw blocks and pending txs, independently of the indexer:
// txscript.PushedData over every output script, input script and witness,
// and over the redeem and witness scripts of inputs that spend P2SH and
// P2WSH outputs (looked up among the chain's outputs).
type pushdataOracle struct {
	matches map[string][]api.PushdataMatch // by hash, in the API's order
	// sources counts the rows by where their push came from (an output's
	// script class, or an input's scriptSig, witness, redeem script or
	// witness script), to show which script types the chain exercises.
	sources map[string]int
	pending int // pending txs
}

func newPushdataOracle(t *testing.T, blocks []*wire.MsgBlock, pending []*wire.MsgTx) *pushdataOracle {
	t.Helper()
	o := &pushdataOracle{matches: map[string][]api.PushdataMatch{}, sources: map[string]int{}}
	outs := map[wire.OutPoint][]byte{}
	type posKey struct {
		hash string
		txid string
		n    uint32
		kind string
	}
	var seen map[posKey]bool
	add := func(source, txid string, height int64, n int, kind string, data ...[]byte) {
		for _, d := range data {
			if l := len(d); l != 20 && l != 32 && l != 33 && l != 65 {
				continue
			}
			sum := sha256.Sum256(d)
			h := hex.EncodeToString(sum[:])
			k := posKey{h, txid, uint32(n), kind}
			if seen[k] {
				continue
			}
			seen[k] = true
			o.sources[source]++
			o.matches[h] = append(o.matches[h], api.PushdataMatch{Hash: h, Txid: txid, Height: height, Index: uint32(n), Kind: kind})
		}
	}
	pushed := func(script []byte) [][]byte {
		p, err := txscript.PushedData(script)
		if err != nil {
			t.Fatalf("script %x: %v", script, err)
		}
		return p
	}
	addTx := func(tx *wire.MsgTx, height int64, coinbase bool) {
		txid := tx.TxHash().String()
		seen = map[posKey]bool{}
		for n, out := range tx.TxOut {
			add("out:"+txscript.GetScriptClass(out.PkScript).String(), txid, height, n, "output", pushed(out.PkScript)...)
		}
		for j, in := range tx.TxIn {
			if coinbase {
				break
			}
			sig := pushed(in.SignatureScript)
			add("scriptSig", txid, height, j, "input", sig...)
			add("witness", txid, height, j, "input", in.Witness...)
			prev, ok := outs[in.PreviousOutPoint]
			if !ok {
				t.Fatalf("tx %s input %d spends an unknown output", txid, j)
			}
			wsh := txscript.IsPayToWitnessScriptHash(prev)
			if txscript.IsPayToScriptHash(prev) {
				redeem := sig[len(sig)-1]
				add("redeem", txid, height, j, "input", pushed(redeem)...)
				wsh = txscript.IsPayToWitnessScriptHash(redeem)
			}
			if wsh {
				add("witnessScript", txid, height, j, "input", pushed(in.Witness[len(in.Witness)-1])...)
			}
		}
		for n, out := range tx.TxOut {
			outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = out.PkScript
		}
	}
	for h, b := range blocks {
		for i, tx := range b.Transactions {
			addTx(tx, int64(h), i == 0)
		}
	}
	for _, tx := range pending { // parents first: their outputs are needed
		addTx(tx, -1, false)
	}
	o.pending = len(pending)
	// The walk adds a hash's matches in the API's order: confirmed ones
	// by height, tx and position (outputs first), then pending ones.
	return o
}

// hashes lists the oracle's hashes, sorted.
func (o *pushdataOracle) hashes() []string { return slices.Sorted(maps.Keys(o.matches)) }

// pushdataSpec checks answers against the OpenAPI spec.
var pushdataSpec = sync.OnceValues(func() (*openapicheck.Checker, error) {
	return openapicheck.New(server.OpenAPISpec())
})

// postPushdata posts a search body and returns the status and the answer.
func postPushdata(t *testing.T, base, body string) (int, []byte) {
	t.Helper()
	resp, err := httpClient.Post(base+"/api/v2/pushdata/search", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// pushdataSearch posts a search, checks the answer against the OpenAPI
// spec, and decodes it (status 200) or returns the status and error text.
func pushdataSearch(t *testing.T, base string, body string) (int, *api.PushdataSearch, string) {
	t.Helper()
	status, data := postPushdata(t, base, body)
	c, err := pushdataSpec()
	if err != nil {
		t.Fatal(err)
	}
	op := openapicheck.Op{Method: http.MethodPost, Path: "/api/v2/pushdata/search"}
	if err := c.CheckAnswer(op, status, data); err != nil {
		t.Fatalf("answer against the OpenAPI spec: %v\n%s", err, truncateBytes(data, 600))
	}
	if status != 200 {
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("status %d, body %s", status, data)
		}
		return status, nil, e.Error
	}
	var res api.PushdataSearch
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return 200, &res, ""
}

// checkPushdata requires that a search for the oracle's hashes and extra
// ones (in requests of up to 1,000) answers exactly the oracle's matches
// (none for hashes it does not know), the oracle being built from blocks
// and the node's mempool. The mempool is read again until blockbook's
// follows it (a reorg puts txs back, a block evicts conflicting ones).
func checkPushdata(t *testing.T, base string, node *regtest.Node, blocks []*wire.MsgBlock, extra []string) *pushdataOracle {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		o := newPushdataOracle(t, blocks, nodeMempool(t, node))
		hashes := union(o.hashes(), extra)
		n, diff := comparePushdata(t, base, o, hashes)
		if diff == "" {
			t.Logf("%d hashes, %d matches as the oracle's (%d pending txs)", len(hashes), n, o.pending)
			return o
		}
		if time.Now().After(deadline) {
			t.Fatal(diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// comparePushdata searches for hashes and reports the first difference
// from the oracle; confirmed matches must come in the oracle's order,
// pending ones in any (txs first seen in one second have no order).
func comparePushdata(t *testing.T, base string, o *pushdataOracle, hashes []string) (int, string) {
	t.Helper()
	total := 0
	for start := 0; start < len(hashes); start += api.MaxPushdataHashes {
		batch := hashes[start:min(start+api.MaxPushdataHashes, len(hashes))]
		body, _ := json.Marshal(map[string]any{"hashes": batch})
		code, res, msg := pushdataSearch(t, base, string(body))
		if code != 200 {
			t.Fatalf("search: %d %s", code, msg)
		}
		if res.Truncated {
			t.Fatalf("search of %d hashes truncated", len(batch))
		}
		got := map[string][]api.PushdataMatch{}
		for _, m := range res.Matches {
			got[m.Hash] = append(got[m.Hash], m)
		}
		for _, h := range batch {
			if g, want := pendingSorted(got[h]), pendingSorted(o.matches[h]); !slices.Equal(g, want) {
				return 0, fmt.Sprintf("hash %s: got %s, want %s", h, fmtMatches(g), fmtMatches(want))
			}
			total += len(got[h])
		}
	}
	return total, ""
}

// pendingSorted sorts the pending tail of a hash's matches.
func pendingSorted(ms []api.PushdataMatch) []api.PushdataMatch {
	ms = slices.Clone(ms)
	i := slices.IndexFunc(ms, func(m api.PushdataMatch) bool { return m.Height == -1 })
	if i >= 0 {
		slices.SortFunc(ms[i:], func(a, b api.PushdataMatch) int {
			return cmp.Or(strings.Compare(a.Txid, b.Txid), strings.Compare(a.Kind, b.Kind), cmp.Compare(a.Index, b.Index))
		})
	}
	return ms
}

// nodeMempool reads the node's mempool, parents before children.
func nodeMempool(t *testing.T, node *regtest.Node) []*wire.MsgTx {
	t.Helper()
	ctx := context.Background()
	var ids []string
	if err := node.CallResult(ctx, &ids, "getrawmempool"); err != nil {
		t.Fatal(err)
	}
	byID := map[chainhash.Hash]*wire.MsgTx{}
	for _, id := range ids {
		var raw string
		if err := node.CallResult(ctx, &raw, "getrawtransaction", id, 0); err != nil {
			continue // mined or evicted meanwhile
		}
		b, err := hex.DecodeString(raw)
		if err != nil {
			t.Fatal(err)
		}
		tx := &wire.MsgTx{}
		if err := tx.Deserialize(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
		byID[tx.TxHash()] = tx
	}
	var out []*wire.MsgTx
	done := map[chainhash.Hash]bool{}
	var visit func(tx *wire.MsgTx)
	visit = func(tx *wire.MsgTx) {
		if done[tx.TxHash()] {
			return
		}
		done[tx.TxHash()] = true
		for _, in := range tx.TxIn {
			if p, ok := byID[in.PreviousOutPoint.Hash]; ok {
				visit(p)
			}
		}
		out = append(out, tx)
	}
	for _, id := range slices.SortedFunc(maps.Keys(byID), func(a, b chainhash.Hash) int { return bytes.Compare(a[:], b[:]) }) {
		visit(byID[id])
	}
	return out
}

func fmtMatches(ms []api.PushdataMatch) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "\n  %s %d %s:%d", m.Txid, m.Height, m.Kind, m.Index)
	}
	return b.String()
}

// pushdataGolden posts a search and returns the answer re-indented, for a
// golden file; the status must be code.
func pushdataGolden(t *testing.T, base, body string, code int) []byte {
	t.Helper()
	status, data := postPushdata(t, base, body)
	if status != code {
		t.Fatalf("search %s: %d, want %d: %s", body, status, code, truncateBytes(data, 300))
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}
