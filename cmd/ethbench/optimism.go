package main

// The OP-stack figure (-optimism): the same dev chain indexed twice through
// a JSON-RPC proxy in front of the dev node. In the "Optimism" runs the
// proxy adds recorded OP Mainnet L1 fee fields (l1Fee, l1FeeScalar,
// l1GasPrice, l1GasUsed, and the Ecotone blob scalars) to every receipt the
// node returns, so blockbook decodes, stores and serves them as it would
// from op-geth; in the "Ethereum" runs it re-encodes the same answers
// unchanged, so both pay the same proxy cost and the difference is the
// L1-fee work.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

var (
	optimism   = flag.Bool("optimism", false, "measure the OP-stack figure instead: the chain indexed with and without recorded L1 fee fields in its receipts")
	opRounds   = flag.Int("oprounds", 2, "with -optimism: alternating rounds of an Ethereum and an Optimism run")
	opFixtures = flag.String("opfixtures", "bchain/coins/eth/testdata/chains", "with -optimism: where the recorded OP Mainnet receipts are")
)

// optimismMain finds (or generates) the chain as run does and measures it.
func optimismMain(bin string, txs, accounts, perBlock, workers int, cache string) error {
	if accounts < 3 || perBlock < 3 || txs < 1 || *opRounds < 1 {
		return fmt.Errorf("need -accounts >= 3, -perblock >= 3, -txs >= 1, -oprounds >= 1")
	}
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(dir, "openexplorer-blockbook", "bench")
	}
	dir := filepath.Join(cache, fmt.Sprintf("eth-%d-%d-%d", txs, accounts, perBlock))
	exp, _, err := loadOrGenerate(context.Background(), dir, txs, accounts, perBlock)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	return runOptimism(bin, workers, *opRounds, dir, *opFixtures, exp)
}

// recordedL1 reads the L1 fee fields of the recorded OP Mainnet receipts
// (bchain/coins/eth/testdata/chains): one from before Ecotone, one after.
func recordedL1(dir string) ([]map[string]json.RawMessage, error) {
	var out []map[string]json.RawMessage
	for _, name := range []string{"optimism_receipt_l1fee.json", "optimism_receipt_ecotone.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var f struct {
			Node map[string]json.RawMessage `json:"node"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		fields := map[string]json.RawMessage{}
		for k, v := range f.Node {
			if strings.HasPrefix(k, "l1") && k != "l1BlockNumber" {
				fields[k] = v
			}
		}
		if len(fields["l1Fee"]) == 0 {
			return nil, fmt.Errorf("%s: no l1Fee", name)
		}
		out = append(out, fields)
	}
	return out, nil
}

// l1Proxy forwards HTTP JSON-RPC to the node, rewriting receipt answers.
type l1Proxy struct {
	target   string
	inject   atomic.Bool
	recs     []map[string]json.RawMessage
	injected atomic.Int64
	client   http.Client
}

// recFor picks the recorded set a receipt gets, by its tx hash, so that a
// check can tell which one a tx was given.
func (p *l1Proxy) recFor(txHash string) map[string]json.RawMessage {
	if txHash == "" {
		return p.recs[0]
	}
	return p.recs[int(txHash[len(txHash)-1])%len(p.recs)]
}

func (p *l1Proxy) rewriteReceipt(raw json.RawMessage) (json.RawMessage, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil || r == nil {
		return raw, err
	}
	if p.inject.Load() {
		var h string
		_ = json.Unmarshal(r["transactionHash"], &h)
		for k, v := range p.recFor(h) {
			r[k] = v
		}
		p.injected.Add(1)
	}
	return json.Marshal(r)
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// rewrite changes the results of receipt calls in one answer.
func (p *l1Proxy) rewrite(method string, m *rpcMsg) error {
	switch method {
	case "eth_getTransactionReceipt":
		r, err := p.rewriteReceipt(m.Result)
		m.Result = r
		return err
	case "eth_getBlockReceipts":
		var rs []json.RawMessage
		if err := json.Unmarshal(m.Result, &rs); err != nil || rs == nil {
			return err
		}
		for i := range rs {
			var err error
			if rs[i], err = p.rewriteReceipt(rs[i]); err != nil {
				return err
			}
		}
		out, err := json.Marshal(rs)
		m.Result = out
		return err
	}
	return nil
}

func (p *l1Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := p.client.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		answer, err = p.rewriteAnswer(body, answer)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// rewriteAnswer pairs a single or batch answer with its requests by id.
func (p *l1Proxy) rewriteAnswer(request, answer []byte) ([]byte, error) {
	batch := len(bytes.TrimSpace(request)) > 0 && bytes.TrimSpace(request)[0] == '['
	var reqs, msgs []rpcMsg
	if batch {
		if json.Unmarshal(request, &reqs) != nil || json.Unmarshal(answer, &msgs) != nil {
			return answer, nil // not ours to judge: pass the node's answer on
		}
	} else {
		var q, m rpcMsg
		if json.Unmarshal(request, &q) != nil || json.Unmarshal(answer, &m) != nil {
			return answer, nil
		}
		reqs, msgs = []rpcMsg{q}, []rpcMsg{m}
	}
	methods := map[string]string{}
	for _, q := range reqs {
		methods[string(q.ID)] = q.Method
	}
	for i := range msgs {
		if len(msgs[i].Result) == 0 {
			continue
		}
		if err := p.rewrite(methods[string(msgs[i].ID)], &msgs[i]); err != nil {
			return nil, err
		}
	}
	if batch {
		return json.Marshal(msgs)
	}
	return json.Marshal(msgs[0])
}

type opRun struct {
	name      string
	elapsed   time.Duration
	cpu       time.Duration
	hwm, size int64
	injected  int64
}

// runOptimism measures indexing with and without the replayed L1 fee
// fields, alternating rounds, and checks a tx's answer in the OP runs.
//
// Long: a benchmark script, its steps in the order they are timed.
func runOptimism(bin string, workers, rounds int, dir, fixtures string, exp *expect) error {
	ctx := context.Background()
	recs, err := recordedL1(fixtures)
	if err != nil {
		return fmt.Errorf("recorded OP receipts: %w", err)
	}
	node, err := gethdev.Start(ctx, gethdev.Options{Dir: dir})
	if err != nil {
		return err
	}
	defer node.Stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	proxy := &l1Proxy{target: node.HTTPURL, recs: recs}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)  //nolint:errcheck // ends with Close below
	defer srv.Close() //nolint:errcheck // the proxy is done when the runs are
	cfg := map[string]any{"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": "http://" + ln.Addr().String(), "rpc_url_ws": node.WSURL,
		"rpc_timeout": 25, "block_addresses_to_keep": 300, "eip1559Fees": true, "processInternalTransactions": true}
	var runs []opRun
	for round := 0; round < rounds; round++ {
		for _, op := range []bool{false, true} {
			proxy.inject.Store(op)
			proxy.injected.Store(0)
			r, err := opIndex(ctx, bin, workers, cfg, exp, op, proxy)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
	}
	fmt.Printf("OP-stack receipts (-optimism): %d blocks, %d txs; blockbook -workers=%d through a JSON-RPC proxy re-encoding every receipt, which in the Optimism runs adds recorded OP Mainnet L1 fee fields\n",
		exp.Height+1, exp.Txs, workers)
	for _, r := range runs {
		fmt.Printf("  %-9s time to in-sync %.2f s, blockbook CPU %.2f s, peak RSS %.1f MB, index %.1f MB, receipts rewritten with L1 fields %d\n",
			r.name, r.elapsed.Seconds(), r.cpu.Seconds(), float64(r.hwm)/(1<<20), float64(r.size)/(1<<20), r.injected)
	}
	return nil
}

func opIndex(ctx context.Context, bin string, workers int, cfg map[string]any, exp *expect, op bool, proxy *l1Proxy) (r opRun, err error) {
	r.name = "Ethereum"
	if op {
		r.name = "Optimism"
	}
	work, err := os.MkdirTemp("", "ethbench-op-")
	if err != nil {
		return r, err
	}
	defer func() {
		if err == nil {
			os.RemoveAll(work)
		}
	}()
	start := time.Now()
	p, err := benchproc.Start(ctx, benchproc.Options{Bin: bin, Work: work, Config: cfg, Workers: workers, Height: uint32(exp.Height), Timeout: 30 * time.Minute})
	r.elapsed = time.Since(start)
	if err != nil {
		return r, err
	}
	_, r.hwm = benchproc.Mem(p.Pid())
	r.cpu = cpuOf(p.Pid())
	checkErr := checkL1Answer(p.Public, exp, op, proxy)
	p.Stop()
	r.size, r.injected = benchproc.DirSize(filepath.Join(work, "index")), proxy.injected.Load()
	if checkErr != nil {
		return r, fmt.Errorf("%s run: %w (log %s)", r.name, checkErr, p.LogPath)
	}
	return r, nil
}

// checkL1Answer reads one mined tx of the first address with txs: in the
// Optimism run it must show the recorded L1 fields and count l1Fee in its
// fees, in the Ethereum run show none.
func checkL1Answer(public string, exp *expect, op bool, proxy *l1Proxy) error {
	get := func(path string, v any) error {
		resp, err := http.Get("http://" + public + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(v)
	}
	for _, a := range exp.Addresses {
		var addr api.Address
		if err := get("/api/v2/address/"+a.Addr.Hex()+"?details=txids&pageSize=1", &addr); err != nil {
			return err
		}
		if len(addr.Txids) == 0 {
			continue
		}
		var tx api.Tx
		if err := get("/api/v2/tx/"+addr.Txids[0], &tx); err != nil {
			return err
		}
		es := tx.EthereumSpecific
		if es == nil || es.GasUsed == nil || es.GasPrice == nil {
			return fmt.Errorf("tx %s: no gas fields", tx.Txid)
		}
		fee := new(big.Int).Mul((*big.Int)(es.GasPrice), new(big.Int).SetUint64(*es.GasUsed))
		if !op {
			if es.L1Fee != "" || tx.Fees.String() != fee.String() {
				return fmt.Errorf("tx %s: l1Fee %q fees %s in the Ethereum run", tx.Txid, es.L1Fee, tx.Fees.String())
			}
			return nil
		}
		var want struct {
			L1Fee string `json:"l1Fee"`
		}
		rec := proxy.recFor(tx.Txid)
		_ = json.Unmarshal(rec["l1Fee"], &want.L1Fee)
		l1, ok := new(big.Int).SetString(want.L1Fee, 0)
		if !ok || es.L1Fee.String() != l1.String() || tx.Fees.String() != fee.Add(fee, l1).String() {
			return fmt.Errorf("tx %s: l1Fee %q fees %s, want l1Fee %s fees %s", tx.Txid, es.L1Fee, tx.Fees.String(), l1, fee)
		}
		return nil
	}
	return fmt.Errorf("no address with txs")
}
