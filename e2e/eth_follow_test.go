package e2e

// Following the node on an Ethereum-type chain: reorgs and websocket
// notifications (run by TestEthAPIMatchesLedger on its stack).

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
)

// checkReorg forks the node below the token blocks: the address answers
// must follow the new branch (the node is the oracle: its receipts tell
// which txs are on the active chain now).
func (e *ethE2E) checkReorg(t *testing.T) {
	t.Helper()
	if _, err := e.dev.Commit(); err != nil { // mine the pending txs (Fork needs an empty pool)
		t.Fatal(err)
	}
	e.waitHead(t)
	fork := e.ledger.Blocks[1]
	// The address with the most txs above the fork point.
	var addr common.Address
	best := 0
	for _, a := range e.ledger.SortedAddresses() {
		n := 0
		for h := range e.ledger.Addresses[a].Txs {
			if e.ledger.Txs[h].BlockNumber > fork.Number {
				n++
			}
		}
		if n > best {
			addr, best = a, n
		}
	}
	var before api.Address
	e.get(t, "/api/v2/address/"+addr.Hex()+"?details=txs&pageSize=1000", &before)
	if err := e.dev.Fork(fork.Hash); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.dev.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	e.waitHead(t)
	var after api.Address
	e.get(t, "/api/v2/address/"+addr.Hex()+"?details=txs&pageSize=1000", &after)
	ctx := context.Background()
	cl := e.dev.Client()
	for _, tx := range after.Transactions {
		hdr, err := cl.HeaderByNumber(ctx, big.NewInt(tx.BlockHeight))
		if err != nil || hdr.Hash().Hex() != tx.BlockHash {
			t.Errorf("after the reorg %s lists tx %s in block %d %s, not on the active chain (%v)", addr, tx.Txid, tx.BlockHeight, tx.BlockHash, err)
		}
	}
	// Every tx the address had that the node still has mined is listed.
	listed := map[string]bool{}
	for _, tx := range after.Transactions {
		listed[tx.Txid] = true
	}
	for _, tx := range before.Transactions {
		rc, err := cl.TransactionReceipt(ctx, common.HexToHash(tx.Txid))
		if err == nil && rc.BlockNumber != nil && !listed[tx.Txid] && tx.BlockHeight <= int64(fork.Number) {
			t.Errorf("after the reorg %s misses tx %s of block %d", addr, tx.Txid, tx.BlockHeight)
		}
	}
	bal, err := cl.BalanceAt(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.Balance.String() != bal.String() || after.Txs != len(after.Transactions) || after.Txs >= before.Txs && best > 0 && len(after.Transactions) == len(before.Transactions) && sameBlocks(before, after) {
		t.Errorf("after the reorg %s: balance %s (node %s), %d txs (before %d), answer unchanged", addr, after.Balance, bal, after.Txs, before.Txs)
	}
}

func sameBlocks(a, b api.Address) bool {
	if len(a.Transactions) != len(b.Transactions) {
		return false
	}
	for i := range a.Transactions {
		if a.Transactions[i].BlockHash != b.Transactions[i].BlockHash {
			return false
		}
	}
	return true
}

// checkWsNotifications: an address subscriber hears of a payment when it
// enters the mempool and again when a block mines it.
func (e *ethE2E) checkWsNotifications(t *testing.T) {
	t.Helper()
	to := common.Address{0x5e, 0x1f}
	c := newWS(t, e.inst.base)
	var sub struct {
		Subscribed bool `json:"subscribed"`
	}
	id := c.ok("subscribeAddresses", map[string]any{"addresses": []string{to.Hex()}, "newBlockTxs": true}, &sub)
	blockID := c.ok("subscribeNewBlock", nil, &sub)
	ctx := context.Background()
	w, err := ethgen.NewWallet(ctx, e.dev.Client())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := w.Transfer(ctx, ethgen.AccountFromKey("dev", e.dev.DevKey), to, big.NewInt(1234), 2)
	if err != nil {
		t.Fatal(err)
	}
	var n struct {
		Address string `json:"address"`
		Tx      api.Tx `json:"tx"`
	}
	c.notification(id, &n)
	if n.Address != to.Hex() || n.Tx.Txid != tx.Hash().Hex() || n.Tx.BlockHeight != -1 {
		t.Fatalf("mempool notification %+v", n)
	}
	head, err := e.dev.Commit()
	if err != nil {
		t.Fatal(err)
	}
	// The new block's notification carries its gas figures (evmData).
	var nb map[string]any
	c.notification(blockID, &nb)
	hdr, err := e.dev.Client().HeaderByHash(context.Background(), head)
	if err != nil {
		t.Fatal(err)
	}
	wantEvm := map[string]any{"baseFeePerGas": hdr.BaseFee.String(), "blockGasUsed": fmt.Sprint(hdr.GasUsed), "blockGasLimit": fmt.Sprint(hdr.GasLimit)}
	if nb["hash"] != head.Hex() || nb["height"] != float64(hdr.Number.Uint64()) || !maps.Equal(asStrings(nb["evmData"]), asStrings(wantEvm)) {
		t.Fatalf("new block notification %v, want %s with evmData %v", nb, head.Hex(), wantEvm)
	}
	e.golden(t, "ws-notification-block", nb)
	c.notification(id, &n)
	if n.Tx.Txid != tx.Hash().Hex() || n.Tx.BlockHeight < 1 {
		t.Fatalf("block notification %+v", n)
	}
}

// asStrings renders a JSON object's values as strings (nil: not an object).
func asStrings(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k] = fmt.Sprint(x)
	}
	return out
}
