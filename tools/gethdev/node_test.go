package gethdev

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

func startNode(t *testing.T, opts Options) *Node {
	t.Helper()
	start := time.Now()
	n, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start took %v (%s)", time.Since(start), n.HTTPURL)
	t.Cleanup(n.Stop)
	return n
}

// sendValue signs and sends a dynamic-fee value transfer from the dev account.
func sendValue(t *testing.T, n *Node, nonce uint64, to common.Address, wei int64) *types.Transaction {
	t.Helper()
	tx := types.MustSignNewTx(n.DevKey, types.LatestSignerForChainID(n.ChainID), &types.DynamicFeeTx{
		ChainID:   n.ChainID,
		Nonce:     nonce,
		GasTipCap: big.NewInt(params.GWei),
		GasFeeCap: big.NewInt(10 * params.GWei),
		Gas:       21000,
		To:        &to,
		Value:     big.NewInt(wei),
	})
	if err := n.Client().SendTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	return tx
}

func TestStartRPC(t *testing.T) {
	n := startNode(t, Options{ChainID: 31337})
	ctx := context.Background()
	for _, url := range []string{n.HTTPURL, n.WSURL} {
		c, err := rpc.DialContext(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		var id hexutil.Big
		if err := c.CallContext(ctx, &id, "eth_chainId"); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if id.ToInt().Int64() != 31337 {
			t.Errorf("%s: chain id %v", url, id.ToInt())
		}
		// Every advertised namespace answers.
		var status map[string]any
		if err := c.CallContext(ctx, &status, "txpool_status"); err != nil {
			t.Errorf("%s txpool_status: %v", url, err)
		}
		var version string
		if err := c.CallContext(ctx, &version, "net_version"); err != nil || version != "31337" {
			t.Errorf("%s net_version %q: %v", url, version, err)
		}
		c.Close()
	}
	bal, err := n.Client().BalanceAt(ctx, n.DevAddr, nil)
	if err != nil || bal.Sign() <= 0 {
		t.Fatalf("dev balance %v: %v", bal, err)
	}
}

func TestCommitAndTraceOldBlock(t *testing.T) {
	n := startNode(t, Options{})
	ctx := context.Background()
	to := common.HexToAddress("0x1111111111111111111111111111111111111111")
	tx := sendValue(t, n, 0, to, 12345)
	h1, err := n.Commit()
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.Client().TransactionReceipt(ctx, tx.Hash())
	if err != nil || r.Status != types.ReceiptStatusSuccessful || r.BlockHash != h1 {
		t.Fatalf("receipt %+v: %v", r, err)
	}
	// Bury the block so its state is old, then trace it: needs archive state.
	for i := 0; i < 5; i++ {
		if _, err := n.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if num, _ := n.Head(); num != 6 {
		t.Fatalf("head %d, want 6", num)
	}
	c, err := rpc.DialContext(ctx, n.HTTPURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var traces []struct {
		TxHash common.Hash `json:"txHash"`
		Result struct {
			Type  string         `json:"type"`
			From  common.Address `json:"from"`
			To    common.Address `json:"to"`
			Value *hexutil.Big   `json:"value"`
		} `json:"result"`
	}
	if err := c.CallContext(ctx, &traces, "debug_traceBlockByHash", h1, map[string]any{"tracer": "callTracer"}); err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || traces[0].TxHash != tx.Hash() || traces[0].Result.To != to || traces[0].Result.Value.ToInt().Int64() != 12345 {
		b, _ := json.Marshal(traces)
		t.Fatalf("trace %s", b)
	}
	// Historical state is kept too.
	bal, err := n.Client().BalanceAt(ctx, to, big.NewInt(0))
	if err != nil || bal.Sign() != 0 {
		t.Fatalf("balance at genesis %v: %v", bal, err)
	}
}

func TestForkReplacesTip(t *testing.T) {
	n := startNode(t, Options{})
	ctx := context.Background()
	base, err := n.Commit()
	if err != nil {
		t.Fatal(err)
	}
	to := common.HexToAddress("0x2222222222222222222222222222222222222222")
	tx := sendValue(t, n, 0, to, 1)
	a2, err := n.Commit()
	if err != nil {
		t.Fatal(err)
	}
	a3, err := n.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Fork(base); err != nil {
		t.Fatal(err)
	}
	// The tx of the dropped block returns to the pool; the new branch mines
	// it again, in a different block. Seal two blocks to overtake a3.
	b2, err := n.Commit()
	if err != nil {
		t.Fatal(err)
	}
	b3, err := n.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if b2 == a2 || b3 == a3 {
		t.Fatal("fork produced the same blocks")
	}
	num, head := n.Head()
	if num != 3 || head != b3 {
		t.Fatalf("head %d %s, want 3 %s", num, head, b3)
	}
	got, err := n.Client().BlockByNumber(ctx, big.NewInt(2))
	if err != nil || got.Hash() != b2 {
		t.Fatalf("block 2 %v: %v", got, err)
	}
	if _, err := n.Client().BlockByHash(ctx, a2); err != nil {
		t.Errorf("side block a2 gone: %v", err)
	}
	r, err := n.Client().TransactionReceipt(ctx, tx.Hash())
	if err != nil || r.BlockHash != b2 {
		t.Fatalf("tx not re-mined in b2: %+v %v", r, err)
	}
}

// Back-to-back txs of one sender must all land in the next block (see
// syncSendAPI). The in-process client is fast enough to hit the race.
func TestBackToBackTxsInOneBlock(t *testing.T) {
	n := startNode(t, Options{})
	ctx := context.Background()
	c := n.Client().Client()
	const count = 20
	signer := types.LatestSignerForChainID(n.ChainID)
	for round := 0; round < 10; round++ {
		for i := 0; i < count; i++ {
			to := common.BigToAddress(big.NewInt(int64(1000 + i)))
			tx := types.MustSignNewTx(n.DevKey, signer, &types.LegacyTx{
				Nonce: uint64(round*count + i), GasPrice: big.NewInt(10 * params.GWei), Gas: 21000, To: &to, Value: big.NewInt(1),
			})
			raw, _ := tx.MarshalBinary()
			if err := c.CallContext(ctx, nil, "eth_sendRawTransaction", hexutil.Bytes(raw)); err != nil {
				t.Fatal(err)
			}
		}
		h, err := n.Commit()
		if err != nil {
			t.Fatal(err)
		}
		b, err := n.Client().BlockByHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Transactions()) != count {
			t.Fatalf("round %d: block has %d txs, want %d", round, len(b.Transactions()), count)
		}
	}
}

// What a block paid can be spent right after Commit: the pool has moved
// to the new head, so it does not refuse the spend for lack of funds.
func TestCommitFundsTheNextSend(t *testing.T) {
	n := startNode(t, Options{})
	signer := types.LatestSignerForChainID(n.ChainID)
	for i := 0; i < 30; i++ {
		key, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		sendValue(t, n, uint64(i), crypto.PubkeyToAddress(key.PublicKey), params.Ether)
		if _, err := n.Commit(); err != nil {
			t.Fatal(err)
		}
		back := types.MustSignNewTx(key, signer, &types.DynamicFeeTx{
			ChainID: n.ChainID, GasTipCap: big.NewInt(params.GWei), GasFeeCap: big.NewInt(10 * params.GWei),
			Gas: 21000, To: &n.DevAddr, Value: big.NewInt(1),
		})
		if err := n.Client().SendTransaction(context.Background(), back); err != nil {
			t.Fatalf("round %d: spending what the block paid: %v", i, err)
		}
		if _, err := n.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// A node restarted on the same directory keeps its chain.
func TestRestartKeepsChain(t *testing.T) {
	dir := t.TempDir()
	n, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sendValue(t, n, 0, common.HexToAddress("0x3333333333333333333333333333333333333333"), 7)
	h, err := n.Commit()
	if err != nil {
		t.Fatal(err)
	}
	n.Stop()
	n = startNode(t, Options{Dir: dir})
	if num, head := n.Head(); num != 1 || head != h {
		t.Fatalf("head after restart %d %s, want 1 %s", num, head, h)
	}
	sendValue(t, n, 1, common.HexToAddress("0x3333333333333333333333333333333333333333"), 7)
	if _, err := n.Commit(); err != nil {
		t.Fatal(err)
	}
	bal, err := n.Client().BalanceAt(context.Background(), common.HexToAddress("0x3333333333333333333333333333333333333333"), nil)
	if err != nil || bal.Int64() != 14 {
		t.Fatalf("balance %v: %v", bal, err)
	}
}

// TestFutureGenesisFixesTimes: with a genesis in the future each block is
// stamped one second after its parent; with the default genesis the clock
// rules.
func TestFutureGenesisFixesTimes(t *testing.T) {
	genesis := uint64(time.Now().Add(24 * time.Hour).Unix())
	blockTime := func(n *Node) uint64 {
		t.Helper()
		h, err := n.Commit()
		if err != nil {
			t.Fatal(err)
		}
		head, err := n.Client().HeaderByHash(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		return head.Time
	}
	n := startNode(t, Options{GenesisTime: genesis})
	sendValue(t, n, 0, common.HexToAddress("0x1234"), 5)
	if t1, t2 := blockTime(n), blockTime(n); t1 != genesis+1 || t2 != genesis+2 {
		t.Errorf("blocks at %d and %d, want %d and %d", t1, t2, genesis+1, genesis+2)
	}
	if tm, now := blockTime(startNode(t, Options{})), time.Now().Unix(); int64(tm) < now-60 || int64(tm) > now+1 {
		t.Errorf("default genesis: block 1 at %d, the clock at %d", tm, now)
	}
}
