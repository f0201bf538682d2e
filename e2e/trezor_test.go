package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The real wallet client against our server: tools/js/trezor-client.mjs
// drives /websocket through @trezor/blockchain-link (the library inside
// Trezor Suite) and checks what its methods return against facts this test
// computes from the generator's own ledger. When the script needs a block
// mined it prints "need-block <txid>..."; the test mines it and answers
// "block <height> <hash>".

const (
	trezorScript      = "../tools/js/trezor-client.mjs"
	trezorLinkPackage = "../tools/js/node_modules/@trezor/blockchain-link/package.json"
	trezorLinkVersion = "2.6.2"
	// trezorPingTimeout is the library's keep-alive interval (pingTimeout);
	// Suite uses 50 s, the script waits past a few short ones.
	trezorPingTimeout = 2 * time.Second
	// trezorGuard bounds the whole script run (a failure guard; the script
	// has its own 90 s guard on every wait).
	trezorGuard = 10 * time.Minute
)

// Facts the script checks against. Amounts are decimal strings of satoshi.
type trezorFacts struct {
	PingTimeoutMs int64             `json:"pingTimeoutMs"`
	Info          trezorInfo        `json:"info"`
	BlockHashes   map[string]string `json:"blockHashes"`
	Block         trezorBlock       `json:"block"`
	Accounts      []trezorAccount   `json:"accounts"`
	Unused        string            `json:"unused"`
	Txs           []trezorTx        `json:"txs"`
	FeeTxSize     int               `json:"feeTxSize"`
	Fees          []trezorFee       `json:"fees"`
	Pushes        []trezorPush      `json:"pushes"`
	Filters       trezorFilters     `json:"filters"`
	// XpubAccounts are HD accounts (e2e_trezor_xpub_test.go).
	XpubAccounts []trezorXpubAccount `json:"xpubAccounts"`
}

// trezorFilters are the block filters the REST endpoint (checked on its own
// in e2e_filters_test.go) gives for the last blocks.
type trezorFilters struct {
	P         int      `json:"P"`
	M         uint64   `json:"M"`
	ZeroedKey bool     `json:"zeroedKey"`
	TipHash   string   `json:"tipHash"`
	TipFilter string   `json:"tipFilter"`
	BestKnown string   `json:"bestKnown"` // the batch answers the blocks after it
	Batch     []string `json:"batch"`     // "height:hash:filter"
}

type trezorInfo struct {
	Name      string `json:"name"`
	Shortcut  string `json:"shortcut"`
	Network   string `json:"network"`
	Testnet   bool   `json:"testnet"`
	Decimals  int    `json:"decimals"`
	TipHeight int32  `json:"tipHeight"`
	TipHash   string `json:"tipHash"`
	TipTime   int64  `json:"tipTime"`
}

type trezorBlock struct {
	Height int32    `json:"height"`
	Hash   string   `json:"hash"`
	Prev   string   `json:"prev"`
	Time   int64    `json:"time"`
	Txids  []string `json:"txids"`
}

type trezorAccount struct {
	Kind     string               `json:"kind"`
	Address  string               `json:"address"`
	Balance  string               `json:"balance"`
	Received string               `json:"received"`
	Sent     string               `json:"sent"`
	TxCount  int                  `json:"txCount"`
	Txids    []string             `json:"txids"` // newest first
	Utxos    []trezorUtxo         `json:"utxos"`
	Txs      map[string]*trezorTx `json:"txs"` // every tx of Txids, seen from Address
}

type trezorUtxo struct {
	Txid     string `json:"txid"`
	Vout     uint32 `json:"vout"`
	Value    string `json:"value"`
	Height   int32  `json:"height"`
	Coinbase bool   `json:"coinbase"`
}

// trezorTx describes a mined tx; the "my" fields are relative to one
// address (zero in F.txs).
type trezorTx struct {
	Txid      string `json:"txid,omitempty"`
	Hex       string `json:"hex,omitempty"`
	Height    int32  `json:"height"`
	BlockHash string `json:"blockHash"`
	BlockTime int64  `json:"blockTime"`
	Fee       string `json:"fee"`
	Size      int    `json:"size"`
	VSize     int    `json:"vsize"`
	LockTime  uint32 `json:"lockTime"`
	Ins       int    `json:"ins"`
	Outs      int    `json:"outs"`
	TotalIn   string `json:"totalIn"`
	TotalOut  string `json:"totalOut"`
	MyIns     int    `json:"myIns"`
	MyOuts    int    `json:"myOuts"`
	Sent      string `json:"sent"`
	Received  string `json:"received"`
}

type trezorFee struct {
	Blocks     int    `json:"blocks"`
	FeePerUnit string `json:"feePerUnit"`
}

type trezorPush struct {
	Txid    string         `json:"txid"`
	Hex     string         `json:"hex"`
	Fee     string         `json:"fee"`
	VSize   int            `json:"vsize"`
	Outputs []trezorOutput `json:"outputs"`
}

type trezorOutput struct {
	Address string `json:"address"`
	Value   string `json:"value"`
	Vout    int    `json:"vout"`
}

func TestTrezorClient(t *testing.T) {
	node := trezorPrereqs(t)
	st, accts := startRecentDemoStack(t, func(o *app.Options) { o.EnableSubNewTx = true })
	facts, pushes := trezorFactsOf(t, st)
	facts.XpubAccounts = trezorXpubFacts(t, st, accts)
	data, err := json.MarshalIndent(facts, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	factsPath := filepath.Join(t.TempDir(), "facts.json")
	if err := os.WriteFile(factsPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	runTrezorScript(t, st, node, factsPath, pushes)
}

// startRecentDemoStack is startDemoStackWith on a demo chain, followed by
// the HD account scenario (its pending txs mined too), whose tip is minutes
// old. btcd treats an older tip as "not current" and then keeps mined txs in
// its mempool, which Bitcoin Core never does; with a recent tip the node's
// mempool behaves like production nodes' (see chaingen.DefaultTimeStart).
func startRecentDemoStack(t *testing.T, mod func(*app.Options)) (*demoStack, []*chaingen.HDAccount) {
	t.Helper()
	spec := chaingen.DefaultDemo()
	const step = time.Minute
	start := time.Now().Add(-time.Duration(spec.Blocks+hdScenarioBlocks+1) * step)
	g := chaingen.New(&chaincfg.RegressionNetParams, "e2e", chaingen.WithTimestamps(start, step))
	if err := g.Demo(spec); err != nil {
		t.Fatal(err)
	}
	accts := trezorHDChain(t, g)
	st := &demoStack{node: startNode(t), g: g, dataDir: t.TempDir()}
	submit(t, st.g, st.node, 1)
	st.cfg = writeConfig(t, st.node, wsFilterConfig)
	st.inst = startInProcess(t, st.cfg, st.dataDir, mod)
	h, hash := st.g.Tip()
	waitTip(t, st.inst.base, h, hash.String(), st.inst.logs)
	return st, accts
}

// trezorPrereqs finds node and the pinned npm packages, failing (never
// skipping) with what to run when they are missing.
func trezorPrereqs(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (Node.js 20) is not installed: the wallet-client test needs it; run `make deps`")
	}
	data, err := os.ReadFile(trezorLinkPackage)
	if err != nil {
		t.Fatalf("%s is missing (%v): run `make deps` to install the pinned npm packages (npm ci in tools/js)", trezorLinkPackage, err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version != trezorLinkVersion {
		t.Fatalf("@trezor/blockchain-link in tools/js/node_modules is %q (%v), want %s: run `make deps`", pkg.Version, err, trezorLinkVersion)
	}
	return node
}

func trezorFactsOf(t *testing.T, st *demoStack) (*trezorFacts, map[string]*wire.MsgTx) {
	t.Helper()
	g := st.g
	led := g.Ledger()
	blocks := g.Blocks()
	tipH, tipHash := g.Tip()
	f := &trezorFacts{
		PingTimeoutMs: trezorPingTimeout.Milliseconds(),
		// The config names no "network", so the API reports the shortcut,
		// as Blockbook does.
		Info: trezorInfo{Name: "Regtest", Shortcut: "rBTC", Network: "rBTC", Testnet: true, Decimals: 8,
			TipHeight: tipH, TipHash: tipHash.String(), TipTime: blocks[tipH].Header.Timestamp.Unix()},
		BlockHashes: map[string]string{},
		FeeTxSize:   250,
	}
	for _, h := range []int32{1, tipH / 2, tipH} {
		f.BlockHashes[strconv.Itoa(int(h))] = blocks[h].BlockHash().String()
	}

	// Accounts: the demo address of each addressed script kind, plus the
	// busiest address of the chain (paging over many pages).
	var addrs []string
	kinds := map[string]string{}
	for _, k := range []chaingen.ScriptKind{chaingen.P2PKH, chaingen.P2WPKH, chaingen.P2SHP2WPKH, chaingen.P2WSHMultisig, chaingen.P2TR} {
		a, err := g.Address(k, chaingen.DemoIndex)
		if err != nil {
			t.Fatal(err)
		}
		addrs, kinds[a] = append(addrs, a), k.String()
	}
	busiest := ""
	for a, al := range led.Addresses {
		if b := led.Addresses[busiest]; b == nil || al.TxCount() > b.TxCount() || (al.TxCount() == b.TxCount() && a < busiest) {
			busiest = a
		}
	}
	if _, dup := kinds[busiest]; !dup {
		addrs, kinds[busiest] = append(addrs, busiest), "busiest"
	}
	views := trezorTxViews(t, st, addrs)
	for _, a := range addrs {
		al := led.Addresses[a]
		if al == nil || al.TxCount() < 2 {
			t.Fatalf("the demo chain no longer gives %s %s a history (ledger %+v)", kinds[a], a, al)
		}
		acc := trezorAccount{Kind: kinds[a], Address: a, Balance: fmt.Sprint(al.Balance), Received: fmt.Sprint(al.Received),
			Sent: fmt.Sprint(al.Sent), TxCount: al.TxCount(), Txids: al.Txids, Utxos: []trezorUtxo{}, Txs: views[a]}
		for _, u := range al.Utxos {
			acc.Utxos = append(acc.Utxos, trezorUtxo{Txid: u.Txid, Vout: u.Vout, Value: fmt.Sprint(u.Value), Height: u.Height, Coinbase: u.Coinbase})
		}
		if len(acc.Txs) != acc.TxCount {
			t.Fatalf("%s: replay found %d txs, ledger %d", a, len(acc.Txs), acc.TxCount)
		}
		f.Accounts = append(f.Accounts, acc)
	}
	busy := f.Accounts[slices.IndexFunc(f.Accounts, func(a trezorAccount) bool { return a.Address == busiest })]
	if busy.TxCount < 10 {
		t.Fatalf("busiest address %s has only %d txs", busiest, busy.TxCount)
	}
	unused, err := g.Address(chaingen.P2WPKH, 9300)
	if err != nil {
		t.Fatal(err)
	}
	f.Unused = unused

	// Two txs in full: the newest spend of the P2WPKH demo address and a
	// coinbase; and the block holding the first.
	spend := f.Accounts[1].Txids[0]
	coinbase := ""
	for _, id := range busy.Txids {
		if led.Txs[id].Position == 0 {
			coinbase = id
			break
		}
	}
	if coinbase == "" || led.Txs[spend].Position == 0 {
		t.Fatalf("demo chain: want a spend (%s) and a coinbase (%q)", spend, coinbase)
	}
	for _, id := range []string{spend, coinbase} {
		info := led.Txs[id]
		tx := blocks[info.Height].Transactions[info.Position]
		full := *trezorTxFacts(t, st, info.Height, tx)
		full.Txid, full.Hex = id, hexOf(t, tx)
		f.Txs = append(f.Txs, full)
	}
	bh := led.Txs[spend].Height
	f.Block = trezorBlock{Height: bh, Hash: blocks[bh].BlockHash().String(), Prev: blocks[bh].Header.PrevBlock.String(),
		Time: blocks[bh].Header.Timestamp.Unix()}
	for _, tx := range blocks[bh].Transactions {
		f.Block.Txids = append(f.Block.Txids, tx.TxHash().String())
	}

	f.Fees = trezorFees(t, st, []int{1, 2, 6, 25})

	// Txs for the script to push: P0 pays a fresh P2WPKH (subscribed as an
	// account) and a fresh P2TR (subscribed as an address); P1 pays the
	// P2WPKH again.
	x, err := g.Address(chaingen.P2WPKH, 9301)
	if err != nil {
		t.Fatal(err)
	}
	y, err := g.Address(chaingen.P2TR, 9302)
	if err != nil {
		t.Fatal(err)
	}
	pushes := map[string]*wire.MsgTx{}
	for _, outs := range [][]chaingen.Output{{{Address: x, Value: 1_234_567}, {Address: y, Value: 765_432}}, {{Address: x, Value: 50_000}}} {
		tx, err := g.CreatePayment(outs, 5)
		if err != nil {
			t.Fatal(err)
		}
		prevs, err := g.Prevouts(tx)
		if err != nil {
			t.Fatal(err)
		}
		var in, out int64
		for _, p := range prevs {
			in += p.Value
		}
		for _, o := range tx.TxOut {
			out += o.Value
		}
		p := trezorPush{Txid: tx.TxHash().String(), Hex: hexOf(t, tx), Fee: fmt.Sprint(in - out), VSize: vsize(tx)}
		for _, o := range outs {
			vout := slices.IndexFunc(tx.TxOut, func(to *wire.TxOut) bool {
				return chaingen.ExplorerAddress(to.PkScript, g.Params()) == o.Address && to.Value == o.Value
			})
			p.Outputs = append(p.Outputs, trezorOutput{Address: o.Address, Value: fmt.Sprint(o.Value), Vout: vout})
		}
		pushes[p.Txid] = tx
		f.Pushes = append(f.Pushes, p)
	}
	f.Filters = trezorFiltersOf(t, st.inst.base, tipH)
	return f, pushes
}

func trezorFiltersOf(t *testing.T, base string, tip int32) trezorFilters {
	t.Helper()
	var ans struct {
		P            int    `json:"P"`
		M            uint64 `json:"M"`
		ZeroedKey    bool   `json:"zeroedKey"`
		BlockFilters map[string]struct {
			BlockHash string `json:"blockHash"`
			Filter    string `json:"filter"`
		} `json:"blockFilters"`
	}
	getJSON(t, base+"/api/v2/block-filters/?scriptType=taproot-noordinals&lastN=4", 200, &ans)
	f := trezorFilters{P: ans.P, M: ans.M, ZeroedKey: ans.ZeroedKey}
	for h := tip - 3; h <= tip; h++ {
		bf, ok := ans.BlockFilters[strconv.Itoa(int(h))]
		if !ok || bf.BlockHash == "" {
			t.Fatalf("block-filters has no block %d: %+v", h, ans)
		}
		switch h {
		case tip - 3:
			f.BestKnown = bf.BlockHash
		default:
			f.Batch = append(f.Batch, fmt.Sprintf("%d:%s:%s", h, bf.BlockHash, bf.Filter))
		}
		if h == tip {
			f.TipHash, f.TipFilter = bf.BlockHash, bf.Filter
		}
	}
	if f.TipFilter == "" {
		t.Fatalf("the tip block has no taproot filter; the checks would be weak: %+v", ans)
	}
	return f
}

// trezorTxViews replays the chain and describes every tx touching one of
// addrs as seen from that address: own inputs and outputs and their sums.
func trezorTxViews(t *testing.T, st *demoStack, addrs []string) map[string]map[string]*trezorTx {
	t.Helper()
	type prevout struct {
		addr  string
		value int64
	}
	want := map[string]bool{}
	views := map[string]map[string]*trezorTx{}
	for _, a := range addrs {
		want[a], views[a] = true, map[string]*trezorTx{}
	}
	params := st.g.Params()
	prev := map[wire.OutPoint]prevout{}
	for h, b := range st.g.Blocks() {
		if h == 0 {
			continue // genesis outputs are unspendable
		}
		for pos, tx := range b.Transactions {
			hash := tx.TxHash()
			sent, recv := map[string]int64{}, map[string]int64{}
			ins, outs := map[string]int{}, map[string]int{}
			if pos > 0 {
				for _, in := range tx.TxIn {
					if p := prev[in.PreviousOutPoint]; want[p.addr] {
						sent[p.addr] += p.value
						ins[p.addr]++
					}
				}
			}
			for i, o := range tx.TxOut {
				a := chaingen.ExplorerAddress(o.PkScript, params)
				prev[wire.OutPoint{Hash: hash, Index: uint32(i)}] = prevout{a, o.Value}
				if want[a] {
					recv[a] += o.Value
					outs[a]++
				}
			}
			var touched *trezorTx
			for a := range want {
				if ins[a] == 0 && outs[a] == 0 {
					continue
				}
				if touched == nil {
					touched = trezorTxFacts(t, st, int32(h), tx)
				}
				v := *touched
				v.MyIns, v.MyOuts, v.Sent, v.Received = ins[a], outs[a], fmt.Sprint(sent[a]), fmt.Sprint(recv[a])
				views[a][hash.String()] = &v
			}
		}
	}
	return views
}

// trezorTxFacts describes a mined tx (without the per-address fields).
func trezorTxFacts(t *testing.T, st *demoStack, height int32, tx *wire.MsgTx) *trezorTx {
	t.Helper()
	blk := st.g.Blocks()[height]
	f := &trezorTx{Height: height, BlockHash: blk.BlockHash().String(), BlockTime: blk.Header.Timestamp.Unix(),
		Size: tx.SerializeSize(), VSize: vsize(tx), LockTime: tx.LockTime, Ins: len(tx.TxIn), Outs: len(tx.TxOut),
		Sent: "0", Received: "0"}
	var in, out int64
	for _, o := range tx.TxOut {
		out += o.Value
	}
	if !isCoinbase(tx) {
		prevs, err := st.g.Prevouts(tx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prevs {
			in += p.Value
		}
	}
	f.TotalIn, f.TotalOut, f.Fee = fmt.Sprint(in), fmt.Sprint(out), "0"
	if in > 0 {
		f.Fee = fmt.Sprint(in - out)
	}
	return f
}

func isCoinbase(tx *wire.MsgTx) bool {
	return len(tx.TxIn) == 1 && tx.TxIn[0].PreviousOutPoint.Index == wire.MaxPrevOutIndex &&
		tx.TxIn[0].PreviousOutPoint.Hash == chainhash.Hash{}
}

// vsize is BIP141's virtual size: weight (stripped×3 + total) / 4, rounded up.
func vsize(tx *wire.MsgTx) int {
	return (tx.SerializeSizeStripped()*3 + tx.SerializeSize() + 3) / 4
}

// trezorFees asks the node what a fee estimate should be: its estimatefee
// answer in satoshi per 1000 vbytes, or its relay fee when it has none.
func trezorFees(t *testing.T, st *demoStack, blocks []int) []trezorFee {
	t.Helper()
	ctx := context.Background()
	var info struct {
		RelayFee float64 `json:"relayfee"`
	}
	if err := st.node.CallResult(ctx, &info, "getinfo"); err != nil {
		t.Fatal(err)
	}
	var out []trezorFee
	for _, b := range blocks {
		rate := info.RelayFee
		var est float64
		if err := st.node.CallResult(ctx, &est, "estimatefee", b); err == nil && est > 0 {
			rate = est
		}
		out = append(out, trezorFee{Blocks: b, FeePerUnit: strconv.FormatInt(int64(rate*1e8+0.5), 10)})
	}
	return out
}

// runTrezorScript runs the script, mining blocks when it asks, and requires
// it to finish with its "done" line.
func runTrezorScript(t *testing.T, st *demoStack, node, factsPath string, pushes map[string]*wire.MsgTx) {
	t.Helper()
	runClientScript(t, node, trezorScript, st.inst.base, factsPath, st.inst.logs, func(line string) (string, bool) {
		if strings.HasPrefix(line, "need-block") {
			return trezorMine(t, st, pushes, strings.Fields(line)[1:]), true
		}
		return "", false
	})
}

// runClientScript runs a real-client script (node script base facts),
// logging its lines and answering those answer handles on its stdin, and
// requires it to finish with its "done" line.
func runClientScript(t *testing.T, node, script, base, factsPath string, logs fmt.Stringer, answer func(line string) (string, bool)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), trezorGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, base, factsPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %s: %v", node, script, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var out []string
	done := ""
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		out = append(out, line)
		t.Log(line)
		if reply, ok := answer(line); ok {
			if _, err := fmt.Fprintln(stdin, reply); err != nil {
				t.Errorf("answering the client: %v", err)
			}
		} else if strings.HasPrefix(line, "done ") {
			done = line
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the script did not finish within %v (failure guard); last output:\n%s\nstderr:\n%s", trezorGuard, tail(strings.Join(out, "\n"), 20), tail(stderr.String(), 30))
	}
	if err != nil || done == "" {
		t.Fatalf("%s failed (%v) against our server; last output:\n%s\nstderr:\n%s\nserver log:\n%s",
			script, err, tail(strings.Join(out, "\n"), 20), tail(stderr.String(), 30), tail(logs.String(), 30))
	}
}

// trezorMine mines a block holding the given pushed txs and returns the
// answer line for the script.
func trezorMine(t *testing.T, st *demoStack, pushes map[string]*wire.MsgTx, txids []string) string {
	t.Helper()
	var txs []*wire.MsgTx
	for _, id := range txids {
		tx := pushes[id]
		if tx == nil {
			return "error unknown txid " + id
		}
		txs = append(txs, tx)
	}
	if _, err := st.g.AddBlock(txs...); err != nil {
		return "error " + err.Error()
	}
	submit(t, st.g, st.node, st.g.Height())
	h, hash := st.g.Tip()
	return fmt.Sprintf("block %d %s", h, hash)
}
