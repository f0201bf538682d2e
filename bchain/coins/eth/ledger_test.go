package eth

import (
	"context"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/ethgen"
)

// TestDevNodeScenarioLedger runs ethgen's scenario on a dev chain and checks
// every block the backend decodes against the scenario's oracle: txs and
// their types, receipts and fees, token transfers, internal transfers and
// created contracts; then contract metadata, balances, nonces, token
// balances and the pending txs.
func TestDevNodeScenarioLedger(t *testing.T) {
	dev := startDev(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	led, err := ethgen.Scenario(ctx, dev)
	if err != nil {
		t.Fatal(err)
	}
	b, n := devBackend(t, dev, dev.HTTPURL, nil)
	types := map[uint8]bool{}
	for _, lb := range led.Blocks {
		blk, err := b.Chain.Block(ctx, bchain.Hash(lb.Hash), uint32(lb.Number))
		if err != nil {
			t.Fatalf("block %d: %v", lb.Number, err)
		}
		if blk.Eth.TraceError != "" {
			t.Fatalf("block %d: trace error %s", lb.Number, blk.Eth.TraceError)
		}
		if len(blk.Eth.Txs) != len(lb.Txs) {
			t.Fatalf("block %d: %d txs, ledger has %d", lb.Number, len(blk.Eth.Txs), len(lb.Txs))
		}
		// The ledger lists a block's txs in send order, the block in its
		// own order: compare as sets.
		for i := range blk.Eth.Txs {
			g := &blk.Eth.Txs[i]
			if !slices.Contains(lb.Txs, common.Hash(g.Hash)) || g.Position != i {
				t.Fatalf("block %d tx %d: %s at %d is not in the ledger's block", lb.Number, i, g.Hash, g.Position)
			}
			types[g.Type] = true
			checkLedgerTx(t, led.Txs[common.Hash(g.Hash)], g)
		}
	}
	for typ := range led.TxTypes {
		if !types[typ] {
			t.Errorf("tx type %d mined but not decoded", typ)
		}
	}
	if len(types) < 5 {
		t.Errorf("decoded tx types %v, want all of 0-4", types)
	}

	// Contract metadata of every token, string- and bytes32-named alike.
	for addr, c := range led.Contracts {
		ci, err := n.ContractInfo(ctx, bchain.AddrDesc(addr.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", c.Kind, err)
		}
		if ci.Standard.String() != stdOr(c.Standard) || ci.Name != c.Name || ci.Symbol != c.Symbol || ci.Decimals != c.Decimals {
			t.Errorf("%s: ContractInfo %+v, ledger %+v", c.Kind, ci, c)
		}
	}

	// Account state and ERC20 balances.
	for addr, a := range led.Addresses {
		d := bchain.AddrDesc(addr.Bytes())
		if bal, err := n.Balance(ctx, d, bchain.EthLatest); err != nil || bal.Cmp(a.Balance) != 0 {
			t.Errorf("%s %s: balance %v (%v), ledger %v", a.Name, addr.Hex(), bal, err, a.Balance)
		}
		if nonce, err := n.Nonce(ctx, d, bchain.EthLatest); err != nil || nonce != a.Nonce {
			t.Errorf("%s %s: nonce %d (%v), ledger %d", a.Name, addr.Hex(), nonce, err, a.Nonce)
		}
		for tokAddr, h := range a.Tokens {
			if h.Standard != ethgen.ERC20 {
				continue
			}
			v, err := n.TokenBalance(ctx, d, bchain.AddrDesc(tokAddr.Bytes()))
			if err != nil || v.Cmp(h.Balance) != 0 {
				t.Errorf("%s: token %s balance %v (%v), ledger %v", a.Name, tokAddr.Hex(), v, err, h.Balance)
			}
		}
	}

	// The txs left in the pool.
	ids, err := b.Mempool.MempoolTxids(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range led.Pending {
		if !slices.Contains(ids, bchain.Hash(h)) {
			t.Errorf("pending tx %s not in MempoolTxids %v", h.Hex(), ids)
		}
		ptx, err := n.Tx(ctx, bchain.Hash(h))
		lt := led.Txs[h]
		if err != nil || !ptx.BlockHash.IsZero() || ptx.From != bchain.EthAddress(lt.From) || ptx.Value.Cmp(lt.Value) != 0 {
			t.Errorf("pending tx %s: %+v %v", h.Hex(), ptx, err)
		}
	}
}

func stdOr(s string) string {
	if s == "" {
		return bchain.TokenUnknown.String()
	}
	return s
}

func checkLedgerTx(t *testing.T, lt *ethgen.Tx, g *bchain.EthTx) {
	t.Helper()
	if lt == nil {
		t.Errorf("tx %s not in the ledger", g.Hash)
		return
	}
	name := g.Hash.String()[:10]
	if g.Type != lt.Type || g.From != bchain.EthAddress(lt.From) || g.Nonce != lt.Nonce || g.Value.Cmp(lt.Value) != 0 || (g.To == nil) != (lt.To == nil) ||
		(g.To != nil && *g.To != bchain.EthAddress(*lt.To)) || g.BlockHeight != uint32(lt.BlockNumber) || g.BlockHash != bchain.Hash(lt.BlockHash) {
		t.Errorf("tx %s: %+v, ledger %+v", name, g, lt)
	}
	r := g.Receipt
	if r == nil || r.Status != int(lt.Status) || r.GasUsed != lt.GasUsed {
		t.Errorf("tx %s: receipt %+v, ledger status %d gas %d", name, r, lt.Status, lt.GasUsed)
		return
	}
	// The ledger's fee adds blob gas, which the execution receipt does not
	// carry; for other txs the two must agree.
	fee := new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice)
	if (g.Type != bchain.EthTxBlob && fee.Cmp(lt.Fee) != 0) || fee.Cmp(lt.Fee) > 0 {
		t.Errorf("tx %s: fee %v, ledger %v", name, fee, lt.Fee)
	}
	// Token transfers, in log order.
	if len(g.Transfers) != len(lt.TokenTransfers) {
		t.Errorf("tx %s: token transfers %+v, ledger %+v", name, g.Transfers, lt.TokenTransfers)
	} else {
		for i, w := range lt.TokenTransfers {
			tt := g.Transfers[i]
			if tt.Standard.String() != w.Standard || tt.Contract != bchain.EthAddress(w.Contract) || tt.From != bchain.EthAddress(w.From) ||
				tt.To != bchain.EthAddress(w.To) || tt.Value.Cmp(w.Value) != 0 || (tt.TokenID == nil) != (w.TokenID == nil) ||
				(w.TokenID != nil && tt.TokenID.Cmp(w.TokenID) != 0) {
				t.Errorf("tx %s: token transfer %d %+v, ledger %+v", name, i, tt, w)
			}
		}
	}
	// Internal transfers (none for failed txs: reverted frames never count).
	in := g.Internal
	if in == nil {
		t.Errorf("tx %s: no internal data", name)
		return
	}
	var got []bchain.EthInternalTransfer
	for _, it := range in.Transfers {
		// The ledger lists creations only when they move value.
		if it.Type == bchain.EthInternalCreate && it.Value.Sign() == 0 {
			continue
		}
		got = append(got, it)
	}
	if len(got) != len(lt.InternalTransfers) {
		t.Errorf("tx %s: internal %+v, ledger %+v", name, got, lt.InternalTransfers)
	} else {
		for i, w := range lt.InternalTransfers {
			it := got[i]
			if it.Type.String() != w.Type || it.From != bchain.EthAddress(w.From) || it.To != bchain.EthAddress(w.To) || it.Value.Cmp(w.Value) != 0 {
				t.Errorf("tx %s: internal %d %+v, ledger %+v", name, i, it, w)
			}
		}
	}
	if lt.Created != (common.Address{}) && !slices.Contains(in.Contracts, bchain.EthAddress(lt.Created)) {
		t.Errorf("tx %s: created %v, ledger %s", name, in.Contracts, lt.Created.Hex())
	}
	if lt.Status == 0 && (len(in.Transfers) != 0 || in.Error == "") {
		t.Errorf("tx %s failed but internal data is %+v", name, in)
	}
}
