package e2e

// Tron served end to end: the program started with a Tron config follows
// the java-tron double (tools/trondouble; no java-tron runs here), and its
// REST and websocket answers must equal the double's own facts: every
// address's txs (computed from the chain's blocks), TRX and TRC-20
// balances, staking (chainExtraData), every tx's chainExtraData and fee;
// then a broadcast tx enters the mempool, and a new block is pushed.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain/coins/tron"
	"github.com/openexplorer/blockbook/tools/trondouble"
)

type tronE2E struct {
	chain *trondouble.Chain
	node  *trondouble.Server
	inst  *instance
}

func startTronE2E(t *testing.T) *tronE2E {
	t.Helper()
	c := trondouble.New(trondouble.Options{Seed: 41, Accounts: 8, Tokens: 2, SolidDepth: 10})
	c.Mine(40, 6)
	s := trondouble.Serve(c)
	t.Cleanup(s.Close)
	cfg := s.Config("Tron")
	cfg["block_addresses_to_keep"], cfg["processInternalTransactions"] = 100, true
	path := writeJSONFile(t, "tron.json", cfg)
	// The pending pool is polled (Tron has no pending-tx subscription):
	// often here, so that a broadcast tx shows soon.
	e := &tronE2E{chain: c, node: s, inst: startInProcess(t, path, t.TempDir(), func(o *app.Options) { o.ResyncMempoolMs = 300 })}
	e.waitTip(t)
	return e
}

func (e *tronE2E) waitTip(t *testing.T) {
	t.Helper()
	tip := e.chain.Tip()
	waitTip(t, e.inst.base, int32(tip.Number), hex.EncodeToString(tip.ID[:]), e.inst.logs)
}

// tronExpectedTxs is each address's mined txs, newest first, from the
// chain's blocks alone (a tx once however many roles it has).
func tronExpectedTxs(c *trondouble.Chain) map[trondouble.Addr][]string {
	out := map[trondouble.Addr][]string{}
	for _, b := range c.Blocks() {
		for _, tx := range b.Txs {
			seen := map[trondouble.Addr]bool{}
			for _, a := range tx.Parties() {
				if !seen[a] {
					seen[a] = true
					out[a] = append(out[a], hex.EncodeToString(tx.ID[:]))
				}
			}
		}
	}
	for a := range out {
		slices.Reverse(out[a])
	}
	return out
}

type tronPayload struct {
	PayloadType string          `json:"payloadType"`
	Payload     json.RawMessage `json:"payload"`
}

// decode requires a Tron payload and reads it into out.
func (p *tronPayload) decode(t *testing.T, what string, out any) {
	t.Helper()
	if p == nil || p.PayloadType != "tron" {
		t.Fatalf("%s: chainExtraData %+v", what, p)
	}
	if err := json.Unmarshal(p.Payload, out); err != nil {
		t.Fatalf("%s: chainExtraData payload: %v", what, err)
	}
}

type tronAddress struct {
	api.Address
	ChainExtraData *tronPayload `json:"chainExtraData"`
}

func TestTronServedMatchesDouble(t *testing.T) {
	e := startTronE2E(t)
	base := e.inst.base + "/api/v2/"
	checked, staking := 0, 0
	for a, want := range tronExpectedTxs(e.chain) {
		addr := tron.EncodeAddress(a[:])
		var got tronAddress
		getJSON(t, base+"address/"+addr+"?details=txids&pageSize=1000", 200, &got)
		if got.Address.Address != addr || !slices.Equal(got.Txids, want) {
			t.Errorf("address %s: %s with %d txids %v, want %d %v", addr, got.Address.Address, len(got.Txids), got.Txids, len(want), want)
		}
		f := e.chain.AccountFacts(a)
		if got.Balance.String() != itoa(max(f.Balance, 0)) {
			t.Errorf("address %s: balance %s, want %d", addr, got.Balance, f.Balance)
		}
		var ex tron.AccountExtra
		got.ChainExtraData.decode(t, "address "+addr, &ex)
		switch si := ex.StakingInfo; {
		case si == nil && (f.FrozenEnergy != 0 || len(f.Votes) > 0):
			t.Errorf("address %s: no stakingInfo, the node has %d staked for energy and %d votes", addr, f.FrozenEnergy, len(f.Votes))
		case si == nil:
		case si.StakedBalanceEnergy != itoa(f.FrozenEnergy) || len(si.Votes) != len(f.Votes):
			t.Errorf("address %s: staked energy %s and votes %v, want %d and %v", addr, si.StakedBalanceEnergy, si.Votes, f.FrozenEnergy, f.Votes)
		case f.FrozenEnergy != 0:
			staking++
		}
		var tok api.Address
		getJSON(t, base+"address/"+addr+"?details=tokenBalances", 200, &tok)
		for _, tk := range tok.Tokens {
			d, err := tron.ParseAddress(tk.Contract)
			if err != nil || tk.Standard != "TRC20" || !strings.HasPrefix(tk.Contract, "T") {
				t.Errorf("address %s: token %+v", addr, tk)
				continue
			}
			if w := f.Tokens[trondouble.Addr(d)]; w == nil || tk.Balance.String() != w.String() {
				t.Errorf("address %s token %s: balance %s, want %v", addr, tk.Contract, tk.Balance, w)
			}
		}
		checked++
	}
	if checked < 8 || staking == 0 {
		t.Fatalf("only %d addresses, %d of them with stakes checked", checked, staking)
	}
	e.checkTxs(t)
	e.checkExplorer(t)
	e.checkTronGoldens(t)
	e.checkTronWallet(t)
	e.checkBlockAndSend(t)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// checkTxs reads every mined tx by both id forms.
func (e *tronE2E) checkTxs(t *testing.T) {
	t.Helper()
	base := e.inst.base + "/api/v2/tx/"
	n := 0
	for _, b := range e.chain.Blocks() {
		for _, tx := range b.Txs {
			id := hex.EncodeToString(tx.ID[:])
			var got struct {
				api.Tx
				ChainExtraData *tronPayload `json:"chainExtraData"`
			}
			prefix := ""
			if n%2 == 1 {
				prefix = "0x"
			}
			getJSON(t, base+prefix+id, 200, &got)
			n++
			if got.Txid != id || got.BlockHash != hex.EncodeToString(b.ID[:]) || got.BlockHeight != b.Number {
				t.Errorf("tx %s: %s in %s at %d", id, got.Txid, got.BlockHash, got.BlockHeight)
			}
			if len(got.Vin) != 1 || len(got.Vin[0].Addresses) != 1 || got.Vin[0].Addresses[0] != tron.EncodeAddress(tx.Owner[:]) {
				t.Errorf("tx %s: vin %+v", id, got.Vin)
			}
			if got.Fees.String() != itoa(tx.Fee) {
				t.Errorf("tx %s: fees %s, want %d", id, got.Fees, tx.Fee)
			}
			var ex tron.ChainExtra
			got.ChainExtraData.decode(t, "tx "+id, &ex)
			if ex.ContractType != tx.Kind || (tx.Fee > 0 && ex.TotalFee != itoa(tx.Fee)) {
				t.Errorf("tx %s: chainExtraData %+v, want %s fee %d", id, ex, tx.Kind, tx.Fee)
			}
			if tx.Kind == trondouble.KindTRC10 && ex.AssetIssueID != trondouble.TRC10Asset {
				t.Errorf("tx %s: TRC-10 asset %q", id, ex.AssetIssueID)
			}
			if tx.Token != nil {
				checkTronCallData(t, id, got.EthereumSpecific, tx)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d txs", n)
	}
}

// checkTronCallData: a TRC-20 transfer call is decoded (from the standard
// signatures, no network) with its recipient as a Tron address.
func checkTronCallData(t *testing.T, id string, es *api.EthereumSpecific, tx *trondouble.Tx) {
	t.Helper()
	want := &api.EthereumParsedInputData{MethodID: "0xa9059cbb", Name: "Transfer", Function: "transfer(address, uint256)", Params: []api.EthereumParsedInputParam{
		{Type: "address", Values: []string{tron.EncodeAddress(tx.TokenTo[:])}},
		{Type: "uint256", Values: []string{itoa(tx.Amount)}},
	}}
	if es == nil || !reflect.DeepEqual(es.ParsedData, want) {
		var got any
		if es != nil {
			got = es.ParsedData
		}
		t.Errorf("tx %s: parsedData %+v, want %+v", id, got, want)
	}
}

// checkBlockAndSend: a block answer, the websocket, a broadcast tx in the
// mempool and a new block pushed to a subscriber.
func (e *tronE2E) checkBlockAndSend(t *testing.T) {
	t.Helper()
	base := e.inst.base + "/api/v2/"
	tip := e.chain.Tip()
	var blk api.Block
	getJSON(t, base+"block/"+itoa(tip.Number), 200, &blk)
	if blk.Hash != hex.EncodeToString(tip.ID[:]) || len(blk.Txs) != len(tip.Txs) {
		t.Errorf("block %d: %s with %d txs", tip.Number, blk.Hash, len(blk.Txs))
	}
	ws := newWS(t, e.inst.base)
	var info struct {
		BestHash string `json:"bestHash"`
		Shortcut string `json:"shortcut"`
	}
	ws.ok("getInfo", map[string]any{}, &info)
	if info.BestHash != blk.Hash || info.Shortcut != "TRX" {
		t.Errorf("getInfo %+v", info)
	}
	owner, to := e.chain.Accounts[0], e.chain.Accounts[1]
	var acct tronAddress
	ws.ok("getAccountInfo", map[string]any{"descriptor": tron.EncodeAddress(owner[:]), "details": "txs", "pageSize": 3}, &acct)
	if acct.ChainExtraData == nil || len(acct.Transactions) == 0 || acct.Transactions[0].Txid == "" || strings.HasPrefix(acct.Transactions[0].Txid, "0x") {
		t.Errorf("getAccountInfo: %+v", acct)
	}
	ws.fails("getAccountInfo", map[string]any{"descriptor": "Tnotanaddress", "details": "basic"}, "Invalid address")
	sub := ws.ok("subscribeNewBlock", map[string]any{}, nil)
	addrSub := ws.ok("subscribeAddresses", map[string]any{"addresses": []string{tron.EncodeAddress(to[:])}}, nil)

	// A refused broadcast is a 400 with the node's reason; an accepted one
	// answers its txid and enters the mempool.
	var bad api.Error
	getJSON(t, base+"sendtx/"+hex.EncodeToString([]byte("junk")), 400, &bad)
	raw := trondouble.Broadcast{Owner: owner, To: to, Amount: 7}.Raw()
	want := sha256.Sum256(raw)
	var res api.Result
	getJSON(t, base+"sendtx/"+hex.EncodeToString(raw), 200, &res)
	if res.Result != hex.EncodeToString(want[:]) {
		t.Fatalf("sendtx: %+v", res)
	}
	var note struct {
		Address string `json:"address"`
		Tx      api.Tx `json:"tx"`
	}
	ws.notification(addrSub, &note)
	if note.Tx.Txid != res.Result || note.Tx.BlockHeight != -1 {
		t.Errorf("address notification %+v", note)
	}
	waitStatus(t, e.inst.base, func(s *api.SystemInfo) bool { return s.Blockbook.MempoolSize == 1 })
	var ptx api.Tx
	getJSON(t, base+"tx/"+res.Result, 200, &ptx)
	if ptx.BlockHeight != -1 || ptx.Value.String() != "7" {
		t.Errorf("pending tx %+v", ptx)
	}

	e.chain.Mine(1, 3)
	e.waitTip(t)
	var bn struct {
		Height int64  `json:"height"`
		Hash   string `json:"hash"`
	}
	ws.notification(sub, &bn)
	if nt := e.chain.Tip(); bn.Height != nt.Number || bn.Hash != hex.EncodeToString(nt.ID[:]) {
		t.Errorf("block notification %+v", bn)
	}
	waitStatus(t, e.inst.base, func(s *api.SystemInfo) bool { return s.Blockbook.MempoolSize == 0 })
	getJSON(t, base+"tx/"+res.Result, 200, &ptx)
	if ptx.BlockHeight != e.chain.Tip().Number {
		t.Errorf("mined broadcast tx at %d", ptx.BlockHeight)
	}
}

// checkExplorer: the explorer's pages of a Tron address, tx and block show
// Tron's forms (base58 addresses, ids without 0x, TRX).
func (e *tronE2E) checkExplorer(t *testing.T) {
	t.Helper()
	a, kinds := e.tronSample()
	addr := tron.EncodeAddress(a[:])
	tip := e.chain.Tip()
	for path, want := range map[string][]string{
		"/address/" + addr:             {addr, "TRX", "Tron: contract, resources and staking", "stakingInfo.unclaimedReward"},
		"/tx/" + kinds["TriggerSmart"]: {kinds["TriggerSmart"], "TRX", "energyUsageTotal", "TriggerSmartContract"},
		"/block/" + itoa(tip.Number):   {hex.EncodeToString(tip.ID[:])},
		"/":                            {"Tron"},
	} {
		resp, err := httpClient.Get(e.inst.base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: status %d", path, resp.StatusCode)
		}
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s: no %q in the page", path, w)
			}
		}
		if strings.Contains(string(body), "0x"+hex.EncodeToString(tip.ID[:])) {
			t.Errorf("%s: a 0x id", path)
		}
	}
}

// writeJSONFile writes v as JSON to a file of the test's temporary
// directory and returns its path.
func writeJSONFile(t *testing.T, name string, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
