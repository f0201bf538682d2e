package e2e

import (
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// The Mesh (Rosetta) Data API of an Ethereum-type chain, on the stack of
// TestEthAPIMatchesLedger (ethgen's scenario on a geth dev node: every tx
// type, ERC-20/721/1155 tokens, internal and failed transfers, creations,
// a selfdestruct, pending txs). check:data's reconciliation over HTTP,
// every answer validated against the Mesh specification with closed
// schemas; the balances at the tip against ethgen's ledger; and again
// after the scenario's reorg, which /events/blocks must report.

// withMesh starts the Mesh listener and sends its base URL to addr.
func withMesh(addr chan<- string) func(*app.Options) {
	return func(o *app.Options) {
		o.Mesh.Addr = "127.0.0.1:0"
		next := o.OnListen
		o.OnListen = func(name, a string) {
			if name == "mesh" {
				addr <- "http://" + a
				return
			}
			next(name, a)
		}
	}
}

func (e *ethE2E) meshClient(t *testing.T) *meshcheck.Client {
	t.Helper()
	k, err := meshcheck.New()
	if err != nil {
		t.Fatal(err)
	}
	c := &meshcheck.Client{Checker: k, Post: func(path string, body any) (int, []byte, error) { return meshPost(e.mesh+path, "", body) }}
	var list struct {
		Networks []map[string]any `json:"network_identifiers"`
	}
	if err := c.Call("/network/list", nil, &list); err != nil || len(list.Networks) != 1 {
		t.Fatalf("/network/list: %v %v", list, err)
	}
	c.Network = list.Networks[0]
	return c
}

// checkMesh runs before checkReorg, while the ledger's pending txs wait.
func (e *ethE2E) checkMesh(t *testing.T) {
	t.Helper()
	c := e.meshClient(t)
	r := e.meshReconcile(t, c)
	// The tip's balances are the ledger's: ETH of every address, and
	// every ERC-20 holding.
	eth, tokens := meshBalances(t, r)
	for a, want := range e.ledger.Addresses {
		if got := orZero(eth[a]); got.Cmp(want.Balance) != 0 {
			t.Errorf("%s (%s): operations sum to %s wei, the ledger has %s", a.Hex(), want.Name, got, want.Balance)
		}
		for contract, hd := range want.Tokens {
			if hd.Standard == ethgen.ERC20 && orZero(tokens[contract][a]).Cmp(hd.Balance) != 0 {
				t.Errorf("%s: operations sum to %s of token %s, the ledger has %s", a.Hex(), tokens[contract][a], contract.Hex(), hd.Balance)
			}
		}
	}
	for _, typ := range []string{"FEE", "PRIORITY_FEE", "CALL", "INTERNAL_CALL", "INTERNAL_CREATE", "SELFDESTRUCT", "ERC20_TRANSFER"} {
		if r.Types[typ] == 0 {
			t.Errorf("no %s operation on the scenario's chain: %v", typ, r.Types)
		}
	}

	// A failed tx: its fee only.
	for h, tx := range e.ledger.Txs {
		if tx.Pending || tx.Status != 0 {
			continue
		}
		var got struct {
			Transaction meshcheck.AccountTransaction `json:"transaction"`
		}
		err := c.Call("/block/transaction", map[string]any{
			"block_identifier":       map[string]any{"index": tx.BlockNumber, "hash": tx.BlockHash.Hex()},
			"transaction_identifier": map[string]any{"hash": h.Hex()},
		}, &got)
		if err != nil {
			t.Fatal(err)
		}
		ops := got.Transaction.Operations
		if len(ops) == 0 || ops[0].Type != "FEE" || ops[0].Amount.Value != new(big.Int).Neg(tx.Fee).String() {
			t.Errorf("failed tx %s: %+v, want its fee %s first", h.Hex(), ops, tx.Fee)
		}
		for _, op := range ops[1:] {
			if op.Type != "PRIORITY_FEE" {
				t.Errorf("failed tx %s has a %s operation", h.Hex(), op.Type)
			}
		}
	}

	// The mempool: the ledger's pending txs.
	var mp struct {
		Txs []struct {
			Hash string `json:"hash"`
		} `json:"transaction_identifiers"`
	}
	if err := c.Call("/mempool", nil, &mp); err != nil || len(mp.Txs) != len(e.ledger.Pending) {
		t.Errorf("/mempool: %v %v, want %d txs", mp, err, len(e.ledger.Pending))
	}
	for _, h := range e.ledger.Pending {
		if err := c.Call("/mempool/transaction", map[string]any{"transaction_identifier": map[string]any{"hash": h.Hex()}}, nil); err != nil {
			t.Errorf("/mempool/transaction %s: %v", h.Hex(), err)
		}
	}
	e.checkMeshSearch(t, c)
	e.checkMeshErrors(t, c)
}

// meshReconcile is check:data over the whole chain: 0 mismatches, and
// only the dev account (funded at genesis) starts with a balance.
func (e *ethE2E) meshReconcile(t *testing.T, c *meshcheck.Client) *meshcheck.AccountReport {
	t.Helper()
	start := time.Now()
	r, err := c.ReconcileAccounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Mismatches {
		t.Error(m)
	}
	if h, _ := e.dev.Head(); r.Blocks != int(h)+1 {
		t.Errorf("walked %d blocks, the node has %d", r.Blocks, h+1)
	}
	for k, v := range r.Seeds {
		if !strings.EqualFold(k.Account, e.dev.DevAddr.Hex()) {
			t.Errorf("%s in %s held %s before its first operation", k.Account, k.Currency, v)
		}
	}
	t.Logf("reconciled %d blocks, %d txs, %d operations, %d balances with %d balance checks in %v; types %v",
		r.Blocks, r.Txs, r.Operations, len(r.Balances), r.BalanceChecks, time.Since(start).Round(time.Millisecond), r.Types)
	return r
}

// meshBalances splits the reconciled balances: ETH by address, tokens by
// contract and address.
func meshBalances(t *testing.T, r *meshcheck.AccountReport) (map[common.Address]*big.Int, map[common.Address]map[common.Address]*big.Int) {
	t.Helper()
	eth, tokens := map[common.Address]*big.Int{}, map[common.Address]map[common.Address]*big.Int{}
	for k, v := range r.Balances {
		var cur struct {
			Metadata struct {
				Contract string `json:"contract"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(k.Currency), &cur); err != nil {
			t.Fatal(err)
		}
		a := common.HexToAddress(k.Account)
		if cur.Metadata.Contract == "" {
			eth[a] = v
			continue
		}
		c := common.HexToAddress(cur.Metadata.Contract)
		if tokens[c] == nil {
			tokens[c] = map[common.Address]*big.Int{}
		}
		tokens[c][a] = v
	}
	return eth, tokens
}

// checkMeshSearch finds an address's txs and a tx by hash.
func (e *ethE2E) checkMeshSearch(t *testing.T, c *meshcheck.Client) {
	t.Helper()
	addr, most := common.Address{}, -1 // the address with the most txs
	for _, a := range e.ledger.SortedAddresses() {
		if n := len(e.ledger.Addresses[a].Txs); n > most {
			addr, most = a, n
		}
	}
	var res struct {
		Transactions []struct {
			BlockIdentifier meshcheck.BlockID            `json:"block_identifier"`
			Transaction     meshcheck.AccountTransaction `json:"transaction"`
		} `json:"transactions"`
		TotalCount int64 `json:"total_count"`
	}
	err := c.Call("/search/transactions", map[string]any{"account_identifier": map[string]any{"address": addr.Hex()}, "limit": 1000}, &res)
	if err != nil {
		t.Fatal(err)
	}
	want := len(e.ledger.Addresses[addr].Txs)
	if res.TotalCount != int64(want) || len(res.Transactions) != want {
		t.Errorf("search for %s: %d of %d txs, the ledger has %d", addr.Hex(), len(res.Transactions), res.TotalCount, want)
	}
	for i, bt := range res.Transactions {
		if !e.ledger.Addresses[addr].Txs[common.HexToHash(bt.Transaction.TransactionIdentifier.Hash)] ||
			i > 0 && bt.BlockIdentifier.Index > res.Transactions[i-1].BlockIdentifier.Index {
			t.Errorf("search for %s: tx %d %s in block %d is not the ledger's or out of order", addr.Hex(), i, bt.Transaction.TransactionIdentifier.Hash, bt.BlockIdentifier.Index)
		}
	}
	for h, tx := range e.ledger.Txs {
		if tx.Pending {
			continue
		}
		res.Transactions = nil
		err := c.Call("/search/transactions", map[string]any{"transaction_identifier": map[string]any{"hash": h.Hex()}}, &res)
		if err != nil || len(res.Transactions) != 1 || res.Transactions[0].BlockIdentifier.Hash != tx.BlockHash.Hex() {
			t.Errorf("search for tx %s: %+v %v", h.Hex(), res, err)
		}
		break
	}
}

// checkMeshErrors: bad input and the UTXO-only parts get Mesh errors.
func (e *ethE2E) checkMeshErrors(t *testing.T, c *meshcheck.Client) {
	t.Helper()
	h, _ := e.dev.Head()
	dev := map[string]any{"address": e.dev.DevAddr.Hex()}
	for name, b := range map[string]struct {
		path string
		body map[string]any
		code int
	}{
		"unknown network":  {"/network/status", map[string]any{"network_identifier": map[string]any{"blockchain": "Bitcoin", "network": "mainnet"}}, 1},
		"past the tip":     {"/block", map[string]any{"block_identifier": map[string]any{"index": h + 5}}, 4},
		"balance past tip": {"/account/balance", map[string]any{"account_identifier": dev, "block_identifier": map[string]any{"index": h + 5}}, 4},
		"bad address":      {"/account/balance", map[string]any{"account_identifier": map[string]any{"address": "0x12"}}, 7},
		"bad currency":     {"/account/balance", map[string]any{"account_identifier": dev, "currencies": []any{map[string]any{"symbol": "BTC", "decimals": 8}}}, 8},
		"coins":            {"/account/coins", map[string]any{"account_identifier": dev, "include_mempool": false}, 9},
		"construction":     {"/construction/preprocess", map[string]any{"operations": []any{}}, 9},
		"bad tx hash":      {"/mempool/transaction", map[string]any{"transaction_identifier": map[string]any{"hash": "0x12"}}, 5},
	} {
		err := c.Call(b.path, b.body, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != b.code || ae.Status != http.StatusInternalServerError {
			t.Errorf("%s: %v, want Mesh error %d", name, err, b.code)
		}
	}
}

// checkMeshAfterReorg runs after checkReorg: the event stream reports
// the removed blocks and check:data passes on the new branch.
func (e *ethE2E) checkMeshAfterReorg(t *testing.T) {
	t.Helper()
	c := e.meshClient(t)
	var ev struct {
		Events []struct {
			Type string `json:"type"`
		} `json:"events"`
	}
	if err := c.Call("/events/blocks", map[string]any{"offset": 0, "limit": 1000}, &ev); err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, x := range ev.Events {
		if x.Type == "block_removed" {
			removed++
		}
	}
	if removed == 0 {
		t.Errorf("/events/blocks reports no removed block after the reorg: %d events", len(ev.Events))
	}
	e.meshReconcile(t, c)
}

func orZero(x *big.Int) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return x
}
