package eth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"

	"github.com/openexplorer/blockbook/bchain"
)

// Recorded answers of real L2 and Avalanche nodes (testdata/chains, each
// naming its public source in README.md), decoded and checked field by
// field against the values the source records with them.

type chainFixture struct {
	Source   string          `json:"source"`
	Node     json.RawMessage `json:"node"`
	Expected map[string]any  `json:"expected"`
}

func loadChainFixture(t *testing.T, name string) *chainFixture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "chains", name))
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // the sources' decimals exceed float64 precision
	var f chainFixture
	if err := d.Decode(&f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if f.Source == "" || len(f.Node) == 0 || len(f.Expected) == 0 {
		t.Fatalf("%s: source, node answer and expected values are all required", name)
	}
	return &f
}

// num reads an expected quantity: a decimal (viem's snapshots) or 0x hex
// (alloy's asserts).
func (f *chainFixture) num(t *testing.T, key string) *big.Int {
	t.Helper()
	var s string
	switch v := f.Expected[key].(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		t.Fatalf("expected %q missing or not a number: %#v", key, f.Expected[key])
	}
	x, ok := new(big.Int).SetString(s, 0)
	if !ok {
		t.Fatalf("expected %q = %q is not an integer", key, s)
	}
	return x
}

func (f *chainFixture) str(t *testing.T, key string) string {
	t.Helper()
	switch v := f.Expected[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	t.Fatalf("expected %q missing: %#v", key, f.Expected[key])
	return ""
}

func (f *chainFixture) receipt(t *testing.T) (*rpcReceipt, *bchain.EthReceipt) {
	t.Helper()
	var r rpcReceipt
	if err := json.Unmarshal(f.Node, &r); err != nil {
		t.Fatal(err)
	}
	return &r, convertReceipt(&r)
}

func eqBig(t *testing.T, what string, got, want *big.Int) {
	t.Helper()
	if got == nil || got.Cmp(want) != 0 {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// An OP Mainnet receipt before Ecotone: all four L1 fields, the scalar a
// decimal; the fee is gas × effective price plus the L1 fee.
func TestFixtureOptimismReceiptL1Fee(t *testing.T) {
	f := loadChainFixture(t, "optimism_receipt_l1fee.json")
	r, rc := f.receipt(t)
	if r.TxHash.Hex() != f.str(t, "transactionHash") || rc.Status != bchain.EthStatusSuccess || f.str(t, "status") != "success" {
		t.Fatalf("tx %s status %d", r.TxHash.Hex(), rc.Status)
	}
	if rc.GasUsed != f.num(t, "gasUsed").Uint64() {
		t.Errorf("gasUsed %d", rc.GasUsed)
	}
	eqBig(t, "effectiveGasPrice", rc.EffectiveGasPrice, f.num(t, "effectiveGasPrice"))
	if rc.L1 == nil {
		t.Fatal("no L1 fee decoded")
	}
	eqBig(t, "l1Fee", rc.L1.Fee, f.num(t, "l1Fee"))
	eqBig(t, "l1GasPrice", rc.L1.GasPrice, f.num(t, "l1GasPrice"))
	eqBig(t, "l1GasUsed", rc.L1.GasUsed, f.num(t, "l1GasUsed"))
	if rc.L1.FeeScalar != f.str(t, "l1FeeScalar") {
		t.Errorf("l1FeeScalar %q, want %q", rc.L1.FeeScalar, f.str(t, "l1FeeScalar"))
	}
	logs, _ := f.Expected["logs"].([]any)
	if len(rc.Logs) != len(logs) || len(logs) == 0 {
		t.Errorf("%d logs, the source has %d", len(rc.Logs), len(logs))
	}
	want := new(big.Int).Mul(f.num(t, "gasUsed"), f.num(t, "effectiveGasPrice"))
	want.Add(want, f.num(t, "l1Fee"))
	eqBig(t, "fee", rc.Fee(), want)
	if rc.ContractAddress != nil {
		t.Errorf("contract address %v", rc.ContractAddress)
	}
}

// After Ecotone the node sends no l1FeeScalar (it has blob scalars, which
// Blockbook does not keep either); the other L1 fields still decode.
func TestFixtureOptimismReceiptEcotone(t *testing.T) {
	f := loadChainFixture(t, "optimism_receipt_ecotone.json")
	r, rc := f.receipt(t)
	if r.TxHash.Hex() != f.str(t, "transaction_hash") {
		t.Fatalf("tx %s", r.TxHash.Hex())
	}
	if rc.L1 == nil {
		t.Fatal("no L1 fee decoded")
	}
	eqBig(t, "l1Fee", rc.L1.Fee, f.num(t, "l1_fee"))
	eqBig(t, "l1GasPrice", rc.L1.GasPrice, f.num(t, "l1_gas_price"))
	eqBig(t, "l1GasUsed", rc.L1.GasUsed, f.num(t, "l1_gas_used"))
	if rc.L1.FeeScalar != "" {
		t.Errorf("l1FeeScalar %q, the node sent none", rc.L1.FeeScalar)
	}
	want := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
	eqBig(t, "fee", rc.Fee(), want.Add(want, f.num(t, "l1_fee")))
	if tt := TokenTransfers(rc.Logs); len(tt) != 1 || tt[0].Standard != bchain.TokenERC20 || tt[0].Value.Cmp(big.NewInt(0x1c66f6e8b40c00)) != 0 {
		t.Errorf("token transfers %+v", tt)
	}
}

// A deposit tx's receipt: price 0, no L1 fee, so no fee at all.
func TestFixtureOptimismDepositReceipt(t *testing.T) {
	f := loadChainFixture(t, "optimism_receipt_deposit.json")
	r, rc := f.receipt(t)
	if r.TxHash.Hex() != f.str(t, "transactionHash") || rc.Status != bchain.EthStatusSuccess || rc.GasUsed != f.num(t, "gasUsed").Uint64() {
		t.Fatalf("receipt %+v", rc)
	}
	if rc.L1 != nil || rc.Fee().Sign() != 0 || f.num(t, "effectiveGasPrice").Sign() != 0 {
		t.Errorf("deposit: L1 %+v fee %v", rc.L1, rc.Fee())
	}
}

// Arbitrum's receipt names the L1 part of the gas (gasUsedForL1) inside
// gasUsed: the fee is gas × effective price with nothing added, and no L1
// fields are shown (Blockbook shows none for Arbitrum).
func TestFixtureArbitrumReceipt(t *testing.T) {
	f := loadChainFixture(t, "arbitrum_receipt.json")
	r, rc := f.receipt(t)
	if r.TxHash.Hex() != f.str(t, "transaction_hash") {
		t.Fatalf("tx %s", r.TxHash.Hex())
	}
	var node struct {
		GasUsedForL1  hexutil.Uint64 `json:"gasUsedForL1"`
		L1BlockNumber hexutil.Uint64 `json:"l1BlockNumber"`
	}
	if err := json.Unmarshal(f.Node, &node); err != nil {
		t.Fatal(err)
	}
	if uint64(node.GasUsedForL1) != f.num(t, "gas_used_for_l1").Uint64() || uint64(node.L1BlockNumber) != f.num(t, "l1_block_number").Uint64() {
		t.Fatalf("fixture differs from its source: %+v", node)
	}
	if uint64(node.GasUsedForL1) >= rc.GasUsed {
		t.Errorf("gasUsedForL1 %d not inside gasUsed %d", node.GasUsedForL1, rc.GasUsed)
	}
	if rc.L1 != nil {
		t.Errorf("Arbitrum receipt decoded with OP-stack L1 fields %+v", rc.L1)
	}
	eqBig(t, "fee", rc.Fee(), new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), big.NewInt(0x989680)))
	if tt := TokenTransfers(rc.Logs); len(tt) != 1 || tt[0].Value.Cmp(big.NewInt(0x9d40825d5ee8000)) != 0 {
		t.Errorf("token transfers %+v", tt)
	}
}

func decodeFixtureTx(t *testing.T, f *chainFixture, chainID int64) *bchain.EthTx {
	t.Helper()
	var r rpcTx
	if err := json.Unmarshal(f.Node, &r); err != nil {
		t.Fatal(err)
	}
	var tx bchain.EthTx
	if err := decodeTx(&r, types.LatestSignerForChainID(big.NewInt(chainID)), &tx); err != nil {
		t.Fatal(err)
	}
	return &tx
}

// checkTx compares a decoded tx with a viem snapshot of it.
func checkTx(t *testing.T, f *chainFixture, tx *bchain.EthTx) {
	t.Helper()
	if tx.Hash != bchain.Hash(common.HexToHash(f.str(t, "hash"))) || tx.From != bchain.EthAddress(common.HexToAddress(f.str(t, "from"))) ||
		tx.To == nil || *tx.To != bchain.EthAddress(common.HexToAddress(f.str(t, "to"))) {
		t.Errorf("hash/from/to: %+v", tx)
	}
	if tx.Type != uint8(f.num(t, "typeHex").Uint64()) || tx.Nonce != f.num(t, "nonce").Uint64() || tx.GasLimit != f.num(t, "gas").Uint64() {
		t.Errorf("type %d nonce %d gas %d", tx.Type, tx.Nonce, tx.GasLimit)
	}
	eqBig(t, "gasPrice", tx.GasPrice, f.num(t, "gasPrice"))
	eqBig(t, "value", tx.Value, f.num(t, "value"))
	if hexutil.Encode(tx.Data) != f.str(t, "input") {
		t.Errorf("input %x", tx.Data)
	}
	if tx.BlockHash != bchain.Hash(common.HexToHash(f.str(t, "blockHash"))) || tx.BlockHeight != uint32(f.num(t, "blockNumber").Uint64()) ||
		tx.Position != int(f.num(t, "transactionIndex").Int64()) {
		t.Errorf("place: %s %d %d", tx.BlockHash, tx.BlockHeight, tx.Position)
	}
}

// OP-stack's deposit tx (type 0x7e) is unknown to go-ethereum: it is taken
// from the node's fields. Its hash commits to them (keccak of 0x7e and the
// RLP of sourceHash, from, to, mint, value, gas, isSystemTx, data), so
// recomputing it checks the decoded from, to, value, gas and data.
func TestFixtureOptimismDepositTx(t *testing.T) {
	f := loadChainFixture(t, "optimism_tx_deposit.json")
	tx := decodeFixtureTx(t, f, 10)
	checkTx(t, f, tx)
	if tx.MaxFeePerGas != nil || tx.MaxPriorityFeePerGas != nil {
		t.Errorf("deposit with 1559 fees %+v", tx)
	}
	var extra struct {
		SourceHash common.Hash `json:"sourceHash"`
		Mint       hexutil.Big `json:"mint"`
	}
	if err := json.Unmarshal(f.Node, &extra); err != nil {
		t.Fatal(err)
	}
	to := common.Address(*tx.To)
	enc, err := rlp.EncodeToBytes([]any{extra.SourceHash, common.Address(tx.From), &to, extra.Mint.ToInt(), tx.Value, tx.GasLimit, false, tx.Data})
	if err != nil {
		t.Fatal(err)
	}
	if h := crypto.Keccak256Hash(append([]byte{0x7e}, enc...)); bchain.Hash(h) != tx.Hash {
		t.Errorf("deposit hash from the decoded fields %s, recorded %s", h.Hex(), f.str(t, "hash"))
	}
}

// An L2 EIP-1559 tx: go-ethereum decodes it (hash and sender checked
// against the signature under chain id 10); the gas price is the node's
// effective price (base fee + tip), not the fee cap.
func TestFixtureOptimismEIP1559Tx(t *testing.T) {
	f := loadChainFixture(t, "optimism_tx_eip1559.json")
	tx := decodeFixtureTx(t, f, f.num(t, "chainId").Int64())
	checkTx(t, f, tx)
	eqBig(t, "maxFeePerGas", tx.MaxFeePerGas, f.num(t, "maxFeePerGas"))
	eqBig(t, "maxPriorityFeePerGas", tx.MaxPriorityFeePerGas, f.num(t, "maxPriorityFeePerGas"))
}

// Unknown types other than EIP-2718's are refused, and an L2 tx the node
// gives without a sender fails clearly.
func TestChainTxRefusals(t *testing.T) {
	var r rpcTx
	if err := json.Unmarshal([]byte(`{"type":"0x80","hash":"0x01"}`), &r); err == nil {
		t.Error("type 0x80 accepted")
	}
	if err := json.Unmarshal([]byte(`{"type":"0x7e","hash":"0x64241d12d64bb6106a9e818d83d4c9f5d49ebef3c6180e58979bf5894461f822","gas":"0x1"}`), &r); err != nil {
		t.Fatal(err)
	}
	var tx bchain.EthTx
	if err := decodeTx(&r, nil, &tx); !errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("no sender: %v", err)
	}
}

// avalancheRLPHeader is coreth's header layout, whose Keccak is the block
// hash.
type avalancheRLPHeader struct {
	ParentHash, UncleHash common.Hash
	Coinbase              common.Address
	Root, TxHash, Receipt common.Hash
	Bloom                 types.Bloom
	Difficulty, Number    *big.Int
	GasLimit, GasUsed     uint64
	Time                  uint64
	Extra                 []byte
	MixDigest             common.Hash
	Nonce                 types.BlockNonce
	ExtDataHash           common.Hash
	BaseFee               *big.Int `rlp:"optional"`
	ExtDataGasUsed        *big.Int `rlp:"optional"`
	BlockGasCost          *big.Int `rlp:"optional"`
}

// An Avalanche C-Chain header: the block is served through Block, and its
// own fields plus the standard ones re-hash to the recorded block hash.
func TestFixtureAvalancheHeader(t *testing.T) {
	f := loadChainFixture(t, "avalanche_block.json")
	var node map[string]any
	if err := json.Unmarshal(f.Node, &node); err != nil {
		t.Fatal(err)
	}
	node["transactions"] = []any{} // the source lists tx hashes only; the header is what is checked
	hash := common.HexToHash(f.str(t, "hash"))
	fn := newFakeNode(t)
	fn.answer("eth_chainId", "0xa86a")
	fn.answer("eth_getBlockByHash", node)
	n := newTestNode(t, "Ethereum Regtest", fn.srv.URL, map[string]any{"processInternalTransactions": false})
	b, err := n.Block(context.Background(), bchain.Hash(hash), 0x1d612e5)
	if err != nil {
		t.Fatal(err)
	}
	av := b.Eth.Avalanche
	if av == nil {
		t.Fatal("no Avalanche header fields")
	}
	eqBig(t, "blockGasCost", av.BlockGasCost, f.num(t, "blockGasCost"))
	eqBig(t, "extDataGasUsed", av.ExtDataGasUsed, f.num(t, "extDataGasUsed"))
	if av.ExtDataHash != bchain.Hash(common.HexToHash(f.str(t, "extDataHash"))) {
		t.Errorf("extDataHash %s", av.ExtDataHash)
	}
	h := avalancheRLPHeader{
		ParentHash: common.Hash(b.Prev), Coinbase: common.Address(b.Eth.Miner), GasLimit: b.Eth.GasLimit, GasUsed: b.Eth.GasUsed,
		Time: uint64(b.Time), Number: big.NewInt(int64(b.Height)), BaseFee: b.Eth.BaseFee,
		ExtDataHash: common.Hash(av.ExtDataHash), ExtDataGasUsed: av.ExtDataGasUsed, BlockGasCost: av.BlockGasCost,
	}
	var rest struct {
		UncleHash  common.Hash      `json:"sha3Uncles"`
		Root       common.Hash      `json:"stateRoot"`
		TxHash     common.Hash      `json:"transactionsRoot"`
		Receipt    common.Hash      `json:"receiptsRoot"`
		Bloom      types.Bloom      `json:"logsBloom"`
		Difficulty *hexutil.Big     `json:"difficulty"`
		Extra      hexutil.Bytes    `json:"extraData"`
		MixDigest  common.Hash      `json:"mixHash"`
		Nonce      types.BlockNonce `json:"nonce"`
	}
	if err := json.Unmarshal(f.Node, &rest); err != nil {
		t.Fatal(err)
	}
	h.UncleHash, h.Root, h.TxHash, h.Receipt, h.Bloom, h.Difficulty = rest.UncleHash, rest.Root, rest.TxHash, rest.Receipt, rest.Bloom, rest.Difficulty.ToInt()
	h.Extra, h.MixDigest, h.Nonce = rest.Extra, rest.MixDigest, rest.Nonce
	enc, err := rlp.EncodeToBytes(&h)
	if err != nil {
		t.Fatal(err)
	}
	if got := crypto.Keccak256Hash(enc); got != hash {
		t.Errorf("header re-hashes to %s, recorded %s", got.Hex(), hash.Hex())
	}
	if b.Eth.Nonce != "0x0000000000000000" || b.Eth.Difficulty != "0x1" {
		t.Errorf("nonce %s difficulty %s", b.Eth.Nonce, b.Eth.Difficulty)
	}
}

// Avalanche refuses blocks above the last accepted one with "cannot query
// unfinalized data": the node is not ready yet (retried), never "no such
// block" (which would read as a shorter chain).
func TestAvalancheUnfinalizedIsRetried(t *testing.T) {
	fn := newFakeNode(t)
	fn.handle("eth_getBlockByNumber", func([]json.RawMessage) (any, *rpcErrObj) {
		return nil, &rpcErrObj{Code: -32000, Message: "cannot query unfinalized data"}
	})
	n := newTestNode(t, "Ethereum Regtest", fn.srv.URL, nil)
	_, err := n.BlockHash(context.Background(), 5)
	if !errors.Is(err, bchain.ErrNodeUnavailable) || errors.Is(err, bchain.ErrBlockNotFound) || !strings.Contains(err.Error(), "unfinalized") {
		t.Fatalf("err %v", err)
	}
	fn.handle("eth_getBlockByNumber", func([]json.RawMessage) (any, *rpcErrObj) {
		return nil, &rpcErrObj{Code: -32000, Message: "some other failure"}
	})
	var re *bchain.RPCError
	if _, err := n.BlockHash(context.Background(), 5); !errors.As(err, &re) || errors.Is(err, bchain.ErrNodeUnavailable) {
		t.Fatalf("other error classified as %v", err)
	}
}

// A block as an OP-stack node serves it, put together from the recorded
// parts (the receipts' transactionHash set to the txs they stand for, which
// is the only invented link): Block decodes the deposit tx without a
// signature, the user tx with one, and keeps each receipt's L1 fee.
func TestOPStackBlockFromRecordedParts(t *testing.T) {
	dep, user := loadChainFixture(t, "optimism_tx_deposit.json"), loadChainFixture(t, "optimism_tx_eip1559.json")
	depRc, userRc := loadChainFixture(t, "optimism_receipt_deposit.json"), loadChainFixture(t, "optimism_receipt_l1fee.json")
	var receipts []map[string]any
	for _, p := range [][2]*chainFixture{{depRc, dep}, {userRc, user}} {
		var r map[string]any
		if err := json.Unmarshal(p[0].Node, &r); err != nil {
			t.Fatal(err)
		}
		r["transactionHash"] = p[1].str(t, "hash")
		receipts = append(receipts, r)
	}
	fn := newFakeNode(t)
	fn.answer("eth_chainId", "0xa")
	fn.answer("eth_getBlockByHash", map[string]any{
		"hash": fakeBlockHash, "parentHash": fakeParentHash, "number": "0x64f203c", "timestamp": "0x64920000", "size": "0x400",
		"miner": "0x4200000000000000000000000000000000000011", "gasUsed": "0x1000", "gasLimit": "0x1c9c380", "baseFeePerGas": "0x4c",
		"difficulty": "0x0", "nonce": "0x0000000000000000", "transactions": []json.RawMessage{dep.Node, user.Node},
	})
	fn.answer("eth_getBlockReceipts", receipts)
	n := newTestNode(t, "Ethereum Regtest", fn.srv.URL, map[string]any{"processInternalTransactions": false})
	b, err := n.Block(context.Background(), bchain.Hash(fakeBlockHash), 105848892)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Eth.Txs) != 2 || b.Eth.Avalanche != nil {
		t.Fatalf("block %+v", b.Eth)
	}
	d, u := b.Eth.Txs[0], b.Eth.Txs[1]
	if d.Type != 0x7e || d.From != bchain.EthAddress(common.HexToAddress(dep.str(t, "from"))) || d.Receipt.L1 != nil || d.Receipt.Fee().Sign() != 0 ||
		d.BlockHash != bchain.Hash(fakeBlockHash) || d.Position != 0 {
		t.Errorf("deposit tx %+v receipt %+v", d, d.Receipt)
	}
	if u.Type != 2 || u.From != bchain.EthAddress(common.HexToAddress(user.str(t, "from"))) || u.Receipt.L1 == nil {
		t.Fatalf("user tx %+v receipt %+v", u, u.Receipt)
	}
	want := new(big.Int).Mul(userRc.num(t, "gasUsed"), userRc.num(t, "effectiveGasPrice"))
	eqBig(t, "user tx fee", u.Receipt.Fee(), want.Add(want, userRc.num(t, "l1Fee")))
}
