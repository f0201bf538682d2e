package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

// litecoind's getblocktemplate (Bitcoin Core's ancestor-score block
// assembler, CPFP included) judges the first projected block: with the
// node assembling small blocks and a mempool three blocks deep, block 0
// of fees/mempool-blocks holds what the template holds (the same count,
// fees and size).
//
// The capacities agree by construction: Core adds a package while
// 4,000 WU (the coinbase) + the block's weight + 4 × the package's vsize
// stays below -blockmaxweight; mempool.space's builder keeps a further
// 4,000 WU margin below its block weight, so the projection is given
// -blockmaxweight + 4,000. Both stop after 1,000 misfits in a row once
// within 4,000 WU of full. They may differ on ties of ancestor score
// (Core breaks them by arrival, mempool.space by its tx order) and on a
// package straddling the block's edge; the txs here have distinct rates.
func TestLtcProjectedBlockMatchesTemplate(t *testing.T) {
	const maxWeight = 20_000
	esploraAddr := make(chan string, 1)
	node, sc := startLtcNodeWith(t, fmt.Sprintf("-blockmaxweight=%d", maxWeight))
	// Blocks over P2P keep a connection open: litecoind answers
	// getblocktemplate only with a peer.
	cfg := writeLtcConfig(t, node, map[string]any{"p2p_address": node.P2PAddr})
	inst := startInProcess(t, cfg, t.TempDir(), func(o *app.Options) {
		o.ResyncMempoolMs = 500
		o.ProjectedBlockWeight = maxWeight + 4_000
		listenEsplora(o, esploraAddr)
	})
	waitTip(t, inst.base, sc.TipHeight, sc.TipHash, inst.logs)
	var esplora string
	select {
	case a := <-esploraAddr:
		esplora = "http://" + a
	case <-time.After(waitFor):
		t.Fatal("the esplora listener did not start")
	}
	w := node.Wallet(ltcregtest.W)

	// Coins for the 70 payments first, one mined fan-out of 70 outputs
	// to one P2WPKH script: each payment then spends its own coin, built
	// here and signed by the wallet, without the wallet's coin selection
	// per payment (70 sendtoaddress calls took 72-105 s in CI).
	var own, dest string
	ltcCall(t, w, &own, "getnewaddress", "", "bech32")
	ltcCall(t, w, &dest, "getnewaddress", "", "bech32")
	coins := ltcFanOut(t, w, own, 70, 2_000_000)
	mineLtc(t, node, 1)

	// A low-fee parent paying the wallet and a high-fee child spending it
	// (CPFP), then 70 payments of 141 vB at distinct rates from 11 to 80
	// sat/vB: three blocks of 16,000 WU.
	var parent string
	// sendtoaddress address amount comment comment_to subtractfee replaceable conf_target estimate_mode avoid_reuse fee_rate
	ltcCall(t, w, &parent, "sendtoaddress", own, json.Number("2"), "", "", false, false, nil, "unset", false, 10)
	var raw struct {
		Vout []struct {
			N            int         `json:"n"`
			Value        json.Number `json:"value"`
			ScriptPubKey struct {
				Addresses []string `json:"addresses"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
	}
	ltcCall(t, w, &raw, "getrawtransaction", parent, true)
	vout := -1
	for _, o := range raw.Vout {
		if len(o.ScriptPubKey.Addresses) == 1 && o.ScriptPubKey.Addresses[0] == own {
			vout = o.N
		}
	}
	if vout < 0 {
		t.Fatalf("the parent %s does not pay %s", parent, own)
	}
	var childHex string
	// 2 LTC in, 1.99 out: 0.01 LTC (1,000,000 litoshi) on ~110 vB.
	ltcCall(t, w, &childHex, "createrawtransaction", []map[string]any{{"txid": parent, "vout": vout}}, map[string]any{dest: json.Number("1.99")})
	var child string
	ltcCall(t, w, &child, "sendrawtransaction", ltcSignWithWallet(t, w, childHex))
	start := time.Now()
	ltcPayEach(t, w, coins, ltcScriptOf(t, w, dest), 11)
	t.Logf("70 payments in %v", time.Since(start))
	var pool []string
	ltcCall(t, node.Client, &pool, "getrawmempool")

	// Our projection of the same mempool.
	var blocks []mempoolBlock
	waitEsplora(t, esplora+"/api/v1/fees/mempool-blocks", func(body []byte) bool {
		blocks = nil
		if json.Unmarshal(body, &blocks) != nil {
			return false
		}
		n := 0
		for _, b := range blocks {
			n += *b.NTx
		}
		return n == len(pool)
	})
	if len(blocks) < 3 {
		t.Fatalf("%d txs project to %d blocks; the test wants at least 3", len(pool), len(blocks))
	}
	var tmpl struct {
		Transactions []struct {
			Txid   string `json:"txid"`
			Fee    int64  `json:"fee"`
			Weight int64  `json:"weight"`
		} `json:"transactions"`
	}
	ltcCall(t, node.Client, &tmpl, "getblocktemplate", map[string]any{"rules": []string{"mweb", "segwit"}})
	// With MWEB active the template also holds the block's HogEx, which
	// the miner makes (no fee, not a mempool tx): it is left out.
	inPool := map[string]bool{}
	for _, id := range pool {
		inPool[id] = true
	}
	mempoolTxs := tmpl.Transactions[:0]
	for _, tx := range tmpl.Transactions {
		if inPool[tx.Txid] {
			mempoolTxs = append(mempoolTxs, tx)
		}
	}
	tmpl.Transactions = mempoolTxs
	var fees, weight int64
	var ids []string
	for _, tx := range tmpl.Transactions {
		fees += tx.Fee
		weight += tx.Weight
		ids = append(ids, tx.Txid[:8])
	}
	b0 := blocks[0]
	t.Logf("template: %d txs, %d litoshi, %d WU; projected block 0: %d txs, %d litoshi, %v vB (of %d pending, %d blocks)",
		len(tmpl.Transactions), fees, weight, *b0.NTx, *b0.TotalFees, *b0.BlockVSize, len(pool), len(blocks))
	if *b0.NTx != len(tmpl.Transactions) || *b0.TotalFees != fees || math.Abs(*b0.BlockVSize-float64(weight)/4) > 0.001 {
		t.Errorf("projected block 0 differs from litecoind's template: %d txs, %d fees, %v vB; template %d txs, %d fees, %v vB (%s)",
			*b0.NTx, *b0.TotalFees, *b0.BlockVSize, len(tmpl.Transactions), fees, float64(weight)/4, strings.Join(ids, " "))
	}
	inTemplate := func(id string) bool {
		for _, tx := range tmpl.Transactions {
			if tx.Txid == id {
				return true
			}
		}
		return false
	}
	if !inTemplate(parent) || !inTemplate(child) {
		t.Errorf("the CPFP package (parent %s at 10 sat/vB, child %s) is not in the template: the test's premise fails", parent, child)
	}
}
