package e2e

// Ethereum answers in Blockbook's shapes where they differ from the
// obvious ones: the node's own tx and receipt (tx-specific), the raw tx,
// the pending and confirmed nonce, what pending txs move, the websocket's
// getContractInfo and the status's backend, each checked against the
// node and the scenario's ledger.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/api"
)

// pendingNonce is the next nonce of a: its mined txs and its pending ones.
func (e *ethE2E) pendingNonce(a common.Address) uint64 {
	n := e.ledger.Addresses[a].Nonce
	for h := range e.ledger.Addresses[a].PendingTxs {
		if e.ledger.Txs[h].From == a {
			n++
		}
	}
	return n
}

// nodeTx is a tx as the node describes it.
func (e *ethE2E) nodeTx(t *testing.T, h common.Hash) map[string]any {
	t.Helper()
	var m map[string]any
	if err := e.dev.Client().Client().CallContext(context.Background(), &m, "eth_getTransactionByHash", h); err != nil || m == nil {
		t.Fatalf("node tx %s: %v", h, err)
	}
	return m
}

func hexBig(t *testing.T, v any) *big.Int {
	t.Helper()
	s, _ := v.(string)
	x, err := hexutil.DecodeBig(s)
	if err != nil {
		t.Fatalf("node quantity %v: %v", v, err)
	}
	return x
}

// pendingSums is what a's pending txs would move: the value paid to it,
// and the value it pays plus gas price × gas limit, from the node's view.
func (e *ethE2E) pendingSums(t *testing.T, a common.Address) (receiving, sending *big.Int) {
	t.Helper()
	receiving, sending = new(big.Int), new(big.Int)
	for h := range e.ledger.Addresses[a].PendingTxs {
		tx := e.ledger.Txs[h]
		if tx.To != nil && *tx.To == a {
			receiving.Add(receiving, tx.Value)
		}
		if tx.From == a {
			m := e.nodeTx(t, h)
			sending.Add(sending, tx.Value)
			sending.Add(sending, new(big.Int).Mul(hexBig(t, m["gasPrice"]), hexBig(t, m["gas"])))
		}
	}
	return receiving, sending
}

func amountOrZero(a *api.Amount) string {
	if a == nil {
		return "0"
	}
	return a.String()
}

// txSpecific is Blockbook's tx-specific answer.
type txSpecific struct {
	Tx      map[string]any `json:"tx"`
	Receipt map[string]any `json:"receipt"`
}

func (e *ethE2E) checkParity(t *testing.T) {
	t.Helper()
	var created, pending common.Hash
	for h, tx := range e.ledger.Txs {
		if !tx.Pending && tx.To == nil && tx.Created != (common.Address{}) {
			created = h
		}
		if tx.Pending {
			pending = h
		}
	}
	if created == (common.Hash{}) || pending == (common.Hash{}) {
		t.Fatal("the scenario has no mined creation or no pending tx")
	}
	e.checkTxSpecific(t, created, pending)
	e.checkRawTx(t, created, pending)
	e.checkNonces(t)
	e.checkGetContractInfo(t)
	var st api.SystemInfo
	e.get(t, "/api/v2", &st)
	if _, head := e.dev.Head(); st.Backend.BestBlockHash != head.Hex() || st.Backend.Chain != "testnet 1337" ||
		st.Backend.Subversion != "" || st.Backend.ProtocolVersion != "" || st.Backend.Difficulty == "" {
		t.Errorf("status backend %+v, want Blockbook's fields (0x tip hash %s)", st.Backend, head.Hex())
	}
}

// checkTxSpecific compares tx-specific with the node's tx and receipt.
func (e *ethE2E) checkTxSpecific(t *testing.T, created, pending common.Hash) {
	t.Helper()
	want := e.ledger.Txs[created]
	var got txSpecific
	e.get(t, "/api/v2/tx-specific/"+created.Hex(), &got)
	node := e.nodeTx(t, created)
	for _, k := range []string{"hash", "nonce", "gas", "gasPrice", "value", "input", "blockNumber", "blockHash", "transactionIndex"} {
		if got.Tx[k] != node[k] {
			t.Errorf("tx-specific %s: tx.%s %v, node %v", created, k, got.Tx[k], node[k])
		}
	}
	// Blockbook's fields only: no signature, envelope type or chain id.
	if got.Tx["from"] != want.From.Hex() || got.Tx["to"] != "" || got.Tx["baseFeePerGas"] == nil || got.Tx["v"] != nil ||
		got.Tx["type"] != nil || got.Tx["chainId"] != nil {
		t.Errorf("tx-specific %s: tx %v", created, got.Tx)
	}
	if got.Receipt["contractAddress"] != want.Created.Hex() || got.Receipt["status"] != fmt.Sprintf("0x%x", want.Status) ||
		got.Receipt["gasUsed"] != fmt.Sprintf("0x%x", want.GasUsed) || got.Receipt["logs"] == nil {
		t.Errorf("tx-specific %s: receipt %v, want contract %s", created, got.Receipt, want.Created.Hex())
	}
	var p txSpecific
	e.get(t, "/api/v2/tx-specific/"+pending.Hex(), &p)
	if p.Receipt != nil || p.Tx["blockNumber"] != "" || p.Tx["hash"] != pending.Hex() {
		t.Errorf("tx-specific of pending %s: %+v", pending, p)
	}
	// A pending tx's answer carries the same as coinSpecificData (Blockbook's).
	var ptx struct {
		CoinSpecificData *txSpecific `json:"coinSpecificData"`
	}
	e.get(t, "/api/v2/tx/"+pending.Hex(), &ptx)
	if cs := ptx.CoinSpecificData; cs == nil || cs.Tx["hash"] != pending.Hex() || cs.Receipt != nil {
		t.Errorf("pending tx %s: coinSpecificData %+v", pending, cs)
	}
	var mined map[string]any
	e.get(t, "/api/v2/tx/"+created.Hex(), &mined)
	if mined["coinSpecificData"] != nil {
		t.Errorf("mined tx %s carries coinSpecificData", created)
	}
	ws := newWS(t, e.inst.base)
	var w txSpecific
	ws.ok("getTransactionSpecific", map[string]any{"txid": created.Hex()}, &w)
	if w.Tx["hash"] != created.Hex() || w.Receipt["contractAddress"] != want.Created.Hex() {
		t.Errorf("getTransactionSpecific %s: %+v", created, w)
	}
	covered("getTransactionSpecific")
	unknown := common.Hash{0x12, 0x34}
	getJSON(t, e.inst.base+"/api/v2/tx-specific/"+unknown.Hex(), http.StatusBadRequest, nil)
}

// checkRawTx compares rawtx with the node's serialization.
func (e *ethE2E) checkRawTx(t *testing.T, txids ...common.Hash) {
	t.Helper()
	for _, h := range txids {
		var got string
		e.get(t, "/api/v2/rawtx/"+h.Hex(), &got)
		var tx types.Transaction
		if err := tx.UnmarshalBinary(common.FromHex(got)); err != nil || tx.Hash() != h || !strings.HasPrefix(got, "0x") {
			t.Errorf("rawtx %s: %.40s… decodes to %s (%v)", h, got, tx.Hash(), err)
		}
	}
	var e400 struct {
		Error string `json:"error"`
	}
	unknown := common.Hash{0x12, 0x34}
	getJSON(t, e.inst.base+"/api/v2/rawtx/"+unknown.Hex(), http.StatusBadRequest, &e400)
	if e400.Error != "Transaction '"+unknown.Hex()+"' not found" {
		t.Errorf("rawtx of an unknown tx: %q", e400.Error)
	}
}

// checkNonces: nonce counts pending txs, confirmedNonce (on request) only
// mined ones, over REST and the websocket.
func (e *ethE2E) checkNonces(t *testing.T) {
	t.Helper()
	ws := newWS(t, e.inst.base)
	seenPending := false
	for _, a := range e.ledger.SortedAddresses() {
		want := e.ledger.Addresses[a]
		var got api.Address
		e.get(t, "/api/v2/address/"+a.Hex()+"?details=basic&confirmedNonce=true", &got)
		var w map[string]any
		ws.ok("getAccountInfo", map[string]any{"descriptor": a.Hex(), "confirmedNonce": true}, &w)
		if got.Nonce != fmt.Sprint(e.pendingNonce(a)) || got.ConfirmedNonce != fmt.Sprint(want.Nonce) ||
			w["nonce"] != got.Nonce || w["confirmedNonce"] != got.ConfirmedNonce {
			t.Errorf("%s: nonce %s confirmed %s (ws %v %v), want %d %d", a, got.Nonce, got.ConfirmedNonce, w["nonce"], w["confirmedNonce"],
				e.pendingNonce(a), want.Nonce)
		}
		seenPending = seenPending || e.pendingNonce(a) != want.Nonce
	}
	if !seenPending {
		t.Error("no address has a pending tx: the nonces were not told apart")
	}
}

// checkGetContractInfo drives getContractInfo over a raw websocket: every
// contract the ledger knows answers as contract/ does; the errors are
// Blockbook's.
func (e *ethE2E) checkGetContractInfo(t *testing.T) {
	t.Helper()
	ws := newWS(t, e.inst.base)
	for a, want := range e.ledger.Contracts {
		var rest api.ContractInfo
		e.get(t, "/api/v2/contract/"+a.Hex(), &rest)
		_, data := ws.call("getContractInfo", map[string]any{"contract": strings.ToLower(a.Hex())})
		var got api.ContractInfo
		if err := json.Unmarshal(data, &got); err != nil || wsErrorOf(data) != "" {
			t.Fatalf("getContractInfo %s: %s (%v)", a, data, err)
		}
		if got != rest || got.Contract != a.Hex() || got.Name != want.Name || got.Symbol != want.Symbol || got.Decimals != want.Decimals ||
			got.BlockHeight == 0 {
			t.Errorf("getContractInfo %s: %+v, REST %+v, want %+v", a, got, rest, want)
		}
	}
	ws.fails("getContractInfo", map[string]any{}, "Missing contract")
	ws.fails("getContractInfo", map[string]any{"contract": "0x12"}, "Invalid contract, ")
	for _, a := range e.ledger.SortedAddresses() {
		if e.ledger.Contracts[a] == nil && e.ledger.Addresses[a].Nonce > 0 { // an account that sent txs
			ws.fails("getContractInfo", map[string]any{"contract": a.Hex()}, "Contract not found")
			break
		}
	}
	covered("getContractInfo")
}
