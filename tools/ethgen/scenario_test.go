package ethgen

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

func TestContractsEmbedded(t *testing.T) {
	want := []string{Bytes32TokenContract, ChildContract, ENSRegistrarContract, FactoryContract, MetaNFTContract, MultiTokenContract, NFTContract, ReverterContract, SplitterContract, StakingPoolContract, TestUSDContract, TestVaultContract, TokenContract}
	got := ContractNames()
	if len(got) != len(want) {
		t.Fatalf("contracts %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("contracts %v, want %v", got, want)
		}
		if len(MustContract(want[i]).Bytecode) == 0 {
			t.Errorf("%s: no bytecode", want[i])
		}
	}
	if _, ok := MustContract(NFTContract).ABI.Events["Transfer"]; !ok {
		t.Error("NFT has no Transfer event")
	}
}

func TestNamedAccountsStable(t *testing.T) {
	a, b := NewAccount("alice"), NewAccount("alice")
	if a.Addr != b.Addr || a.Addr == NewAccount("bob").Addr {
		t.Fatal("account derivation is not deterministic")
	}
}

// ethCall runs a view method at the latest block and unpacks its outputs.
func ethCall(t *testing.T, n *gethdev.Node, addr common.Address, c *Contract, method string, args ...any) []any {
	t.Helper()
	data := c.MustCalldata(method, args...)
	out, err := n.Client().CallContract(context.Background(), ethereum.CallMsg{To: &addr, Data: data}, nil)
	if err != nil {
		t.Fatalf("%s.%s: %v", c.Name, method, err)
	}
	res, err := c.ABI.Unpack(method, out)
	if err != nil {
		t.Fatalf("%s.%s unpack: %v", c.Name, method, err)
	}
	return res
}

func TestScenarioLedgerMatchesNode(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	n, err := gethdev.Start(ctx, gethdev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	t.Logf("Start took %v", time.Since(start))
	start = time.Now()
	l, err := Scenario(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Scenario took %v: %d blocks, %d txs (%d pending), tx types %v",
		time.Since(start), len(l.Blocks), len(l.Txs), len(l.Pending), l.TxTypes)
	for typ := uint8(0); typ <= types.SetCodeTxType; typ++ {
		if !l.TxTypes[typ] {
			t.Errorf("no mined tx of type %d", typ)
		}
	}

	// ETH balances and nonces of every tracked address.
	for _, a := range l.SortedAddresses() {
		e := l.Addresses[a]
		bal, err := n.Client().BalanceAt(ctx, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bal.Cmp(e.Balance) != 0 {
			t.Errorf("%s %s: balance %v, ledger %v", e.Name, a, bal, e.Balance)
		}
		nonce, err := n.Client().NonceAt(ctx, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if nonce != e.Nonce {
			t.Errorf("%s %s: nonce %d, ledger %d", e.Name, a, nonce, e.Nonce)
		}
		// Token holdings.
		for c, h := range e.Tokens {
			kind := l.Contracts[c].Kind
			ct := MustContract(kind)
			switch h.Standard {
			case ERC20:
				got := ethCall(t, n, c, ct, "balanceOf", a)[0].(*big.Int)
				if got.Cmp(h.Balance) != 0 {
					t.Errorf("%s %s balance %v, ledger %v", e.Name, kind, got, h.Balance)
				}
			case ERC721:
				got := ethCall(t, n, c, ct, "balanceOf", a)[0].(*big.Int)
				if got.Int64() != int64(len(h.NFTs)) {
					t.Errorf("%s NFT count %v, ledger %v", e.Name, got, h.NFTs)
				}
				for id := range h.NFTs {
					v, _ := new(big.Int).SetString(id, 10)
					if owner := ethCall(t, n, c, ct, "ownerOf", v)[0].(common.Address); owner != a {
						t.Errorf("NFT %s owner %s, ledger %s", id, owner, a)
					}
				}
			case ERC1155:
				for id, want := range h.Multi {
					v, _ := new(big.Int).SetString(id, 10)
					if got := ethCall(t, n, c, ct, "balanceOf", v, a)[0].(*big.Int); got.Cmp(want) != 0 {
						t.Errorf("%s ERC1155 id %s: %v, ledger %v", e.Name, id, got, want)
					}
				}
			}
		}
	}

	names := l.Names()
	if ghost := l.Addresses[names["ghost"]]; len(ghost.Txs) != 0 || ghost.Balance.Sign() != 0 {
		t.Errorf("ghost took part in %d txs", len(ghost.Txs))
	}
	if alice := l.Addresses[names["alice"]]; alice.InternalTxs != 2 || alice.NonTokenTxs == 0 || len(alice.PendingTxs) != 2 {
		t.Errorf("alice: internal %d, non-token %d, pending %d", alice.InternalTxs, alice.NonTokenTxs, len(alice.PendingTxs))
	}

	// Contract metadata as an indexer would read it.
	for a, ci := range l.Contracts {
		ct := MustContract(ci.Kind)
		if _, ok := ct.ABI.Methods["symbol"]; !ok {
			continue
		}
		name, symbol := ethCall(t, n, a, ct, "name")[0], ethCall(t, n, a, ct, "symbol")[0]
		if b, ok := name.([32]byte); ok {
			name, symbol = Bytes32ToString(b), Bytes32ToString(symbol.([32]byte))
		}
		if name != ci.Name || symbol != ci.Symbol {
			t.Errorf("%s: name %v symbol %v, ledger %q %q", ci.Kind, name, symbol, ci.Name, ci.Symbol)
		}
	}

	// Per tx: status and the value-moving frames of the call trace.
	c, err := rpc.DialContext(ctx, n.HTTPURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, b := range l.Blocks {
		var traces []struct {
			TxHash common.Hash `json:"txHash"`
			Result callFrame   `json:"result"`
		}
		if err := c.CallContext(ctx, &traces, "debug_traceBlockByHash", b.Hash, map[string]any{"tracer": "callTracer"}); err != nil {
			t.Fatal(err)
		}
		for _, tr := range traces {
			tx := l.Txs[tr.TxHash]
			if tx == nil || tx.BlockHash != b.Hash {
				t.Fatalf("trace of unknown tx %s", tr.TxHash)
			}
			var got []InternalTransfer
			if tr.Result.Error == "" { // a failed tx moves nothing
				for _, f := range tr.Result.Calls {
					f.collect(&got)
				}
			}
			if (tr.Result.Error == "") != (tx.Status == types.ReceiptStatusSuccessful) {
				t.Errorf("tx %s: trace error %q, ledger status %d", tx.Hash, tr.Result.Error, tx.Status)
			}
			if len(got) != len(tx.InternalTransfers) {
				t.Errorf("tx %s: trace internal %+v, ledger %+v", tx.Hash, got, tx.InternalTransfers)
				continue
			}
			for i := range got {
				w := tx.InternalTransfers[i]
				if got[i].Type != w.Type || got[i].From != w.From || got[i].To != w.To || got[i].Value.Cmp(w.Value) != 0 {
					t.Errorf("tx %s internal %d: trace %+v, ledger %+v", tx.Hash, i, got[i], w)
				}
			}
		}
	}

	// Pending txs are in the pool.
	for _, h := range l.Pending {
		if _, pending, err := n.Client().TransactionByHash(ctx, h); err != nil || !pending {
			t.Errorf("tx %s: pending %v, %v", h, pending, err)
		}
	}
}

// callFrame is a callTracer frame.
type callFrame struct {
	Type  string         `json:"type"`
	From  common.Address `json:"from"`
	To    common.Address `json:"to"`
	Value *hexutil.Big   `json:"value"`
	Error string         `json:"error"`
	Calls []callFrame    `json:"calls"`
}

// collect appends the frames that moved value or created a contract,
// skipping reverted frames and everything below them.
func (f callFrame) collect(out *[]InternalTransfer) {
	if f.Error != "" {
		return
	}
	v := new(big.Int)
	if f.Value != nil {
		v = f.Value.ToInt()
	}
	switch f.Type {
	case "CREATE", "CREATE2":
		*out = append(*out, InternalTransfer{InternalCreate, f.From, f.To, v})
	case "SELFDESTRUCT":
		*out = append(*out, InternalTransfer{InternalSelfDestruct, f.From, f.To, v})
	case "CALL":
		if v.Sign() > 0 {
			*out = append(*out, InternalTransfer{InternalCall, f.From, f.To, v})
		}
	}
	for _, c := range f.Calls {
		c.collect(out)
	}
}
