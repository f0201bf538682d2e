package eth

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/openexplorer/blockbook/bchain"
)

const fakeChainID = 1337

var (
	fakeBlockHash  = common.HexToHash("0xb10c000000000000000000000000000000000000000000000000000000000001")
	fakeParentHash = common.HexToHash("0xb10c000000000000000000000000000000000000000000000000000000000000")
)

// signedTxs returns one signed tx of every type (plus an unprotected
// pre-EIP-155 legacy tx) and the sender.
func signedTxs(t *testing.T) ([]*types.Transaction, common.Address) {
	key, _ := crypto.GenerateKey()
	sender := crypto.PubkeyToAddress(key.PublicKey)
	id := big.NewInt(fakeChainID)
	to := common.HexToAddress(to)
	signer := types.LatestSignerForChainID(id)
	al := types.AccessList{{Address: to, StorageKeys: []common.Hash{{1}}}}
	inner := []types.TxData{
		&types.LegacyTx{Nonce: 0, GasPrice: big.NewInt(3e9), Gas: 21000, To: &to, Value: big.NewInt(1)},
		&types.AccessListTx{ChainID: id, Nonce: 1, GasPrice: big.NewInt(3e9), Gas: 30000, To: &to, Value: big.NewInt(2), AccessList: al},
		&types.DynamicFeeTx{ChainID: id, Nonce: 2, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(5e9), Gas: 100000, To: nil, Data: []byte{0x60, 0x80}},
		&types.BlobTx{ChainID: uint256.NewInt(fakeChainID), Nonce: 3, GasTipCap: uint256.NewInt(1e9), GasFeeCap: uint256.NewInt(5e9), Gas: 21000, To: to,
			Value: uint256.NewInt(4), BlobFeeCap: uint256.NewInt(7), BlobHashes: []common.Hash{{0x01, 2}}},
		&types.SetCodeTx{ChainID: uint256.NewInt(fakeChainID), Nonce: 4, GasTipCap: uint256.NewInt(1e9), GasFeeCap: uint256.NewInt(5e9), Gas: 50000, To: to,
			Value: uint256.NewInt(5), AuthList: []types.SetCodeAuthorization{{ChainID: *uint256.NewInt(fakeChainID), Address: to, Nonce: 9}}},
	}
	var txs []*types.Transaction
	for _, d := range inner {
		tx, err := types.SignNewTx(key, signer, d)
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	old, err := types.SignNewTx(key, types.HomesteadSigner{}, &types.LegacyTx{Nonce: 5, GasPrice: big.NewInt(3e9), Gas: 21000, To: &to, Value: big.NewInt(6)})
	if err != nil {
		t.Fatal(err)
	}
	return append(txs, old), sender
}

// txJSON is a tx as eth_getBlockByHash returns it.
func txJSON(t *testing.T, tx *types.Transaction, from common.Address, i int) map[string]any {
	b, err := tx.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["from"] = from
	m["blockHash"] = fakeBlockHash
	m["blockNumber"] = "0x7"
	m["transactionIndex"] = hexutil.Uint64(i)
	if tx.Type() >= types.DynamicFeeTxType {
		m["gasPrice"] = "0x77359400" // 2 gwei: what the tx actually paid
	}
	return m
}

// serveBlock scripts a fake node with a block of txs; each tx logs one
// ERC20 transfer; the trace gives each tx one internal transfer.
func serveBlock(t *testing.T, f *fakeNode, txs []*types.Transaction, sender common.Address) {
	f.answer("eth_chainId", hexutil.Uint64(fakeChainID))
	var jtxs []any
	var receipts []map[string]any
	var traces []map[string]any
	for i, tx := range txs {
		jtxs = append(jtxs, txJSON(t, tx, sender, i))
		r := map[string]any{
			"transactionHash": tx.Hash(), "status": "0x1", "gasUsed": hexutil.Uint64(21000 + i),
			"effectiveGasPrice": "0x77359400", "contractAddress": nil,
			"logs": []any{map[string]any{"address": tok, "topics": []any{common.Hash(topicTransfer), common.Hash(addrTopic(from)), common.Hash(addrTopic(to))},
				"data": hexutil.Bytes(word(int64(100 + i))), "logIndex": hexutil.Uint(i)}},
		}
		if tx.To() == nil {
			r["contractAddress"] = crypto.CreateAddress(sender, tx.Nonce())
		}
		if i == 1 {
			r["status"] = "0x0"
		}
		if i == 5 {
			delete(r, "status") // pre-Byzantium style
			r["root"] = common.Hash{1}
			delete(r, "effectiveGasPrice")
		}
		receipts = append(receipts, r)
		traces = append(traces, map[string]any{"txHash": tx.Hash(), "result": map[string]any{
			"type": "CALL", "from": sender, "to": to, "value": "0x0",
			"calls": []any{map[string]any{"type": "CALL", "from": to, "to": op, "value": hexutil.Uint64(10 + i)}},
		}})
	}
	block := map[string]any{
		"hash": fakeBlockHash, "parentHash": fakeParentHash, "number": "0x7", "timestamp": "0x64", "size": "0x400",
		"miner": op, "gasUsed": "0x5208", "gasLimit": "0x1c9c380", "baseFeePerGas": "0x3b9aca00", "transactions": jtxs,
	}
	hashes := make([]common.Hash, len(txs))
	for i, tx := range txs {
		hashes[i] = tx.Hash()
	}
	f.handle("eth_getBlockByHash", func(p []json.RawMessage) (any, *rpcErrObj) {
		if len(p) > 1 && string(p[1]) == "false" {
			short := map[string]any{}
			for k, v := range block {
				short[k] = v
			}
			short["transactions"] = hashes
			return short, nil
		}
		return block, nil
	})
	f.answer("eth_getBlockReceipts", receipts)
	f.answer("debug_traceBlockByHash", traces)
	byHash := map[common.Hash]any{}
	for _, r := range receipts {
		byHash[r["transactionHash"].(common.Hash)] = r
	}
	f.handle("eth_getTransactionReceipt", func(p []json.RawMessage) (any, *rpcErrObj) {
		var h common.Hash
		if err := json.Unmarshal(p[0], &h); err != nil {
			return nil, &rpcErrObj{Code: -32602, Message: "invalid params: " + err.Error()}
		}
		return byHash[h], nil
	})
}

func TestFakeBlockAllTxTypes(t *testing.T) {
	txs, sender := signedTxs(t)
	f := newFakeNode(t)
	serveBlock(t, f, txs, sender)
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	b, err := n.Block(context.Background(), bchain.Hash(fakeBlockHash), 7)
	if err != nil {
		t.Fatal(err)
	}
	if b.Height != 7 || b.Prev != bchain.Hash(fakeParentHash) || b.Time != 100 || b.Size != 1024 || b.Eth == nil {
		t.Fatalf("header %+v", b.BlockHeader)
	}
	e := b.Eth
	if e.BaseFee.Int64() != 1e9 || e.GasLimit != 30000000 || e.Miner != addr(op) || !e.Traced || e.TraceError != "" || len(e.Txs) != len(txs) {
		t.Fatalf("eth block %+v", e)
	}
	for i, tx := range txs {
		g := e.Txs[i]
		if g.Hash != bchain.Hash(tx.Hash()) || g.Type != tx.Type() || g.From != bchain.EthAddress(sender) || g.Nonce != tx.Nonce() ||
			g.Value.Cmp(tx.Value()) != 0 || g.GasLimit != tx.Gas() || g.Position != i || g.BlockHeight != 7 || string(g.Data) != string(tx.Data()) {
			t.Errorf("tx %d decoded as %+v", i, g)
		}
		if (tx.To() == nil) != (g.To == nil) {
			t.Errorf("tx %d: to %v", i, g.To)
		}
		if tx.Type() >= types.DynamicFeeTxType {
			if g.MaxFeePerGas.Cmp(tx.GasFeeCap()) != 0 || g.MaxPriorityFeePerGas.Cmp(tx.GasTipCap()) != 0 || g.GasPrice.Int64() != 2e9 {
				t.Errorf("tx %d: fees %v %v %v", i, g.MaxFeePerGas, g.MaxPriorityFeePerGas, g.GasPrice)
			}
		} else if g.MaxFeePerGas != nil || g.GasPrice.Cmp(tx.GasPrice()) != 0 {
			t.Errorf("tx %d: legacy fees %v %v", i, g.MaxFeePerGas, g.GasPrice)
		}
		if g.Receipt == nil || g.Receipt.GasUsed != uint64(21000+i) || len(g.Receipt.Logs) != 1 || g.Receipt.EffectiveGasPrice == nil {
			t.Fatalf("tx %d: receipt %+v", i, g.Receipt)
		}
		if len(g.Transfers) != 1 || g.Transfers[0].Value.Int64() != int64(100+i) || g.Transfers[0].Standard != bchain.TokenERC20 {
			t.Errorf("tx %d: transfers %+v", i, g.Transfers)
		}
		if g.Internal == nil || len(g.Internal.Transfers) != 1 || g.Internal.Transfers[0].Value.Int64() != int64(10+i) {
			t.Errorf("tx %d: internal %+v", i, g.Internal)
		}
	}
	if s := []int{e.Txs[0].Receipt.Status, e.Txs[1].Receipt.Status, e.Txs[5].Receipt.Status}; s[0] != 1 || s[1] != 0 || s[2] != -1 {
		t.Errorf("statuses %v, want 1 0 -1", s)
	}
	if c := e.Txs[2].Receipt.ContractAddress; c == nil || *c != bchain.EthAddress(crypto.CreateAddress(sender, 2)) {
		t.Errorf("contract address %v", c)
	}
	if e.Txs[3].MaxFeePerBlobGas.Int64() != 7 || len(e.Txs[3].BlobHashes) != 1 {
		t.Errorf("blob fields %+v", e.Txs[3])
	}
	if e.Txs[5].Receipt.EffectiveGasPrice.Int64() != 3e9 {
		t.Errorf("missing effectiveGasPrice should default to the gas price, got %v", e.Txs[5].Receipt.EffectiveGasPrice)
	}
	if f.count("eth_getTransactionReceipt") != 0 {
		t.Errorf("per-tx receipts fetched although eth_getBlockReceipts works")
	}

	// Pending tx by hash.
	f.answer("eth_getTransactionByHash", txJSON(t, txs[4], sender, 4))
	ptx, err := n.Tx(context.Background(), bchain.Hash(txs[4].Hash()))
	if err != nil || ptx.Type != types.SetCodeTxType || ptx.BlockHash != bchain.Hash(fakeBlockHash) {
		t.Fatalf("Tx: %+v %v", ptx, err)
	}
	f.answer("eth_getTransactionByHash", nil)
	if _, err := n.Tx(context.Background(), bchain.Hash{9}); !errors.Is(err, bchain.ErrTxNotFound) {
		t.Errorf("unknown tx: %v", err)
	}
}

func TestFakeReceiptsFallback(t *testing.T) {
	txs, sender := signedTxs(t)
	f := newFakeNode(t)
	serveBlock(t, f, txs, sender)
	f.handle("eth_getBlockReceipts", nil) // the node lacks it: -32601
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, map[string]any{"processInternalTransactions": false})
	for range 2 {
		b, err := n.Block(context.Background(), bchain.Hash(fakeBlockHash), 7)
		if err != nil {
			t.Fatal(err)
		}
		if b.Eth.Traced || b.Eth.Txs[0].Internal != nil || b.Eth.Txs[3].Receipt.GasUsed != 21003 {
			t.Fatalf("block %+v", b.Eth)
		}
	}
	if f.count("eth_getBlockReceipts") != 1 || f.count("eth_getTransactionReceipt") != 2*len(txs) || f.count("debug_traceBlockByHash") != 0 {
		t.Errorf("calls %v", f.calls)
	}
}

func TestFakeTraceFailureReported(t *testing.T) {
	old := traceRetryDelay
	traceRetryDelay = time.Millisecond
	t.Cleanup(func() { traceRetryDelay = old })
	txs, sender := signedTxs(t)
	f := newFakeNode(t)
	serveBlock(t, f, txs, sender)
	good := f.handlers["debug_traceBlockByHash"]
	f.handle("debug_traceBlockByHash", func([]json.RawMessage) (any, *rpcErrObj) {
		return nil, &rpcErrObj{Code: -32000, Message: "historical state not available"}
	})
	n := newTestNode(t, "Ethereum Archive", f.srv.URL, nil)
	n.chainID = big.NewInt(fakeChainID) // skip the mainnet check
	b, err := n.Block(context.Background(), bchain.Hash(fakeBlockHash), 7)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Eth.Traced || !strings.Contains(b.Eth.TraceError, "historical state not available") || b.Eth.Txs[0].Internal != nil {
		t.Fatalf("trace failure not reported: %q", b.Eth.TraceError)
	}
	if c := f.count("debug_traceBlockByHash"); c != traceRetries {
		t.Errorf("traced %d times, want %d", c, traceRetries)
	}
	f.handle("debug_traceBlockByHash", good)
	data, err := n.InternalData(context.Background(), bchain.Hash(fakeBlockHash))
	if err != nil || len(data) != len(txs) || data[2].Transfers[0].Value.Int64() != 12 {
		t.Fatalf("retrace: %v %+v", err, data)
	}
}

func TestNodeDownAndGarbage(t *testing.T) {
	ctx := context.Background()
	// Nothing listens on a port we just closed.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + l.Addr().String()
	l.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := w.Write([]byte("<html>hello</html>")); err != nil {
			// The client hung up; it sees that failure itself.
			t.Logf("garbage server: %v", err)
		}
	}))
	defer garbage.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad gateway", http.StatusBadGateway) }))
	defer broken.Close()
	for _, url := range []string{down, garbage.URL, broken.URL} {
		n := newTestNode(t, "Ethereum Regtest", url, nil)
		if _, _, err := n.BestBlock(ctx); !errors.Is(err, bchain.ErrNodeUnavailable) {
			t.Errorf("%s: BestBlock err %v, want ErrNodeUnavailable", url, err)
		}
		if _, err := n.Block(ctx, bchain.Hash{1}, 1); !errors.Is(err, bchain.ErrNodeUnavailable) {
			t.Errorf("%s: Block err %v", url, err)
		}
		if _, err := n.Balance(ctx, make(bchain.AddrDesc, 20), bchain.EthLatest); !errors.Is(err, bchain.ErrNodeUnavailable) {
			t.Errorf("%s: Balance err %v", url, err)
		}
	}
	// A node answering the wrong shape is garbage too.
	f := newFakeNode(t)
	f.answer("eth_getBlockByNumber", map[string]any{"hash": 5, "number": "zz"})
	f.answer("eth_chainId", "not a number")
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	if _, _, err := n.BestBlock(ctx); !errors.Is(err, bchain.ErrNodeUnavailable) {
		t.Errorf("bad header: %v", err)
	}
	if _, err := n.ChainID(ctx); !errors.Is(err, bchain.ErrNodeUnavailable) {
		t.Errorf("bad chain id: %v", err)
	}
	// Unknown block.
	f.answer("eth_getBlockByNumber", nil)
	if _, err := n.BlockHash(ctx, 99); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Errorf("missing block: %v", err)
	}
}

func TestChainIDChecked(t *testing.T) {
	f := newFakeNode(t)
	f.answer("eth_chainId", "0xaa36a7") // sepolia
	n := newTestNode(t, "Ethereum", f.srv.URL, nil)
	if _, err := n.ChainID(context.Background()); !errors.Is(err, bchain.ErrConfig) {
		t.Errorf("mainnet coin on sepolia node: %v", err)
	}
	n = newTestNode(t, "Ethereum Testnet Sepolia", f.srv.URL, nil)
	if id, err := n.ChainID(context.Background()); err != nil || id.Int64() != 11155111 {
		t.Errorf("sepolia: %v %v", id, err)
	}
	n = newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	if _, err := n.ChainID(context.Background()); err != nil {
		t.Errorf("regtest accepts any chain: %v", err)
	}
}

func TestBackendRegistered(t *testing.T) {
	for _, name := range []string{"Ethereum", "Ethereum Archive", "Ethereum Testnet Sepolia", "Ethereum Testnet Sepolia Archive", "Ethereum Regtest"} {
		cfg, err := bchain.ParseConfig([]byte(`{"coin_name":"` + name + `","rpc_url":"http://127.0.0.1:8545","rpc_url_ws":"ws://127.0.0.1:8546"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Type != bchain.ChainEthereumType || b.Eth == nil || b.Chain == nil || b.Notifier == nil || b.TxNotifier == nil || b.Mempool == nil ||
			b.Utxo != nil || b.Params.Decimals != 18 || b.Params.Slip44 != 60 {
			t.Errorf("%s: backend %+v", name, b)
		}
		node := b.Eth.(*Node)
		if want := strings.Contains(name, "Archive") || name == "Ethereum Regtest"; node.traceInternal != want {
			t.Errorf("%s: traceInternal %v", name, node.traceInternal)
		}
		if err := b.Close(); err != nil {
			t.Errorf("%s: closing the backend: %v", name, err)
		}
	}
	cfg, _ := bchain.ParseConfig([]byte(`{"coin_name":"Ethereum","rpc_url":"ftp://x"}`))
	if _, err := bchain.NewBackend(cfg, bchain.Env{}); !errors.Is(err, bchain.ErrConfig) {
		t.Errorf("bad url: %v", err)
	}
}

// The shipped configs load, and their Ethereum keys reach the backend.
func TestShippedConfigs(t *testing.T) {
	files, _ := filepath.Glob("../../../configs/coins/*.json")
	n := 0
	for _, f := range files {
		cfg, err := bchain.LoadConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := networks[cfg.CoinName]; !ok {
			continue // a Bitcoin-type coin
		}
		n++
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		node := b.Eth.(*Node)
		if node.traceInternal != (cfg.ProcessInternalTransactions || node.net.archive) || node.eip1559 != cfg.Eip1559Fees || cfg.MempoolTxTimeoutHours == 0 || cfg.AverageBlockTimeMs == 0 {
			t.Errorf("%s: settings not applied: %+v", f, cfg)
		}
		if b.Mempool.(*Mempool).Timeout != time.Duration(cfg.MempoolTxTimeoutHours)*time.Hour {
			t.Errorf("%s: mempool timeout", f)
		}
		if b.Params.PublicPort == 0 || b.Params.InternalPort == 0 {
			t.Errorf("%s: no default ports", f)
		}
		if err := b.Close(); err != nil {
			t.Errorf("%s: closing the backend: %v", f, err)
		}
	}
	if n != len(networks) {
		t.Errorf("%d Ethereum-type configs, want one per registered name (%d)", n, len(networks))
	}
}
