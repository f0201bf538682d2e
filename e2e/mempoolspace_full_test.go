package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// mempool.js 3.0.0 (tools/js/mempool-full.mjs) over a mempool of real
// size on TestE2EMempoolSpaceWebsocket's stack: 24 standard txs of about
// 99,000 vB fill more than two 4,000,000 WU blocks, so the projection has
// three; among them a CPFP package (a 2 sat/vB parent and a 100 sat/vB
// child), a BIP125 replacement and a large tx paying 3 sat/vB, below
// block 0's median, which no block's gap can take before the third. The
// script checks every call mempool.js offers against the facts computed
// here from btcd's own mempool; the Lightning calls must answer 404.

const (
	mempoolFullScript = "../tools/js/mempool-full.mjs"
	fillers           = 24
	fillerOuts        = 2300 // P2TR outputs of 43 vB: about 99,000 vB a tx (100,000 is the standard limit)
)

// fullTxFacts is one tx of the facts: its fee and weight by btcd.
type fullTxFacts struct {
	Txid   string `json:"txid"`
	Fee    int64  `json:"fee"`
	Weight int64  `json:"weight"`
	Vsize  int64  `json:"vsize"`
	Hex    string `json:"hex,omitempty"`
	Sigops int    `json:"sigops,omitempty"`
}

type fullMempoolFacts struct {
	TipHeight int32    `json:"tipHeight"`
	TipHash   string   `json:"tipHash"`
	TipHeader string   `json:"tipHeader"`
	TipTxids  []string `json:"tipTxids"`
	// The mempool by btcd: every tx, and sums (vsize as btcd counts it).
	Txs        map[string]fullTxFacts `json:"txs"`
	TotalFees  int64                  `json:"totalFees"`
	TotalVsize int64                  `json:"totalVsize"`
	Parent     fullTxFacts            `json:"parent"`
	Child      fullTxFacts            `json:"child"`
	ChildVout  int                    `json:"childVout"` // the parent's output the child spends
	Low        fullTxFacts            `json:"low"`
	Replaced   fullTxFacts            `json:"replaced"`
	Repl       fullTxFacts            `json:"replacement"`
	// Addr is paid by the child only (value ChildValue at output 0).
	Addr       string `json:"addr"`
	ChildValue int64  `json:"childValue"`
	PostTx     string `json:"postTx"`
	PostTxid   string `json:"postTxid"`
}

// checkFullMempool runs the scenario above (about 2.3 M vB of mempool).
func checkFullMempool(t *testing.T, st *demoStack, esplora string) {
	start := time.Now()
	defer func() {
		t.Logf("mempool.js over three projected blocks: %v", time.Since(start).Round(time.Millisecond))
	}()
	node := esploraPrereqs(t)
	g := st.g
	addr := mempoolAddr(t, g, chaingen.P2WPKH, 120)
	var replaced, repl *wire.MsgTx
	var txs []*wire.MsgTx
	send := func(tx *wire.MsgTx) *wire.MsgTx {
		sendTx(t, st, tx)
		txs = append(txs, tx)
		return tx
	}
	pay := func(to []chaingen.Output, rate int64) *wire.MsgTx {
		t.Helper()
		tx, err := g.CreatePayment(to, rate)
		if err != nil {
			t.Fatal(err)
		}
		return send(tx)
	}
	addrScript, err := g.PkScript(chaingen.P2WPKH, 9120)
	if err != nil {
		t.Fatal(err)
	}
	wg := startWSGoldens(t, esplora, hex.EncodeToString(addrScript))
	var parent, child, low *wire.MsgTx
	var facts fullMempoolFacts
	factsPath := filepath.Join(t.TempDir(), "mempool-full-facts.json")
	early, err := json.Marshal(map[string]string{"addr": addr})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(factsPath, early, 0o644); err != nil {
		t.Fatal(err)
	}
	runClientScript(t, node, mempoolFullScript, esplora, factsPath, st.inst.logs, func(line string) (string, bool) {
		if line != "ready" { // the client tracks addr, RBF and projected block 0
			return "", false
		}
		replaced = pay([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 121), Value: 80_000}}, 5)
		wg.first(replaced.TxHash().String())
		parent = pay([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 123), Value: 500_000}}, 2)
		wg.delta(parent.TxHash().String())
		script, err := g.PkScript(chaingen.P2TR, 9122)
		if err != nil {
			return "error " + err.Error(), true
		}
		fill := make([]chaingen.Output, fillerOuts)
		for i := range fill {
			fill[i] = chaingen.Output{Script: script, Value: 1000}
		}
		for i := range fillers {
			pay(fill, 20+int64(i))
		}
		var coin []chaingen.Coin
		for _, c := range g.Coins(parent) {
			if c.Value == 500_000 {
				coin = append(coin, c)
			}
		}
		facts.ChildValue = 400_000
		if child, err = g.Spend(coin, []chaingen.Output{{Address: addr, Value: facts.ChildValue}}, 100); err != nil {
			return "error " + err.Error(), true
		}
		send(child)
		// 1,400 outputs: about 60,000 vB, more than a full block's gap.
		low = pay(fill[:1400], 3)
		repl = replaceAt(t, g, replaced, 50)
		send(repl)
		wg.replaced(replaced.TxHash().String(), repl.TxHash().String())
		facts.ChildVout = int(coin[0].OutPoint.Index)
		fullFacts(t, st, esplora, &facts, txs)
		facts.Addr = addr
		for dst, tx := range map[*fullTxFacts]*wire.MsgTx{&facts.Parent: parent, &facts.Child: child, &facts.Low: low, &facts.Repl: repl} {
			*dst = facts.Txs[tx.TxHash().String()]
		}
		facts.Child.Sigops = btcdSigOpCost(t, g, child, []*wire.MsgTx{parent})
		facts.Low.Hex = txHex(t, low)
		rw := int64(replaced.SerializeSizeStripped()*3 + replaced.SerializeSize())
		facts.Replaced = fullTxFacts{Txid: replaced.TxHash().String(), Weight: rw, Vsize: (rw + 3) / 4}
		facts.Replaced.Fee, _ = pendingFeesAndWeight(t, g, []*wire.MsgTx{replaced})
		post, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 124), Value: 60_000}}, 30)
		if err != nil {
			return "error " + err.Error(), true
		}
		facts.PostTx, facts.PostTxid = txHex(t, post), post.TxHash().String()
		data, err := json.Marshal(facts)
		if err == nil {
			err = os.WriteFile(factsPath, data, 0o644)
		}
		if err != nil {
			return "error " + err.Error(), true
		}
		return "facts", true
	})
	wg.chart(len(facts.Txs) + 1) // the script's postTx came last
}

// fullFacts fills the tip's and the mempool's facts from btcd, once the
// projection holds every tx btcd holds.
func fullFacts(t *testing.T, st *demoStack, esplora string, f *fullMempoolFacts, sent []*wire.MsgTx) {
	t.Helper()
	var pool map[string]struct {
		Fee    float64 `json:"fee"`
		Vsize  int64   `json:"vsize"`
		Weight int64   `json:"weight"`
	}
	if err := st.node.CallResult(context.Background(), &pool, "getrawmempool", true); err != nil {
		t.Fatal(err)
	}
	for _, tx := range sent[1:] { // all but the replaced tx
		if _, ok := pool[tx.TxHash().String()]; !ok {
			t.Fatalf("btcd does not hold %s", tx.TxHash())
		}
	}
	// btcd's getrawmempool can still list txs its own chain has mined
	// (seen: a chain of 3 wallet txs of the demo chain, in its blocks
	// 241-243, which btcd serves as the active chain): our mempool rightly
	// leaves them out, so the facts do too, once the index shows each one
	// confirmed. Any other tx btcd holds and we do not list fails.
	var ours []string
	esploraJSON(t, esplora+"/api/mempool/txids", &ours)
	byID := map[string]*wire.MsgTx{}
	for _, tx := range sent {
		byID[tx.TxHash().String()] = tx
	}
	for id := range pool {
		if byID[id] == nil && !slices.Contains(ours, id) {
			var tx struct {
				Status struct {
					Confirmed bool   `json:"confirmed"`
					Hash      string `json:"block_hash"`
				} `json:"status"`
			}
			esploraJSON(t, esplora+"/api/tx/"+id, &tx)
			var active string
			if tx.Status.Confirmed {
				var info struct {
					Confirmations int64 `json:"confirmations"`
				}
				if err := st.node.CallResult(context.Background(), &info, "getblockheader", tx.Status.Hash, true); err != nil || info.Confirmations < 1 {
					active = fmt.Sprintf(" (btcd: %v, %d confirmations)", err, info.Confirmations)
				}
			}
			if !tx.Status.Confirmed || active != "" {
				t.Fatalf("btcd holds %s, which our mempool does not list and the index has not mined%s", id, active)
			}
			t.Logf("btcd still lists %s, mined in its active chain's block %s: left out of the facts", id, tx.Status.Hash)
			delete(pool, id)
		}
	}
	waitEsplora(t, esplora+"/api/v1/fees/mempool-blocks", func(body []byte) bool {
		var blocks []mempoolBlock
		n := 0
		if json.Unmarshal(body, &blocks) != nil {
			return false
		}
		for _, b := range blocks {
			n += *b.NTx
		}
		return n == len(pool)
	})
	f.Txs = map[string]fullTxFacts{}
	for id, e := range pool {
		tx := byID[id]
		if tx == nil { // left by the steps before
			tx = nodeTx(t, st, id)
		}
		fee := int64(e.Fee*1e8 + 0.5)
		w := int64(tx.SerializeSizeStripped()*3 + tx.SerializeSize())
		if e.Weight != 0 && e.Weight != w {
			t.Fatalf("btcd weighs %s %d, want %d", id, e.Weight, w)
		}
		f.Txs[id] = fullTxFacts{Txid: id, Fee: fee, Weight: w, Vsize: (w + 3) / 4}
		f.TotalFees += fee
		f.TotalVsize += (w + 3) / 4
	}
	g := st.g
	h, hash := g.Tip()
	f.TipHeight, f.TipHash = h, hash.String()
	tip := g.Blocks()[h]
	var hdr strings.Builder
	if err := tip.Header.Serialize(hexWriter{&hdr}); err != nil {
		t.Fatal(err)
	}
	f.TipHeader = hdr.String()
	for _, tx := range tip.Transactions {
		f.TipTxids = append(f.TipTxids, tx.TxHash().String())
	}
}

// hexWriter writes bytes as lowercase hex.
type hexWriter struct{ b *strings.Builder }

func (w hexWriter) Write(p []byte) (int, error) {
	w.b.WriteString(hex.EncodeToString(p))
	return len(p), nil
}

// nodeTx reads a tx from btcd.
func nodeTx(t *testing.T, st *demoStack, id string) *wire.MsgTx {
	t.Helper()
	var raw string
	if err := st.node.CallResult(context.Background(), &raw, "getrawtransaction", id); err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(raw)
	if err != nil {
		t.Fatal(err)
	}
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	return &tx
}
