package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The Esplora REST front of a real blockbook over real btcd and the demo
// chain: Go checks of the answers against chaingen's ledger, then the real
// client, @mempool/mempool.js, reading every Esplora endpoint it has
// (tools/js/esplora-client.mjs) against facts computed here, its
// mempool.space-only /v1 endpoints answering 404.

const (
	esploraScript     = "../tools/js/esplora-client.mjs"
	mempoolJSPackage  = "../tools/js/node_modules/@mempool/mempool.js/package.json"
	mempoolJSVersion  = "3.0.0"
	esploraClientWait = 5 * time.Minute // a failure guard for the script
)

// startEsploraStack runs the demo stack with -esplora on a free port and
// returns the stack and the listener's base URL.
func startEsploraStack(t *testing.T) (*demoStack, string) {
	t.Helper()
	return startEsploraStackWith(t, nil)
}

// startEsploraStackWith is startEsploraStack with cfgExtra in the config.
func startEsploraStackWith(t *testing.T, cfgExtra map[string]any) (*demoStack, string) {
	t.Helper()
	addr := make(chan string, 1)
	st := startDemoStackWith(t, cfgExtra, func(o *app.Options) {
		listenEsplora(o, addr)
		o.Esplora.AddressPrefix = true
		o.Esplora.StatsInterval = time.Second // live-2h-chart's samples
	})
	select {
	case a := <-addr:
		return st, "http://" + a
	case <-time.After(waitFor):
		t.Fatalf("the esplora listener did not start\n%s", st.inst.logs)
	}
	return nil, ""
}

// listenEsplora makes the instance of o serve -esplora on a free port and
// send its address to addr.
func listenEsplora(o *app.Options, addr chan<- string) {
	o.Esplora.Addr = "127.0.0.1:0"
	captureListen(o, "esplora", addr)
}

// captureListen sends the address of o's listener name to addr instead
// of the instance's own OnListen.
func captureListen(o *app.Options, name string, addr chan<- string) {
	next := o.OnListen
	o.OnListen = func(n, a string) {
		if n == name {
			addr <- a
			return
		}
		next(n, a)
	}
}

// esploraGet reads a path of the front: status and body.
func esploraGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := httpClient.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, body
}

func esploraJSON(t *testing.T, url string, out any) {
	t.Helper()
	code, body := esploraGet(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}

// Facts for the mempool.js script.
type esploraFacts struct {
	TipHeight int32               `json:"tipHeight"`
	TipHash   string              `json:"tipHash"`
	Blocks    []esploraBlockFacts `json:"blocks"`
	// Page is the hashes of /v1/blocks from the tip (15 blocks down).
	Page      []string              `json:"page"`
	Addresses []esploraAddressFacts `json:"addresses"`
	Txs       []esploraTxFacts      `json:"txs"`
	Pending   []string              `json:"pending"`
	// PostTx is a signed tx the script broadcasts with postTx.
	PostTx     string   `json:"postTx"`
	PostTxid   string   `json:"postTxid"`
	AfterTxid  string   `json:"afterTxid"`  // an after_txid of the busiest address
	AfterTxids []string `json:"afterTxids"` // what /txs?after_txid= lists
	AfterAddr  string   `json:"afterAddr"`
	// The pending txs' total fee and weight: projected block 0 of
	// fees/mempool-blocks.
	PendingFees   int64 `json:"pendingFees"`
	PendingWeight int64 `json:"pendingWeight"`
	// Each pending tx's fee and weight (cpfp/:txid).
	PendingTxs []pendingTxFacts `json:"pendingTxs"`
	// MempoolSpace: the facts above for mempool.space's /v1 routes are
	// given, and the script checks them.
	MempoolSpace bool `json:"mempoolSpace"`
}

type pendingTxFacts struct {
	Txid   string `json:"txid"`
	Weight int64  `json:"weight"`
	Fee    int64  `json:"fee"`
	// Sigops is the tx's sigop cost by btcd's blockchain.GetSigOpCost.
	Sigops int `json:"sigops"`
}

type esploraBlockFacts struct {
	Height int32    `json:"height"`
	Hash   string   `json:"hash"`
	Header string   `json:"header"`
	Txids  []string `json:"txids"`
	Next   string   `json:"next"` // "" at the tip
	RawLen int      `json:"rawLen"`
	// TotalFees (from the outputs the inputs spend) and Reward (the
	// coinbase's outputs) are mempool.space's extras of /v1/block.
	TotalFees int64 `json:"totalFees"`
	Reward    int64 `json:"reward"`
}

type esploraStatsFacts struct {
	FundedTxoCount int64 `json:"funded_txo_count"`
	FundedTxoSum   int64 `json:"funded_txo_sum"`
	SpentTxoCount  int64 `json:"spent_txo_count"`
	SpentTxoSum    int64 `json:"spent_txo_sum"`
	TxCount        int64 `json:"tx_count"`
}

type esploraAddressFacts struct {
	Address      string            `json:"address"`
	ChainTxids   []string          `json:"chainTxids"` // newest first
	MempoolTxids []string          `json:"mempoolTxids"`
	Chain        esploraStatsFacts `json:"chain_stats"`
	Mempool      esploraStatsFacts `json:"mempool_stats"`
	Utxos        []string          `json:"utxos"` // txid:vout:value:height (0 pending)
}

type esploraTxFacts struct {
	Txid      string `json:"txid"`
	Hex       string `json:"hex"`
	Fee       int64  `json:"fee"`
	Height    int32  `json:"height"`
	BlockHash string `json:"blockHash"`
	BlockTime int64  `json:"blockTime"`
	Pos       int    `json:"pos"`
	Vin       int    `json:"vin"`
	Vout      int    `json:"vout"`
	// Outspends: "" unspent, else the spending txid.
	Outspends []string `json:"outspends"`
}

// addressFacts replays the raw chain and the pending txs for one address
// and checks the sums against the ledger.
func addressFacts(t *testing.T, g *chaingen.Generator, pending []*wire.MsgTx, addr string) esploraAddressFacts {
	t.Helper()
	led := g.Ledger()
	script := pkScriptOf(t, g, addr)
	f := esploraAddressFacts{Address: addr}
	outs := map[wire.OutPoint]int64{}
	heights := map[wire.OutPoint]int32{}
	spent := map[wire.OutPoint]bool{}
	apply := func(tx *wire.MsgTx, height int32, st *esploraStatsFacts) bool {
		touched := false
		for _, in := range tx.TxIn {
			if v, ok := outs[in.PreviousOutPoint]; ok {
				st.SpentTxoCount++
				st.SpentTxoSum += v
				spent[in.PreviousOutPoint] = true
				touched = true
			}
		}
		for n, o := range tx.TxOut {
			if bytes.Equal(o.PkScript, script) {
				op := wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}
				outs[op], heights[op] = o.Value, height
				st.FundedTxoCount++
				st.FundedTxoSum += o.Value
				touched = true
			}
		}
		if touched {
			st.TxCount++
		}
		return touched
	}
	for h, b := range g.Blocks() {
		for _, tx := range b.Transactions {
			if h > 0 && apply(tx, int32(h), &f.Chain) {
				f.ChainTxids = append(f.ChainTxids, tx.TxHash().String())
			}
		}
	}
	for _, tx := range pending {
		if apply(tx, 0, &f.Mempool) {
			f.MempoolTxids = append(f.MempoolTxids, tx.TxHash().String())
		}
	}
	slices.Reverse(f.ChainTxids)
	slices.Reverse(f.MempoolTxids)
	for op, v := range outs {
		if !spent[op] {
			f.Utxos = append(f.Utxos, fmt.Sprintf("%s:%d:%d:%d", op.Hash, op.Index, v, heights[op]))
		}
	}
	sort.Strings(f.Utxos)
	// The ledger is the oracle of the confirmed sums and history.
	if a := led.Addresses[addr]; a != nil {
		want := slices.Clone(a.Txids)
		sort.SliceStable(want, func(i, j int) bool {
			ti, tj := led.Txs[want[i]], led.Txs[want[j]]
			return ti.Height > tj.Height || ti.Height == tj.Height && ti.Position > tj.Position
		})
		if a.Received != f.Chain.FundedTxoSum || a.Sent != f.Chain.SpentTxoSum || !slices.Equal(want, f.ChainTxids) {
			t.Fatalf("replay of %s disagrees with the ledger: %+v vs %+v", addr, f.Chain, a)
		}
	}
	return f
}

func pkScriptOf(t *testing.T, g *chaingen.Generator, addr string) []byte {
	t.Helper()
	for _, k := range []chaingen.ScriptKind{chaingen.P2PKH, chaingen.P2WPKH, chaingen.P2SHP2WPKH, chaingen.P2WSHMultisig, chaingen.P2TR} {
		for _, i := range []uint64{chaingen.DemoIndex, 9001, 9002, 9003} {
			if a, err := g.Address(k, i); err == nil && a == addr {
				s, err := g.PkScript(k, i)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
		}
	}
	t.Fatalf("no script for %s", addr)
	return nil
}

// checkEsploraAddress compares the front's answers for an address with
// its facts.
func checkEsploraAddress(t *testing.T, base string, f esploraAddressFacts) {
	t.Helper()
	var st struct {
		Chain   esploraStatsFacts `json:"chain_stats"`
		Mempool esploraStatsFacts `json:"mempool_stats"`
	}
	esploraJSON(t, base+"/api/address/"+f.Address, &st)
	if st.Chain != f.Chain || st.Mempool != f.Mempool {
		t.Fatalf("stats of %s: %+v, want %+v / %+v", f.Address, st, f.Chain, f.Mempool)
	}
	var all []string
	last := ""
	for {
		var page []struct {
			Txid string `json:"txid"`
		}
		path := base + "/api/address/" + f.Address + "/txs/chain"
		if last != "" {
			path += "/" + last
		}
		esploraJSON(t, path, &page)
		if len(page) == 0 {
			break
		}
		for _, p := range page {
			all = append(all, p.Txid)
		}
		last = page[len(page)-1].Txid
	}
	if !slices.Equal(all, f.ChainTxids) {
		t.Fatalf("chain history of %s: %v, want %v", f.Address, all, f.ChainTxids)
	}
	var utxos []struct {
		Txid   string `json:"txid"`
		Vout   int    `json:"vout"`
		Value  int64  `json:"value"`
		Status struct {
			BlockHeight int32 `json:"block_height"`
		} `json:"status"`
	}
	esploraJSON(t, base+"/api/address/"+f.Address+"/utxo", &utxos)
	var got []string
	for _, u := range utxos {
		got = append(got, fmt.Sprintf("%s:%d:%d:%d", u.Txid, u.Vout, u.Value, u.Status.BlockHeight))
	}
	sort.Strings(got)
	if !slices.Equal(got, f.Utxos) {
		t.Fatalf("utxos of %s: %v, want %v", f.Address, got, f.Utxos)
	}
}

// Long: one scenario (a mempool chain, the Go checks, the client run and
// a reorg) shares one node and chain to keep the test's CI time small.
func TestEsploraAPI(t *testing.T) {
	node := esploraPrereqs(t)
	st, base := startEsploraStack(t)
	g := st.g
	// A pending payment and a pending child of it: a mempool chain.
	z := mempoolAddr(t, g, chaingen.P2TR, 1)
	w := mempoolAddr(t, g, chaingen.P2WPKH, 2)
	t1, err := g.CreatePayment([]chaingen.Output{{Address: z, Value: 700_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	sendTx(t, st, t1)
	// The mempool orders by the second it first saw a tx: the child comes
	// a second later, so that newest first is well defined.
	waitEsplora(t, base+"/api/mempool/txids", func(body []byte) bool { return strings.Contains(string(body), t1.TxHash().String()) })
	time.Sleep(1100 * time.Millisecond)
	var zCoin []chaingen.Coin
	for _, c := range g.Coins(t1) {
		if c.Value == 700_000 {
			zCoin = append(zCoin, c)
		}
	}
	t2, err := g.Spend(zCoin, []chaingen.Output{{Address: w, Value: 300_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	sendTx(t, st, t2)
	pending := []*wire.MsgTx{t1, t2}
	waitEsplora(t, base+"/api/mempool/txids", func(body []byte) bool {
		return strings.Contains(string(body), t2.TxHash().String()) && strings.Contains(string(body), t1.TxHash().String())
	})

	facts := esploraFactsOf(t, st, pending)
	for _, a := range facts.Addresses {
		checkEsploraAddress(t, base, a)
	}
	post, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 3), Value: 50_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := post.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	facts.PostTx, facts.PostTxid = hex.EncodeToString(buf.Bytes()), post.TxHash().String()
	// The projection follows the mempool within a refresh (about a second).
	waitEsplora(t, base+"/api/v1/fees/mempool-blocks", func(body []byte) bool {
		return strings.Contains(string(body), fmt.Sprintf(`"nTx":%d,`, len(pending)))
	})
	runEsploraScript(t, node, base, facts)
	checkAddressPrefix(t, base, g.Ledger())

	fork := esploraReorg(t, st, base)
	checkAddressPrefix(t, base, fork.Ledger())
}

// checkAddressPrefix searches address prefixes and compares the answers
// with the ledger's addresses (the confirmed ones): up to 10, sorted.
func checkAddressPrefix(t *testing.T, base string, led *chaingen.Ledger) {
	t.Helper()
	var all []string
	for a := range led.Addresses {
		all = append(all, a)
	}
	sort.Strings(all)
	for _, prefix := range []string{"bcrt1q", "bcrt1p", "2", "m", "n", all[len(all)/2][:10], all[len(all)-1]} {
		var got []string
		esploraJSON(t, base+"/api/address-prefix/"+prefix, &got)
		var want []string
		for _, a := range all {
			if strings.HasPrefix(a, prefix) && len(want) < 10 {
				want = append(want, a)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("address-prefix %s: %v, want %v", prefix, got, want)
		}
	}
}

// waitEsplora polls a path until check accepts its body (a failure
// guard, not a speed assertion).
func waitEsplora(t *testing.T, url string, check func([]byte) bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		code, body := esploraGet(t, url)
		if code == http.StatusOK && check(body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached the expected state; last %d %s", url, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// esploraFactsOf computes what the script checks, from the generator's
// chain and ledger.
//
// Long: the facts of blocks, addresses and txs are gathered in one pass
// over the chain, each a few lines.
func esploraFactsOf(t *testing.T, st *demoStack, pending []*wire.MsgTx) *esploraFacts {
	t.Helper()
	g := st.g
	led := g.Ledger()
	blocks := g.Blocks()
	tipH, tipHash := g.Tip()
	f := &esploraFacts{TipHeight: tipH, TipHash: tipHash.String(), MempoolSpace: true}
	outs := map[wire.OutPoint]int64{}
	for _, b := range blocks {
		for _, tx := range b.Transactions {
			for i, o := range tx.TxOut {
				outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}] = o.Value
			}
		}
	}
	for h := tipH; h >= 0 && h > tipH-15; h-- {
		f.Page = append(f.Page, blocks[h].BlockHash().String())
	}
	for _, h := range []int32{1, tipH / 2, tipH} {
		b := blocks[h]
		var hdr, raw bytes.Buffer
		if err := b.Header.Serialize(&hdr); err != nil {
			t.Fatal(err)
		}
		if err := b.Serialize(&raw); err != nil {
			t.Fatal(err)
		}
		bf := esploraBlockFacts{Height: h, Hash: b.BlockHash().String(), Header: hex.EncodeToString(hdr.Bytes()), RawLen: raw.Len()}
		for i, tx := range b.Transactions {
			bf.Txids = append(bf.Txids, tx.TxHash().String())
			for _, o := range tx.TxOut {
				if i == 0 {
					bf.Reward += o.Value
				} else {
					bf.TotalFees -= o.Value
				}
			}
			for _, in := range tx.TxIn {
				if i > 0 {
					bf.TotalFees += outs[in.PreviousOutPoint]
				}
			}
		}
		if h < tipH {
			bf.Next = blocks[h+1].BlockHash().String()
		}
		f.Blocks = append(f.Blocks, bf)
	}
	var addrs []string
	for _, k := range []chaingen.ScriptKind{chaingen.P2WPKH, chaingen.P2SHP2WPKH, chaingen.P2WSHMultisig, chaingen.P2TR} {
		a, err := g.Address(k, chaingen.DemoIndex)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	addrs = append(addrs, mempoolAddr(t, g, chaingen.P2TR, 1), mempoolAddr(t, g, chaingen.P2WPKH, 2))
	for _, a := range addrs {
		f.Addresses = append(f.Addresses, addressFacts(t, g, pending, a))
	}
	busy := f.Addresses[0]
	for _, a := range f.Addresses {
		if len(a.ChainTxids) > len(busy.ChainTxids) {
			busy = a
		}
	}
	if len(busy.ChainTxids) > 25 {
		f.AfterAddr, f.AfterTxid = busy.Address, busy.ChainTxids[24]
		f.AfterTxids = busy.ChainTxids[25:min(50, len(busy.ChainTxids))]
	}
	for _, tx := range pending {
		f.Pending = append(f.Pending, tx.TxHash().String())
	}
	f.PendingFees, f.PendingWeight = pendingFeesAndWeight(t, g, pending)
	for i, tx := range pending {
		// The fee of tx alone: the txs before it are its possible parents.
		before, _ := pendingFeesAndWeight(t, g, pending[:i])
		all, _ := pendingFeesAndWeight(t, g, pending[:i+1])
		f.PendingTxs = append(f.PendingTxs, pendingTxFacts{Txid: tx.TxHash().String(), Fee: all - before,
			Weight: int64(tx.SerializeSizeStripped()*3 + tx.SerializeSize()), Sigops: btcdSigOpCost(t, g, tx, pending[:i])})
	}
	// Txs: the last tx of a few blocks (coinbases included) with spends.
	spends := map[wire.OutPoint]string{}
	for _, b := range blocks[1:] {
		for _, tx := range b.Transactions {
			for _, in := range tx.TxIn {
				spends[in.PreviousOutPoint] = tx.TxHash().String()
			}
		}
	}
	for _, tx := range pending {
		for _, in := range tx.TxIn {
			spends[in.PreviousOutPoint] = tx.TxHash().String()
		}
	}
	for _, h := range []int32{1, tipH / 3, tipH / 2, tipH - 1, tipH} {
		b := blocks[h]
		for _, pos := range []int{0, len(b.Transactions) - 1} {
			tx := b.Transactions[pos]
			id := tx.TxHash().String()
			var raw bytes.Buffer
			if err := tx.Serialize(&raw); err != nil {
				t.Fatal(err)
			}
			info := led.Txs[id]
			tf := esploraTxFacts{Txid: id, Hex: hex.EncodeToString(raw.Bytes()), Fee: info.Fee, Height: h,
				BlockHash: b.BlockHash().String(), BlockTime: b.Header.Timestamp.Unix(), Pos: pos,
				Vin: len(tx.TxIn), Vout: len(tx.TxOut)}
			for n := range tx.TxOut {
				tf.Outspends = append(tf.Outspends, spends[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}])
			}
			f.Txs = append(f.Txs, tf)
		}
	}
	return f
}

// esploraPrereqs finds node and the pinned mempool.js, failing (never
// skipping) with what to run when they are missing.
func esploraPrereqs(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (Node.js 20) is not installed: the Esplora client test needs it; run `make deps`")
	}
	data, err := os.ReadFile(mempoolJSPackage)
	if err != nil {
		t.Fatalf("%s is missing (%v): run `make deps` to install the pinned npm packages (npm ci in tools/js)", mempoolJSPackage, err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version != mempoolJSVersion {
		t.Fatalf("@mempool/mempool.js in tools/js/node_modules is %q (%v), want %s: run `make deps`", pkg.Version, err, mempoolJSVersion)
	}
	return node
}

// runEsploraScript runs the mempool.js script and relays its lines.
func runEsploraScript(t *testing.T, node, base string, facts *esploraFacts) {
	t.Helper()
	data, err := json.MarshalIndent(facts, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "esplora-facts.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), esploraClientWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, esploraScript, base, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	last := ""
	if len(lines) > 0 {
		last = lines[len(lines)-1]
	}
	if err != nil || !strings.HasPrefix(last, "done ") {
		t.Fatalf("esplora-client.mjs: %v\n%s\n%s", err, strings.Join(lines, "\n"), stderr.String())
	}
	t.Log(last)
}

// esploraReorg replaces the last two blocks with a longer branch: the old
// tip is off the best chain, its coinbase unknown, the new tip served.
func esploraReorg(t *testing.T, st *demoStack, base string) *chaingen.Generator {
	t.Helper()
	g := st.g
	tipH, oldTip := g.Tip()
	oldCoinbase := g.Blocks()[tipH].Transactions[0].TxHash().String()
	fork, err := g.Fork(tipH-2, "esplora-reorg")
	if err != nil {
		t.Fatal(err)
	}
	if err := fork.Extend(3, 1); err != nil {
		t.Fatal(err)
	}
	submit(t, fork, st.node, tipH-1)
	newH, newTip := fork.Tip()
	waitEsplora(t, base+"/api/blocks/tip/hash", func(b []byte) bool { return string(b) == newTip.String() })
	var status struct {
		InBestChain bool    `json:"in_best_chain"`
		Height      *int    `json:"height"`
		NextBest    *string `json:"next_best"`
	}
	esploraJSON(t, base+"/api/block/"+oldTip.String()+"/status", &status)
	if status.InBestChain || status.Height != nil || status.NextBest != nil {
		t.Fatalf("status of the replaced tip: %+v", status)
	}
	if code, body := esploraGet(t, base+"/api/block/"+oldTip.String()); code != http.StatusNotFound {
		t.Fatalf("the replaced tip: %d %s", code, body)
	}
	if code, body := esploraGet(t, base+"/api/tx/"+oldCoinbase+"/status"); code != 200 || string(body) != `{"confirmed":false}` {
		t.Fatalf("status of the replaced coinbase: %d %s", code, body)
	}
	code, body := esploraGet(t, base+"/api/blocks/tip/height")
	if code != 200 || string(body) != fmt.Sprint(newH) {
		t.Fatalf("tip height after the reorg: %d %s", code, body)
	}
	var blk struct {
		ID     string `json:"id"`
		Height int32  `json:"height"`
	}
	esploraJSON(t, base+"/api/block/"+newTip.String(), &blk)
	if blk.ID != newTip.String() || blk.Height != newH {
		t.Fatalf("new tip: %+v", blk)
	}
	return fork
}

// btcdSigOpCost is tx's sigop cost as btcd's blockchain.GetSigOpCost
// counts it (Core's GetTransactionSigOpCost), over its prevouts.
func btcdSigOpCost(t *testing.T, g *chaingen.Generator, tx *wire.MsgTx, unconfirmed []*wire.MsgTx) int {
	t.Helper()
	prevs, err := g.Prevouts(tx, unconfirmed...)
	if err != nil {
		t.Fatal(err)
	}
	view := blockchain.NewUtxoViewpoint()
	for _, p := range prevs {
		view.Entries()[p.OutPoint] = blockchain.NewUtxoEntry(&wire.TxOut{Value: p.Value, PkScript: p.PkScript}, 1, false)
	}
	n, err := blockchain.GetSigOpCost(btcutil.NewTx(tx), false, view, true, true)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
