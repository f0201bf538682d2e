package e2e

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/tools/gethdev"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// Beacon withdrawals in the Mesh Data API, on a geth dev node of its own
// (the shared scenario's node seals blocks only on Commit, and geth's dev
// API that queues withdrawals seals blocks by itself): withdrawals to two
// addresses, indexed by blockbook, reconcile through /block with each
// account's /account/balance, which is the node's.
func TestMeshEthWithdrawals(t *testing.T) {
	ctx := t.Context()
	dev, err := gethdev.Start(ctx, gethdev.Options{Withdrawals: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	alice, bob := common.Address{0xa1, 19: 1}, common.Address{0xb0, 19: 2}
	queued := []struct {
		to   common.Address
		gwei uint64
	}{{alice, 32_000_000_000}, {bob, 1}, {alice, 12_345_678}, {bob, 17}, {alice, 1}}
	want := map[common.Address]*big.Int{}
	blocks := map[uint64]int{}
	for i, w := range queued {
		h, err := dev.AddWithdrawal(ctx, uint64(i), uint64(100+i), w.to, w.gwei)
		if err != nil {
			t.Fatal(err)
		}
		blocks[h]++
		wei := new(big.Int).Mul(new(big.Int).SetUint64(w.gwei), big.NewInt(1e9))
		want[w.to] = new(big.Int).Add(orZero(want[w.to]), wei)
	}
	raw, err := json.Marshal(map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": dev.HTTPURL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 20, "block_addresses_to_keep": 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := startEthMesh(t, dev, raw)

	c := e.meshClient(t)
	r := e.meshReconcile(t, c)
	if r.Types["WITHDRAWAL"] != len(queued) {
		t.Errorf("%d WITHDRAWAL operations, %d withdrawals queued: %v", r.Types["WITHDRAWAL"], len(queued), r.Types)
	}
	eth, _ := meshBalances(t, r)
	for a, w := range want {
		node, err := dev.Client().BalanceAt(ctx, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := orZero(eth[a]); got.Cmp(w) != 0 || node.Cmp(w) != 0 {
			t.Errorf("%s: operations sum to %s wei, the node has %s, the withdrawals %s", a.Hex(), got, node, w)
		}
	}

	// /block/transaction serves a block's withdrawals by their id.
	for h, n := range blocks {
		blk, err := dev.Client().BlockByNumber(ctx, new(big.Int).SetUint64(h))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Transaction meshcheck.AccountTransaction `json:"transaction"`
		}
		err = c.Call("/block/transaction", map[string]any{
			"block_identifier":       map[string]any{"index": h, "hash": blk.Hash().Hex()},
			"transaction_identifier": map[string]any{"hash": blk.Hash().Hex() + "-withdrawals"},
		}, &got)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Transaction.Operations) != n || len(blk.Withdrawals()) != n {
			t.Errorf("block %d: %d operations, %d withdrawals in the node's block, %d queued into it", h, len(got.Transaction.Operations), len(blk.Withdrawals()), n)
		}
	}
}
