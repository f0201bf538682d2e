package e2e

// OP-stack L1 fees on the explorer's tx page: the vault chain's RPC proxy
// adds a real Optimism receipt's L1 fields to the receipt of one tx (geth's
// dev node has no L1), and the page must show what the API answers for it.

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
)

// opL1Fields are the L1 fields of a recorded OP Mainnet receipt
// (bchain/coins/eth/testdata/chains, block 106812538).
func opL1Fields(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../bchain/coins/eth/testdata/chains/optimism_receipt_l1fee.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Node map[string]any `json:"node"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, k := range []string{"l1Fee", "l1FeeScalar", "l1GasPrice", "l1GasUsed"} {
		if rec.Node[k] == nil {
			t.Fatalf("the recorded receipt has no %s", k)
		}
		out[k] = rec.Node[k]
	}
	return out
}

// withL1Fields adds the fields to every receipt of txid in a JSON-RPC
// answer (single or batch; eth_getTransactionReceipt or
// eth_getBlockReceipts); other answers pass unchanged.
func withL1Fields(body []byte, txid string, fields map[string]any) []byte {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return body
	}
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if h, _ := x["transactionHash"].(string); strings.EqualFold(h, txid) && x["cumulativeGasUsed"] != nil {
				for k, f := range fields {
					x[k] = f
				}
				found = true
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	if !found {
		return body
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// checkL1Fees sends a transfer whose receipt the proxy gives L1 fields and
// compares its API answer with them and its tx page with the answer.
func (c *vaultChain) checkL1Fees(t *testing.T) *htmlPage {
	t.Helper()
	fields := opL1Fields(t)
	tx, err := c.w.Build(context.Background(), c.devAcc, &c.holder.Addr, nil, ethgen.TxOpts{Type: types.DynamicFeeTxType, Value: big.NewInt(12345)})
	if err != nil {
		t.Fatal(err)
	}
	txid := tx.Hash().Hex()
	c.counter.setRewrite(func(b []byte) []byte { return withL1Fields(b, txid, fields) })
	if err := c.dev.Client().SendTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	c.commit(t)
	c.e.waitHead(t)
	var a api.Tx
	c.e.get(t, "/api/v2/tx/"+txid, &a)
	es := a.EthereumSpecific
	hexBig := func(k string) *big.Int {
		v, _ := new(big.Int).SetString(strings.TrimPrefix(fields[k].(string), "0x"), 16)
		return v
	}
	if es == nil || es.L1Fee.String() != hexBig("l1Fee").String() || es.L1GasUsed.String() != hexBig("l1GasUsed").String() ||
		es.L1GasPrice.String() != hexBig("l1GasPrice").String() || es.L1FeeScalar != fields["l1FeeScalar"] {
		t.Fatalf("the API's L1 fields %+v, the receipt's %v", es, fields)
	}
	l1, _ := new(big.Int).SetString(es.L1Fee.String(), 10)
	used, _ := es.L1GasUsed.Int64()
	price := (*big.Int)(es.L1GasPrice)
	p := fetchPage(t, c.e.inst.base, "/tx/"+txid)
	for id, want := range map[string]string{
		"tx-fee":         fmtToken((*big.Int)(a.Fees), 18, "rETH"),
		"tx-l1fee":       fmtToken(l1, 18, "rETH"),
		"tx-l1gasused":   fmtNum(used),
		"tx-l1gasprice":  fmtToken(price, 18, "rETH") + " (" + fmtToken(price, 9, "") + " Gwei)",
		"tx-l1feescalar": es.L1FeeScalar,
	} {
		if got := p.textOf(t, id); got != want {
			t.Errorf("tx %s: %s %q, the API's %q", txid, id, got, want)
		}
	}
	return p
}
