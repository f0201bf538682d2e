package e2e

import (
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/ltcregtest"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// checkLtcMesh is check:data on litecoind's chain: every block walked
// through /block, every account compared with /account/balance wherever
// it changed (0 mismatches), and the tip balances equal the node's own
// ledger. MWEB value is booked as docs/api.md says: a peg-in output pays
// the script pseudo-account of its witness v9 program, the HogEx spends
// the peg-ins and the previous pool output (a v8 program's account) into
// the new pool output and the peg-outs, so the transparent ledger
// reconciles with no exempt account.
func checkLtcMesh(t *testing.T, st *ltcClientsStack) {
	k, err := meshcheck.New()
	if err != nil {
		t.Fatal(err)
	}
	c := &meshcheck.Client{Checker: k, Post: func(path string, body any) (int, []byte, error) { return meshPost(st.mesh+path, "", body) }}
	var list struct {
		NetworkIdentifiers []map[string]any `json:"network_identifiers"`
	}
	if err := c.Call("/network/list", map[string]any{}, &list); err != nil || len(list.NetworkIdentifiers) != 1 {
		t.Fatalf("/network/list: %v %v", err, list)
	}
	c.Network = list.NetworkIdentifiers[0]
	if c.Network["blockchain"] != "Litecoin Regtest" {
		t.Errorf("network %v", c.Network)
	}
	r := meshCheckData(t, c)
	led, _, err := ltcregtest.Ledger(t.Context(), st.node)
	if err != nil {
		t.Fatal(err)
	}
	if r.Blocks != int(led.TipHeight)+1 {
		t.Errorf("walked %d blocks, the node has %d", r.Blocks, led.TipHeight+1)
	}
	for addr, a := range led.Addresses {
		if r.Balances[addr] != a.Balance {
			t.Errorf("%s: operations sum to %d, the node's ledger has %d", addr, r.Balances[addr], a.Balance)
		}
	}

	// The MWEB's transparent side: the peg-in pays a v9 program's account,
	// the first HogEx spends it and creates the pool (v8); a later HogEx
	// pays the peg-out address.
	txsOf := func(h int32) []meshcheck.Transaction {
		var b struct {
			Block struct {
				Transactions []meshcheck.Transaction `json:"transactions"`
			} `json:"block"`
		}
		if err := c.Call("/block", map[string]any{"block_identifier": map[string]any{"index": h}}, &b); err != nil {
			t.Fatal(err)
		}
		return b.Block.Transactions
	}
	accountOps := func(tx meshcheck.Transaction, typ, prefix string) int {
		n := 0
		for _, op := range tx.Operations {
			if op.Type == typ && op.Account != nil && strings.HasPrefix(op.Account.Address, prefix) {
				n++
			}
		}
		return n
	}
	const pegIn, pool = "script:5920", "script:5820" // OP_9/OP_8, a 32-byte push
	txs := txsOf(st.mwebBlock)
	hogEx := txs[len(txs)-1]
	var pegTx *meshcheck.Transaction
	for i := range txs {
		if txs[i].TransactionIdentifier.Hash == st.pegInTxid {
			pegTx = &txs[i]
		}
	}
	if pegTx == nil || accountOps(*pegTx, "OUTPUT", pegIn) != 1 {
		t.Errorf("block %d: the peg-in %s pays no v9 program account: %+v", st.mwebBlock, st.pegInTxid, pegTx)
	}
	if accountOps(hogEx, "INPUT", pegIn) != 1 || accountOps(hogEx, "OUTPUT", pool) != 1 {
		t.Errorf("block %d: the HogEx does not move the peg-in into the pool: %+v", st.mwebBlock, hogEx.Operations)
	}
	txs = txsOf(st.pegOutBlock)
	hogEx = txs[len(txs)-1]
	if accountOps(hogEx, "INPUT", pool) != 1 || accountOps(hogEx, "OUTPUT", st.pegOutAddr) != 1 {
		t.Errorf("block %d: the HogEx pays no peg-out to %s: %+v", st.pegOutBlock, st.pegOutAddr, hogEx.Operations)
	}
}
