package e2e

// The Ethereum-type API end to end: a go-ethereum dev node runs ethgen's
// scenario (every tx type, ERC20/721/1155 tokens, internal and failed
// transfers, creations, a selfdestruct, pending txs), blockbook indexes it
// in-process, and every REST answer is checked against the scenario's
// ledger and the node; then a reorg must be followed.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

type ethE2E struct {
	dev    *gethdev.Node
	ledger *ethgen.Ledger
	inst   *instance
	mesh   string // the Mesh listener's base URL (mesh_eth_test.go)
	// cfgPath is blockbook's blockchaincfg, for restarts.
	cfgPath string
}

func startEthE2E(t *testing.T) *ethE2E {
	t.Helper()
	return startEthE2EWith(t, gethdev.Options{})
}

func startEthE2EWith(t *testing.T, opts gethdev.Options) *ethE2E {
	t.Helper()
	dev, ledger, raw := startEthScenario(t, opts)
	e := startEthMesh(t, dev, raw)
	e.ledger = ledger
	waitStatus(t, e.inst.base, func(s *api.SystemInfo) bool {
		return s.Blockbook.InSyncMempool && s.Blockbook.MempoolSize == len(ledger.Pending)
	})
	return e
}

// startEthMesh starts blockbook with its Mesh listener on dev with the
// blockchaincfg raw and waits until it has indexed dev's head.
func startEthMesh(t *testing.T, dev *gethdev.Node, raw []byte) *ethE2E {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	meshAddr := make(chan string, 1)
	e := &ethE2E{dev: dev, inst: startInProcess(t, cfg, t.TempDir(), withMesh(meshAddr)), cfgPath: cfg}
	select {
	case e.mesh = <-meshAddr:
	case <-time.After(waitFor):
		t.Fatalf("the mesh listener did not start\n%s", e.inst.logs)
	}
	e.waitHead(t)
	return e
}

// startEthScenario starts a geth dev node, plays the ethgen scenario on it,
// and returns the node, its ledger and a blockchaincfg for it.
func startEthScenario(t *testing.T, opts gethdev.Options) (*gethdev.Node, *ethgen.Ledger, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startDevNode(t, opts)
	ledger, err := ethgen.Scenario(ctx, dev)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": dev.HTTPURL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 20, "block_addresses_to_keep": 100, "eip1559Fees": true, "processInternalTransactions": true,
		"fourByteSignatures": startFourByteDirectory(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return dev, ledger, raw
}

// waitHead waits until blockbook has indexed the node's head.
func (e *ethE2E) waitHead(t *testing.T) {
	t.Helper()
	h, hash := e.dev.Head()
	waitTip(t, e.inst.base, int32(h), hash.Hex(), e.inst.logs)
}

func (e *ethE2E) get(t *testing.T, path string, out any) {
	t.Helper()
	getJSON(t, e.inst.base+path, 200, out)
}

func TestEthAPIMatchesLedger(t *testing.T) {
	t.Setenv("BB_ADMIN_USER", ethAdminUser) // the contract metadata admin (eth_admin_test.go)
	t.Setenv("BB_ADMIN_PASSWORD", ethAdminPassword)
	e := startEthE2EWith(t, ethShotOptions()) // fixed block times: eth_shots_test.go
	for _, a := range e.ledger.SortedAddresses() {
		e.checkAddress(t, a, e.ledger.Addresses[a])
		e.checkBalanceHistory(t, a, e.ledger.Addresses[a])
	}
	mined := 0
	for h, tx := range e.ledger.Txs {
		e.checkTx(t, h, tx)
		if !tx.Pending {
			mined++
		}
	}
	for a, c := range e.ledger.Contracts {
		e.checkContract(t, a, c)
	}
	if mined < 20 || len(e.ledger.Contracts) < 5 {
		t.Fatalf("the scenario is thin: %d mined txs, %d contracts", mined, len(e.ledger.Contracts))
	}
	e.checkBlocks(t)
	e.checkMisc(t)
	e.checkBadInputs(t)
	e.checkExplorer(t)
	e.checkParity(t)
	e.checkParsedData(t)
	e.checkGoldens(t)
	adminStart := time.Now()
	fixed := e.checkContractAdmin(t)
	adminTook := time.Since(adminStart)
	meshStart := time.Now()
	e.checkMesh(t)
	meshTook := time.Since(meshStart)
	e.checkReorg(t)
	meshStart = time.Now()
	e.checkMeshAfterReorg(t)
	t.Logf("the Mesh checks took %v", (meshTook + time.Since(meshStart)).Round(time.Millisecond))
	e.checkWsNotifications(t)
	adminStart = time.Now()
	e.checkContractAdminAfterReorg(t, fixed)
	t.Logf("the contract admin checks took %v", (adminTook + time.Since(adminStart)).Round(time.Millisecond))
}

func (e *ethE2E) checkAddress(t *testing.T, a common.Address, want *ethgen.Address) {
	t.Helper()
	var got api.Address
	e.get(t, "/api/v2/address/"+strings.ToLower(a.Hex())+"?details=tokenBalances", &got)
	name := fmt.Sprintf("%s (%s)", a.Hex(), want.Name)
	if got.Address != a.Hex() {
		t.Errorf("%s: address %q, want the EIP-55 form", name, got.Address)
	}
	// The nonce counts the pending txs too, as Blockbook's.
	if got.Balance.String() != want.Balance.String() || got.Nonce != fmt.Sprint(e.pendingNonce(a)) || got.ConfirmedNonce != "" {
		t.Errorf("%s: balance %s nonce %s (confirmed %q), want %s %d", name, got.Balance, got.Nonce, got.ConfirmedNonce, want.Balance, e.pendingNonce(a))
	}
	if got.Txs != len(want.Txs) || got.NonTokenTxs != want.NonTokenTxs || got.InternalTxs != want.InternalTxs {
		t.Errorf("%s: txs %d/%d/%d, want %d/%d/%d", name, got.Txs, got.NonTokenTxs, got.InternalTxs, len(want.Txs), want.NonTokenTxs, want.InternalTxs)
	}
	// Pending txs: counted, and what they would move: the value received,
	// and the value sent plus the most the fee can be (the node's gas price
	// × gas limit), as Blockbook sums them.
	receiving, sending := e.pendingSums(t, a)
	delta := new(big.Int).Sub(receiving, sending)
	if got.UnconfirmedBalance.String() != delta.String() || got.UnconfirmedTxs != len(want.PendingTxs) ||
		amountOrZero(got.UnconfirmedReceiving) != receiving.String() || amountOrZero(got.UnconfirmedSending) != sending.String() {
		t.Errorf("%s: unconfirmed %s/%d (receiving %v, sending %v), want %s/%d (%s, %s)", name, got.UnconfirmedBalance, got.UnconfirmedTxs,
			got.UnconfirmedReceiving, got.UnconfirmedSending, delta, len(want.PendingTxs), receiving, sending)
	}
	// Tokens: one per contract, with the ledger's holding.
	// With balances, only tokens with holdings are listed (as Blockbook).
	held := 0
	for _, hd := range want.Tokens {
		if hd.Standard == ethgen.ERC20 || ledgerHolding(hd) != "" {
			held++
		}
	}
	if len(got.Tokens) != held {
		t.Errorf("%s: %d tokens, want %d", name, len(got.Tokens), held)
	}
	if !slices.IsSortedFunc(got.Tokens, func(a, b api.Token) int {
		if (a.Name == "") != (b.Name == "") {
			return map[bool]int{true: 1, false: -1}[a.Name == ""]
		}
		return strings.Compare(a.Name+"\x00"+a.Contract, b.Name+"\x00"+b.Contract)
	}) {
		t.Errorf("%s: tokens not in Blockbook's order (named by name, then by contract)", name)
	}
	for _, tk := range got.Tokens {
		hd := want.Tokens[common.HexToAddress(tk.Contract)]
		if hd == nil {
			t.Errorf("%s: unexpected token %s", name, tk.Contract)
			continue
		}
		if g, w := tokenHolding(tk), ledgerHolding(hd); g != w || tk.Transfers != hd.Transfers || tk.Standard != hd.Standard || tk.Type != hd.Standard {
			t.Errorf("%s on %s: %s/%s with %d transfers, want %s with %d", name, tk.Contract, tk.Type, g, tk.Transfers, w, hd.Transfers)
		}
		if c := e.ledger.Contracts[common.HexToAddress(tk.Contract)]; c != nil && (tk.Name != c.Name || tk.Symbol != c.Symbol || tk.Decimals != c.Decimals) {
			t.Errorf("%s on %s: %q %q %d, want %q %q %d", name, tk.Contract, tk.Name, tk.Symbol, tk.Decimals, c.Name, c.Symbol, c.Decimals)
		}
	}
	// Txids, newest first, paged: every page together is the ledger's set.
	var ids []string
	for page := 1; ; page++ {
		var pg api.Address
		e.get(t, fmt.Sprintf("/api/v2/address/%s?details=txids&pageSize=7&page=%d", a.Hex(), page), &pg)
		ids = append(ids, pg.Txids...)
		if page >= pg.TotalPages {
			break
		}
	}
	var wantIDs []string
	for h := range want.Txs {
		wantIDs = append(wantIDs, h.Hex())
	}
	for h := range want.PendingTxs { // listed first, on page 1
		wantIDs = append(wantIDs, h.Hex())
		if !slices.Contains(ids[:len(want.PendingTxs)], h.Hex()) {
			t.Errorf("%s: pending tx %s not first", name, h.Hex())
		}
	}
	slices.Sort(wantIDs)
	sorted := slices.Sorted(slices.Values(ids))
	if !slices.Equal(sorted, wantIDs) {
		t.Errorf("%s: txids %v, want %v", name, sorted, wantIDs)
	}
	var heights []uint64
	for _, id := range ids {
		if tx := e.ledger.Txs[common.HexToHash(id)]; tx != nil && !tx.Pending {
			heights = append(heights, tx.BlockNumber)
		}
	}
	if !slices.IsSortedFunc(heights, func(a, b uint64) int { return int(b) - int(a) }) {
		t.Errorf("%s: txids not newest first: heights %v", name, heights)
	}
}

func tokenHolding(tk api.Token) string {
	switch tk.Standard {
	case ethgen.ERC20:
		return tk.Balance.String()
	case ethgen.ERC721:
		var s []string
		for _, id := range tk.IDs {
			s = append(s, id.String()+":1")
		}
		return strings.Join(s, " ")
	}
	var s []string
	for _, v := range tk.MultiTokenValues {
		s = append(s, v.ID.String()+":"+v.Value.String())
	}
	return strings.Join(s, " ")
}

func ledgerHolding(hd *ethgen.Holding) string {
	vals := map[string]*big.Int{}
	switch hd.Standard {
	case ethgen.ERC20:
		return hd.Balance.String()
	case ethgen.ERC721:
		for id := range hd.NFTs {
			vals[id] = big.NewInt(1)
		}
	default:
		vals = hd.Multi
	}
	var ids []*big.Int
	for id, v := range vals {
		if v.Sign() != 0 {
			n, _ := new(big.Int).SetString(id, 10)
			ids = append(ids, n)
		}
	}
	slices.SortFunc(ids, func(a, b *big.Int) int { return a.Cmp(b) })
	var s []string
	for _, id := range ids {
		s = append(s, id.String()+":"+vals[id.String()].String())
	}
	return strings.Join(s, " ")
}

func (e *ethE2E) checkTx(t *testing.T, h common.Hash, want *ethgen.Tx) {
	t.Helper()
	var got api.Tx
	e.get(t, "/api/v2/tx/"+h.Hex(), &got)
	es := got.EthereumSpecific
	if got.Txid != h.Hex() || es == nil || len(got.Vin) != 1 || len(got.Vout) != 1 {
		t.Errorf("tx %s: malformed answer %+v", h, got)
		return
	}
	// type is the internal data's kind (Blockbook's): 1 for a mined
	// creation, else 0 (left out); never the envelope type.
	wantKind := 0
	if want.To == nil && !want.Pending {
		wantKind = 1
	}
	if got.Vin[0].Addresses[0] != want.From.Hex() || got.Value.String() != want.Value.String() || es.Nonce != want.Nonce || es.Type != wantKind {
		t.Errorf("tx %s: from %v value %s nonce %d type %d, want %s %s %d %d", h, got.Vin[0].Addresses, got.Value, es.Nonce, es.Type,
			want.From.Hex(), want.Value, want.Nonce, wantKind)
	}
	// A creation has no recipient: addresses null, not an address.
	if want.To == nil {
		if got.Vout[0].Addresses != nil || got.Vout[0].IsAddress {
			t.Errorf("creation tx %s: vout %+v, want no addresses", h, got.Vout[0])
		}
	} else if gotTo := strings.Join(got.Vout[0].Addresses, ","); gotTo != want.To.Hex() || !got.Vout[0].IsAddress {
		t.Errorf("tx %s: to %q, want %q", h, gotTo, want.To.Hex())
	}
	if want.Pending {
		if got.BlockHeight != -1 || got.Confirmations != 0 || es.Status != -1 || got.Fees.String() != "0" {
			t.Errorf("pending tx %s: height %d confirmations %d status %d fees %s", h, got.BlockHeight, got.Confirmations, es.Status, got.Fees)
		}
		// The token transfer its calldata asks for.
		if len(got.TokenTransfers) != len(want.TokenTransfers) {
			t.Errorf("pending tx %s: %d token transfers, want %d", h, len(got.TokenTransfers), len(want.TokenTransfers))
		}
		for i, tt := range got.TokenTransfers {
			if w := want.TokenTransfers[min(i, len(want.TokenTransfers)-1)]; tt.To != w.To.Hex() || tt.Contract != w.Contract.Hex() || tt.Value.String() != w.Value.String() {
				t.Errorf("pending tx %s: transfer %+v, want %+v", h, tt, w)
			}
		}
		return
	}
	if got.BlockHeight != int64(want.BlockNumber) || got.BlockHash != want.BlockHash.Hex() || got.Confirmations < 1 {
		t.Errorf("tx %s: block %d %s (%d conf), want %d %s", h, got.BlockHeight, got.BlockHash, got.Confirmations, want.BlockNumber, want.BlockHash.Hex())
	}
	if es.Status != int(want.Status) || es.GasUsed == nil || *es.GasUsed != want.GasUsed {
		t.Errorf("tx %s: status %d gas used %v, want %d %d", h, es.Status, es.GasUsed, want.Status, want.GasUsed)
	}
	// The ledger's fee includes blob gas, which the answer does not show.
	if want.Type != 3 && got.Fees.String() != want.Fee.String() {
		t.Errorf("tx %s: fees %s, want %s", h, got.Fees, want.Fee)
	}
	if c := want.Created; want.To == nil && c != (common.Address{}) && es.CreatedContract != c.Hex() {
		t.Errorf("tx %s: created %q, want %s", h, es.CreatedContract, c.Hex())
	}
	var gotTT, wantTT []string
	for _, tt := range got.TokenTransfers {
		if len(tt.MultiTokenValues) > 0 {
			for _, mv := range tt.MultiTokenValues {
				gotTT = append(gotTT, fmt.Sprintf("%s %s %s>%s %s:%s", tt.Standard, tt.Contract, tt.From, tt.To, mv.ID, mv.Value))
			}
			continue
		}
		gotTT = append(gotTT, fmt.Sprintf("%s %s %s>%s %s", tt.Standard, tt.Contract, tt.From, tt.To, tt.Value))
	}
	for _, tt := range want.TokenTransfers {
		switch tt.Standard {
		case ethgen.ERC721:
			wantTT = append(wantTT, fmt.Sprintf("%s %s %s>%s %s", tt.Standard, tt.Contract.Hex(), tt.From.Hex(), tt.To.Hex(), tt.TokenID))
		case ethgen.ERC1155:
			wantTT = append(wantTT, fmt.Sprintf("%s %s %s>%s %s:%s", tt.Standard, tt.Contract.Hex(), tt.From.Hex(), tt.To.Hex(), tt.TokenID, tt.Value))
		default:
			wantTT = append(wantTT, fmt.Sprintf("%s %s %s>%s %s", tt.Standard, tt.Contract.Hex(), tt.From.Hex(), tt.To.Hex(), tt.Value))
		}
	}
	if !slices.Equal(gotTT, wantTT) {
		t.Errorf("tx %s: token transfers\n%v\nwant\n%v", h, gotTT, wantTT)
	}
	var gotIT, wantIT []string
	for _, it := range es.InternalTransfers {
		gotIT = append(gotIT, fmt.Sprintf("%d %s>%s %s", it.Type, it.From, it.To, it.Value))
	}
	for _, it := range want.InternalTransfers {
		kind := map[string]int{ethgen.InternalCall: 0, ethgen.InternalCreate: 1, ethgen.InternalSelfDestruct: 2}[it.Type]
		wantIT = append(wantIT, fmt.Sprintf("%d %s>%s %s", kind, it.From.Hex(), it.To.Hex(), it.Value))
	}
	if !slices.Equal(gotIT, wantIT) {
		t.Errorf("tx %s: internal transfers %v, want %v", h, gotIT, wantIT)
	}
}

func (e *ethE2E) checkContract(t *testing.T, a common.Address, want *ethgen.ContractInfo) {
	t.Helper()
	var got api.ContractInfo
	e.get(t, "/api/v2/contract/"+a.Hex(), &got)
	if got.Contract != a.Hex() || got.Name != want.Name || got.Symbol != want.Symbol || got.Decimals != want.Decimals {
		t.Errorf("contract %s (%s): %+v, want %+v", a, want.Kind, got, want)
	}
	if want.Standard != "" && got.Standard != "" && got.Standard != want.Standard {
		t.Errorf("contract %s (%s): standard %s, want %s", a, want.Kind, got.Standard, want.Standard)
	}
}

// checkBlocks compares every scenario block's tx list with the ledger.
func (e *ethE2E) checkBlocks(t *testing.T) {
	t.Helper()
	for _, b := range e.ledger.Blocks {
		var got api.Block
		e.get(t, fmt.Sprint("/api/v2/block/", b.Number), &got)
		var ids, want []string
		for _, tx := range got.Txs {
			ids = append(ids, tx.Txid)
		}
		for _, h := range b.Txs {
			want = append(want, h.Hex())
		}
		slices.Sort(want) // the ledger lists them in sending order
		if got.Hash != b.Hash.Hex() || got.TxCount != len(b.Txs) || !slices.Equal(slices.Sorted(slices.Values(ids)), want) {
			t.Errorf("block %d: %s %d txs %v, want %s %v", b.Number, got.Hash, got.TxCount, ids, b.Hash.Hex(), want)
		}
		var byHash api.Block
		e.get(t, "/api/v2/block/"+b.Hash.Hex(), &byHash)
		var bi api.BlockIndex
		e.get(t, fmt.Sprint("/api/v2/block-index/", b.Number), &bi)
		if byHash.Height != uint32(b.Number) || bi.BlockHash != b.Hash.Hex() {
			t.Errorf("block %s: by hash height %d, block-index %s", b.Hash, byHash.Height, bi.BlockHash)
		}
	}
}

// checkMisc: status, fees, full txs in the address answer, the contract
// filter, and the websocket.
func (e *ethE2E) checkMisc(t *testing.T) {
	t.Helper()
	var st api.SystemInfo
	e.get(t, "/api/v2", &st)
	if h, _ := e.dev.Head(); st.Blockbook.BestHeight != uint32(h) || st.Blockbook.Decimals != 18 || st.Backend.Error != "" {
		t.Errorf("status %+v %+v", st.Blockbook, st.Backend)
	}
	var fee api.Result
	e.get(t, "/api/v2/estimatefee/2", &fee)
	if fee.Result == "" || fee.Result == "0" {
		t.Errorf("estimatefee %q", fee.Result)
	}
	// An address with token transfers: full txs, and the contract filter.
	var holder common.Address
	var contract common.Address
	for _, a := range e.ledger.SortedAddresses() {
		for c, hd := range e.ledger.Addresses[a].Tokens {
			if hd.Standard == ethgen.ERC20 && len(hd.Txs) > 0 && len(e.ledger.Addresses[a].Txs) > len(hd.Txs) {
				holder, contract = a, c
			}
		}
	}
	if holder == (common.Address{}) {
		t.Fatal("no ERC20 holder with other txs in the scenario")
	}
	var full api.Address
	e.get(t, "/api/v2/address/"+holder.Hex()+"?details=txs&pageSize=1000", &full)
	if len(full.Transactions) != len(e.ledger.Addresses[holder].Txs) {
		t.Errorf("%s: %d full txs, want %d", holder, len(full.Transactions), len(e.ledger.Addresses[holder].Txs))
	}
	var filtered api.Address
	e.get(t, "/api/v2/address/"+holder.Hex()+"?details=txids&contract="+contract.Hex(), &filtered)
	wantSet := e.ledger.Addresses[holder].Tokens[contract].Txs
	for _, id := range filtered.Txids {
		tx := e.ledger.Txs[common.HexToHash(id)]
		if !wantSet[common.HexToHash(id)] && (tx == nil || tx.To == nil || *tx.To != contract) {
			t.Errorf("%s contract %s: tx %s does not involve the contract", holder, contract, id)
		}
	}
	if len(filtered.Txids) < len(wantSet) || len(filtered.Tokens) != 1 || filtered.Tokens[0].Contract != contract.Hex() {
		t.Errorf("%s contract %s: %d txids (want at least %d), tokens %v", holder, contract, len(filtered.Txids), len(wantSet), filtered.Tokens)
	}
	// The websocket, as Trezor's client uses it.
	ws := newWS(t, e.inst.base)
	var info api.WsInfo
	ws.ok("getInfo", nil, &info)
	if h, hash := e.dev.Head(); info.BestHeight != uint32(h) || info.BestHash != hash.Hex() || info.Decimals != 18 {
		t.Errorf("getInfo %+v", info)
	}
	var acc map[string]any
	ws.ok("getAccountInfo", map[string]any{"descriptor": holder.Hex(), "details": "tokenBalances"}, &acc)
	if n, ok := acc["nonce"].(string); !ok || n != fmt.Sprint(e.pendingNonce(holder)) || acc["tokens"] == nil {
		t.Errorf("getAccountInfo: %v", acc)
	}
	var fees []api.FeeEstimate
	ws.ok("estimateFee", map[string]any{"blocks": []int{1, 6}}, &fees)
	if len(fees) != 2 || fees[0].FeePerUnit == "" || fees[0].FeeLimit != "21000" || fees[0].Eip1559 == nil || fees[0].Eip1559.Medium == nil {
		t.Errorf("estimateFee %+v", fees)
	}
	ws.fails("getAccountUtxo", map[string]any{"descriptor": holder.Hex()}, "not supported for Ethereum-type coins")
	ws.fails("longTermFeeRate", nil, "longTermFeeRate is not supported for this coin") // as Blockbook's: no long-term rate on EVM

	// A contract call, and the gas of a token transfer, as wallets ask.
	var erc20 common.Address
	for c, info := range e.ledger.Contracts {
		if hd := e.ledger.Addresses[holder].Tokens[c]; info.Standard == ethgen.ERC20 && hd != nil && hd.Balance.Sign() > 0 {
			erc20 = c
		}
	}
	if erc20 == (common.Address{}) {
		t.Fatalf("%s holds no ERC20 token", holder)
	}
	word := func(b []byte) string { return common.Bytes2Hex(common.LeftPadBytes(b, 32)) }
	balanceOf := "0x70a08231" + word(holder.Bytes())
	var call api.RPCCallResult
	ws.ok("rpcCall", map[string]any{"to": erc20.Hex(), "data": balanceOf}, &call)
	if got, want := new(big.Int).SetBytes(common.FromHex(call.Data)), e.ledger.Addresses[holder].Tokens[erc20].Balance; got.Cmp(want) != 0 {
		t.Errorf("rpcCall balanceOf(%s) = %s (%s), want %s", holder, got, call.Data, want)
	}
	ws.fails("rpcCall", map[string]any{"to": "0x12", "data": balanceOf}, "Invalid address")
	ws.fails("rpcCall", map[string]any{"data": balanceOf}, "Missing 'to' address")
	ws.fails("rpcCall", map[string]any{"to": erc20.Hex(), "data": "0xzz"}, "not hexadecimal")
	covered("rpcCall")
	transfer := common.FromHex("0xa9059cbb" + word(common.Address{0x77}.Bytes()) + word([]byte{1}))
	fees = nil
	ws.ok("estimateFee", map[string]any{"blocks": []int{1}, "specific": map[string]any{
		"from": holder.Hex(), "to": erc20.Hex(), "data": "0x" + common.Bytes2Hex(transfer)}}, &fees)
	gas, err := e.dev.Client().EstimateGas(context.Background(), ethereum.CallMsg{From: holder, To: &erc20, Data: transfer})
	if err != nil {
		t.Fatal(err)
	}
	if len(fees) != 1 || fees[0].FeeLimit != fmt.Sprint(gas) || gas <= 21000 {
		t.Errorf("estimateFee of a token transfer %+v, want the node's gas %d", fees, gas)
	}
	// A tx that would revert keeps its fee levels, without a limit.
	tooMuch := common.FromHex("0xa9059cbb" + word(common.Address{0x77}.Bytes()) + word(new(big.Int).Lsh(big.NewInt(1), 200).Bytes()))
	var revertFees []api.FeeEstimate
	ws.ok("estimateFee", map[string]any{"blocks": []int{1}, "specific": map[string]any{
		"from": holder.Hex(), "to": erc20.Hex(), "data": "0x" + common.Bytes2Hex(tooMuch)}}, &revertFees)
	if len(revertFees) != 1 || revertFees[0].FeeLimit != "" || revertFees[0].FeePerUnit == "" {
		t.Errorf("estimateFee of a reverting transfer %+v", revertFees)
	}
}

func (e *ethE2E) checkBadInputs(t *testing.T) {
	t.Helper()
	a := e.ledger.SortedAddresses()[0].Hex()
	// All-lower and all-upper forms carry no checksum and are accepted.
	for _, form := range []string{strings.ToLower(a), "0x" + strings.ToUpper(a[2:])} {
		var got api.Address
		e.get(t, "/api/v2/address/"+form+"?details=basic", &got)
		if got.Address != a {
			t.Errorf("address %s answered as %q, want %s", form, got.Address, a)
		}
	}
	for path, want := range map[string]string{
		"/api/v2/address/0x123": "Invalid address",
		"/api/v2/address/" + strings.ToUpper(a[:3]) + strings.ToLower(a[3:5]) + strings.ToUpper(a[5:]): "checksum",
		"/api/v2/address/" + a + "?contract=nope":                                                      "Invalid contract filter",
		"/api/v2/tx/0x1234":                                           "Invalid txid",
		"/api/v2/tx/0x" + strings.Repeat("ab", 32):                    "not found",
		"/api/v2/block/99999":                                         "not found",
		"/api/v2/contract/0x000000000000000000000000000000000000dEaD": "not found",
		"/api/v2/utxo/" + a:                                           "not supported for Ethereum-type coins",
		"/api/v2/xpub/xpub6CUGRUonZSQ4TWtTMmzXdrXDtypWKiKrhko4egpiMZbpiaQL2jkwSB1icqYh2cfDfVxdx4df189oLKnC5fSwqPfgyP3hooxujYzAu3fDVmz": "not supported for Ethereum-type coins",
		"/api/v2/block-filters/?lastN=1": "not supported",
		"/api/v2/sendtx/0x02f8":          "",
	} {
		var body struct {
			Error string `json:"error"`
		}
		getJSON(t, e.inst.base+path, 400, &body)
		if body.Error == "" || !strings.Contains(body.Error, want) {
			t.Errorf("GET %s: error %q, want it to mention %q", path, body.Error, want)
		}
	}
}

// A node without the debug API: internal-transaction processing is
// switched off at start with a warning the status shows, the chain is
// indexed without internal transfers, and no block is left marked as
// failed.
func TestEthNodeWithoutDebugAPI(t *testing.T) {
	e := startEthE2EWith(t, gethdev.Options{Modules: []string{"eth", "net", "web3", "txpool"}})
	var st api.SystemInfo
	e.get(t, "/api/v2", &st)
	if !strings.Contains(st.Backend.Warnings, "internal transactions are not processed") {
		t.Fatalf("status backend.warnings %q does not say internal transactions are off", st.Backend.Warnings)
	}
	if !strings.Contains(e.inst.logs.String(), "internal transactions switched off") {
		t.Error("no warning logged at start")
	}
	checked := 0
	for h, tx := range e.ledger.Txs {
		// Untraced, a creation has no internal data, so no type (as
		// Blockbook's); the receipt still names the contract.
		if !tx.Pending && tx.To == nil && tx.Created != (common.Address{}) {
			var got api.Tx
			e.get(t, "/api/v2/tx/"+h.Hex(), &got)
			if es := got.EthereumSpecific; es == nil || es.Type != 0 || es.CreatedContract != tx.Created.Hex() {
				t.Errorf("untraced creation %s: %+v", h, es)
			}
		}
		if tx.Pending || len(tx.InternalTransfers) == 0 {
			continue
		}
		var got api.Tx
		e.get(t, "/api/v2/tx/"+h.Hex(), &got)
		if got.EthereumSpecific == nil || len(got.EthereumSpecific.InternalTransfers) != 0 {
			t.Errorf("tx %s: internal transfers %+v with tracing off", h, got.EthereumSpecific)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("the scenario has no internal transfers to check")
	}
	if strings.Contains(e.inst.logs.String(), "block trace failed") {
		t.Error("blocks were traced and marked as failed although tracing is off")
	}
}

// checkBalanceHistory: an account that started empty has, summed over its
// history, received minus sent equal to its balance, and every tx counted.
func (e *ethE2E) checkBalanceHistory(t *testing.T, a common.Address, want *ethgen.Address) {
	t.Helper()
	if want.Name == "dev" || want.Name == "coinbase" || len(want.Txs) == 0 {
		return // funded at genesis, or paid priority fees outside any tx
	}
	var hist []api.BalanceHistory
	e.get(t, "/api/v2/balancehistory/"+a.Hex()+"?groupBy=3600", &hist)
	net, txs := new(big.Int), 0
	for _, b := range hist {
		net.Add(net, (*big.Int)(b.Received))
		net.Sub(net, (*big.Int)(b.Sent))
		txs += int(b.Txs)
	}
	if net.Cmp(want.Balance) != 0 || txs != len(want.Txs) {
		t.Errorf("%s (%s): balance history sums to %s over %d txs, want %s over %d", a, want.Name, net, txs, want.Balance, len(want.Txs))
	}
}
