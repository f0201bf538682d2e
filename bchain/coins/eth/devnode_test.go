package eth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// startDev starts an in-process geth dev chain for one test.
func startDev(t *testing.T) *gethdev.Node {
	t.Helper()
	if testing.Short() {
		t.Skip("dev node tests skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dev, err := gethdev.Start(ctx, gethdev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	// The first block sealed after genesis comes out empty whatever the
	// pool holds (gethdev v1 quirk), so seal it here: tests start at 1.
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}
	return dev
}

func devBackend(t *testing.T, dev *gethdev.Node, httpURL string, extra map[string]any) (*bchain.Backend, *Node) {
	t.Helper()
	doc := map[string]any{"coin_name": "Ethereum Regtest", "rpc_url": httpURL, "rpc_url_ws": dev.WSURL, "rpc_timeout": 10, "eip1559Fees": true,
		"block_subscription_timeout_ms": 60000, "block_poll_interval_ms": 100}
	for k, v := range extra {
		doc[k] = v
	}
	raw, _ := json.Marshal(doc)
	cfg, err := bchain.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the backend: %v", err)
		}
	})
	return b, b.Eth.(*Node)
}

// devTxs signs and sends a legacy, a 2930, a 1559, a set-code (7702) tx and
// a contract creation from the dev account.
func devTxs(t *testing.T, dev *gethdev.Node) []*types.Transaction {
	t.Helper()
	ctx := context.Background()
	cl := dev.Client()
	nonce, err := cl.PendingNonceAt(ctx, dev.DevAddr)
	if err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(dev.ChainID)
	rcpt := common.HexToAddress(to)
	gp := big.NewInt(2e9)
	// Init code returning an empty runtime: PUSH1 0 PUSH1 0 RETURN.
	initCode := []byte{0x60, 0x00, 0x60, 0x00, 0xf3}
	// The authority is another account: the pool refuses delegations of an
	// account that has pending txs.
	authKey, _ := crypto.ToECDSA(crypto.Keccak256([]byte("eth test authority")))
	auth, err := types.SignSetCode(authKey, types.SetCodeAuthorization{ChainID: *uint256FromBig(dev.ChainID), Address: common.HexToAddress(tok)})
	if err != nil {
		t.Fatal(err)
	}
	inner := []types.TxData{
		&types.LegacyTx{Nonce: nonce, GasPrice: gp, Gas: 21000, To: &rcpt, Value: big.NewInt(1)},
		&types.AccessListTx{ChainID: dev.ChainID, Nonce: nonce + 1, GasPrice: gp, Gas: 30000, To: &rcpt, Value: big.NewInt(2),
			AccessList: types.AccessList{{Address: rcpt, StorageKeys: []common.Hash{{1}}}}},
		&types.DynamicFeeTx{ChainID: dev.ChainID, Nonce: nonce + 2, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(3e9), Gas: 21000, To: &rcpt, Value: big.NewInt(3)},
		&types.DynamicFeeTx{ChainID: dev.ChainID, Nonce: nonce + 3, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(3e9), Gas: 100000, Data: initCode},
		&types.SetCodeTx{ChainID: uint256FromBig(dev.ChainID), Nonce: nonce + 4, GasTipCap: uint256FromBig(big.NewInt(1e9)), GasFeeCap: uint256FromBig(big.NewInt(3e9)),
			Gas: 100000, To: rcpt, Value: uint256FromBig(big.NewInt(5)), AuthList: []types.SetCodeAuthorization{auth}},
	}
	var txs []*types.Transaction
	for _, d := range inner {
		tx, err := types.SignNewTx(dev.DevKey, signer, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.SendTransaction(ctx, tx); err != nil {
			t.Fatalf("send type %d: %v", tx.Type(), err)
		}
		txs = append(txs, tx)
	}
	return txs
}

func TestDevNodeChain(t *testing.T) {
	dev := startDev(t)
	ctx := context.Background()
	b, n := devBackend(t, dev, dev.HTTPURL, nil)
	txs := devTxs(t, dev)
	hash := commitWith(t, dev, len(txs))
	height, best, err := b.Chain.BestBlock(ctx)
	if err != nil || best != bchain.Hash(hash) || height != 2 {
		t.Fatalf("BestBlock %d %s %v", height, best, err)
	}
	if h, err := b.Chain.BlockHash(ctx, 2); err != nil || h != best {
		t.Fatalf("BlockHash %s %v", h, err)
	}
	if _, err := b.Chain.BlockHash(ctx, 5); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Fatalf("BlockHash above tip: %v", err)
	}
	if h, err := b.Chain.BlockHeight(ctx, best); err != nil || h != 2 {
		t.Fatalf("BlockHeight %d %v", h, err)
	}
	ci, err := b.Chain.ChainInfo(ctx)
	if err != nil || ci.Blocks != 2 || ci.BestBlockHash != "0x"+best.String() || ci.Chain != "testnet 1337" || ci.Headers != 0 || !strings.Contains(ci.Version, "gethdev") {
		t.Fatalf("ChainInfo %+v %v", ci, err)
	}
	blk, err := b.Chain.Block(ctx, best, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkDevBlock(t, dev, blk, txs)

	// Balances and nonces, latest and historical.
	dd := bchain.AddrDesc(dev.DevAddr.Bytes())
	if v, err := n.Nonce(ctx, dd, bchain.EthLatest); err != nil || v != 5 {
		t.Errorf("nonce %d %v", v, err)
	}
	if v, err := n.Nonce(ctx, dd, 0); err != nil || v != 0 {
		t.Errorf("nonce at 0: %d %v", v, err)
	}
	rd := bchain.AddrDesc(common.HexToAddress(to).Bytes())
	if v, err := n.Balance(ctx, rd, bchain.EthLatest); err != nil || v.Int64() != 11 {
		t.Errorf("balance %v %v", v, err)
	}
	if v, err := n.Balance(ctx, rd, 0); err != nil || v.Sign() != 0 {
		t.Errorf("balance at 0: %v %v", v, err)
	}

	// Fees.
	fees, err := n.EIP1559Fees(ctx)
	if err != nil || fees.BaseFee.Sign() <= 0 || fees.Low.MaxFeePerGas.Cmp(fees.BaseFee) <= 0 || fees.Instant.MaxPriorityFeePerGas.Cmp(fees.Low.MaxPriorityFeePerGas) < 0 {
		t.Errorf("EIP1559Fees %+v %v", fees, err)
	}
	if gp, err := n.GasPrice(ctx); err != nil || gp.Sign() <= 0 {
		t.Errorf("GasPrice %v %v", gp, err)
	}
	if f, err := b.Fees.EstimateFee(ctx, 2, false); err != nil || f <= 0 {
		t.Errorf("EstimateFee %v %v", f, err)
	}

	// Send a raw tx: pending, in the mempool, then mined.
	nonce, _ := dev.Client().PendingNonceAt(ctx, dev.DevAddr)
	rcpt := common.HexToAddress(to)
	tx, _ := types.SignNewTx(dev.DevKey, types.LatestSignerForChainID(dev.ChainID),
		&types.DynamicFeeTx{ChainID: dev.ChainID, Nonce: nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(3e9), Gas: 21000, To: &rcpt, Value: big.NewInt(7)})
	raw, _ := tx.MarshalBinary()
	if h, err := b.Broadcast.SendRawTx(ctx, raw); err != nil || h != bchain.Hash(tx.Hash()) {
		t.Fatalf("SendRawTx %s %v", h, err)
	}
	var re *bchain.RPCError
	if _, err := b.Broadcast.SendRawTx(ctx, raw); !errors.As(err, &re) {
		t.Errorf("duplicate tx: %v, want the node's RPCError", err)
	}
	if _, err := b.Broadcast.SendRawTx(ctx, []byte{1, 2, 3}); !errors.As(err, &re) {
		t.Errorf("garbage tx: %v, want the node's RPCError", err)
	}
	ptx, err := n.Tx(ctx, bchain.Hash(tx.Hash()))
	if err != nil || !ptx.BlockHash.IsZero() || ptx.From != bchain.EthAddress(dev.DevAddr) || ptx.Value.Int64() != 7 {
		t.Fatalf("pending Tx %+v %v", ptx, err)
	}
	// geth's pool drops the txs of the block just sealed asynchronously, so
	// under load they may still be listed: the sent tx must be there.
	ids, err := b.Mempool.MempoolTxids(ctx)
	if err != nil || !slices.Contains(ids, bchain.Hash(tx.Hash())) {
		t.Fatalf("MempoolTxids %v %v", ids, err)
	}
	h2 := commitWith(t, dev, 1)
	if mtx, err := n.Tx(ctx, bchain.Hash(tx.Hash())); err != nil || mtx.BlockHash != bchain.Hash(h2) || mtx.BlockHeight != 3 {
		t.Fatalf("mined Tx %+v %v", mtx, err)
	}
}

// checkDevBlock compares a decoded block with the txs devTxs sent.
func checkDevBlock(t *testing.T, dev *gethdev.Node, blk *bchain.Block, txs []*types.Transaction) {
	t.Helper()
	e := blk.Eth
	if e == nil || len(e.Txs) != len(txs) || e.BaseFee == nil || e.Miner != bchain.EthAddress(dev.Coinbase) || !e.Traced || e.TraceError != "" {
		t.Fatalf("block %+v", e)
	}
	for i, tx := range txs {
		g := e.Txs[i]
		if g.Hash != bchain.Hash(tx.Hash()) || g.Type != tx.Type() || g.From != bchain.EthAddress(dev.DevAddr) || g.Nonce != tx.Nonce() ||
			g.Value.Cmp(tx.Value()) != 0 || g.GasLimit != tx.Gas() || !bytes.Equal(g.Data, tx.Data()) || g.Position != i {
			t.Errorf("tx %d: %+v", i, g)
		}
		if g.Receipt == nil || g.Receipt.Status != bchain.EthStatusSuccess || g.Receipt.GasUsed == 0 || g.Receipt.EffectiveGasPrice.Sign() <= 0 {
			t.Errorf("tx %d receipt %+v", i, g.Receipt)
		}
		if g.Internal == nil || g.Internal.Error != "" {
			t.Errorf("tx %d internal %+v", i, g.Internal)
		}
	}
	create := e.Txs[3]
	want := bchain.EthAddress(crypto.CreateAddress(dev.DevAddr, txs[3].Nonce()))
	if create.To != nil || create.Receipt.ContractAddress == nil || *create.Receipt.ContractAddress != want ||
		create.Internal.Type != bchain.EthInternalCreate || len(create.Internal.Contracts) != 1 || create.Internal.Contracts[0] != want {
		t.Errorf("creation: to %v receipt %+v internal %+v", create.To, create.Receipt, create.Internal)
	}
	if e.Txs[2].MaxFeePerGas.Int64() != 3e9 || e.Txs[2].MaxPriorityFeePerGas.Int64() != 1e9 {
		t.Errorf("1559 fields %+v", e.Txs[2])
	}
}

// refusingProxy forwards JSON-RPC to the node but answers the refused
// methods with -32601, like a node that lacks them.
func refusingProxy(t *testing.T, target string, refused ...string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var q rpcReq
		if json.Unmarshal(body, &q) == nil {
			for _, m := range refused {
				if q.Method == m {
					writeJSON(t, w, rpcResp{JSONRPC: "2.0", ID: q.ID, Error: &rpcErrObj{Code: -32601, Message: "the method " + m + " does not exist/is not available"}})
					return
				}
			}
		}
		resp, err := http.Post(target, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		if _, err := io.Copy(w, resp.Body); err != nil {
			// The status is sent; the client sees a cut answer and fails on
			// its own, or it hung up and no longer cares.
			t.Logf("proxy: relaying the node's answer: %v", err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDevNodeReceiptsFallback(t *testing.T) {
	dev := startDev(t)
	proxy := refusingProxy(t, dev.HTTPURL, "eth_getBlockReceipts", "txpool_content")
	b, n := devBackend(t, dev, proxy.URL, nil)
	txs := devTxs(t, dev)
	hash := commitWith(t, dev, len(txs))
	blk, err := b.Chain.Block(context.Background(), bchain.Hash(hash), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !n.noBlockReceipts.Load() {
		t.Fatal("the fallback path was not taken")
	}
	checkDevBlock(t, dev, blk, txs)
}

func TestDevNodeNotifications(t *testing.T) {
	dev := startDev(t)
	b, _ := devBackend(t, dev, dev.HTTPURL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	heads := make(chan struct{}, 16)
	pend := make(chan bchain.Hash, 16)
	blockErr, txErr := make(chan error, 1), make(chan error, 1)
	go func() { blockErr <- b.Notifier.Run(ctx, func() { heads <- struct{}{} }) }()
	go func() { txErr <- b.TxNotifier.Run(ctx, func(h bchain.Hash) { pend <- h }) }()
	// Run returns nil once ctx ends; an error means it could not work at all.
	defer func() {
		cancel()
		if err := <-blockErr; err != nil {
			t.Errorf("block notifier: %v", err)
		}
		if err := <-txErr; err != nil {
			t.Errorf("tx notifier: %v", err)
		}
	}()
	time.Sleep(500 * time.Millisecond) // let both subscribe
	txs := devTxs(t, dev)
	for range txs {
		select {
		case <-pend:
		case <-time.After(10 * time.Second):
			t.Fatal("no pending tx notification")
		}
	}
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heads:
	case <-time.After(10 * time.Second):
		t.Fatal("no new head notification")
	}
}

func TestDevNodeDown(t *testing.T) {
	dev := startDev(t)
	b, _ := devBackend(t, dev, dev.HTTPURL, nil)
	ctx := context.Background()
	if _, _, err := b.Chain.BestBlock(ctx); err != nil {
		t.Fatal(err)
	}
	dev.Stop()
	if _, _, err := b.Chain.BestBlock(ctx); !errors.Is(err, bchain.ErrNodeUnavailable) {
		t.Fatalf("stopped node: %v, want ErrNodeUnavailable", err)
	}
}

// commitWith waits until the pool holds n pending txs (it promotes them
// asynchronously), then seals a block.
func commitWith(t *testing.T, dev *gethdev.Node, n int) common.Hash {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pending, _ := dev.Eth().TxPool().Stats()
		if pending >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool has %d pending txs, want %d", pending, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	h, err := dev.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func uint256FromBig(b *big.Int) *uint256.Int {
	u, _ := uint256.FromBig(b)
	return u
}
