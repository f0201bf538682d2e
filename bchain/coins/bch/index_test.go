package bch_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/bch"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
)

// txSource serves the raw txs of the test chain to the query service.
type txSource map[bchain.Hash][]byte

func (s txSource) RawTx(_ context.Context, txid, _ bchain.Hash) ([]byte, error) {
	if raw, ok := s[txid]; ok {
		return raw, nil
	}
	return nil, bchain.ErrTxNotFound
}

func (s txSource) TxSpecific(context.Context, bchain.Hash, bchain.Hash) (json.RawMessage, error) {
	return nil, errors.New("not served")
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestTokenOutputsIndexed connects two blocks through the real index: a
// coinbase paying a CashTokens output (fungible amount and a minting NFT) to
// address A, and a tx moving it to B. A's and B's pages and UTXOs see the
// token output under their plain address, and the API shows the token.
func TestTokenOutputsIndexed(t *testing.T) {
	cfgRaw, _ := json.Marshal(map[string]any{"coin_name": "Bcash Testnet", "rpc_url": "http://127.0.0.1:1"})
	b, err := bchain.NewBackend(&bchain.Config{CoinName: "Bcash Testnet", RPCURL: "http://127.0.0.1:1", Raw: cfgRaw},
		bchain.Env{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	lockA := mustHex("76a9144fa927fd3bcf57d4e3c582c3d2eb2bd3df8df47c88ac") // bchtest:qp86jfla…
	lockB := mustHex("a914cd668d781ece600efa4b2404dc91fd26b8b8aed887")     // a P2SH
	category := bytes.Repeat([]byte{0x11}, 32)
	prefix := append(append([]byte{0xef}, category...), 0x70, 0x02, 0xca, 0xfe, 0xfd, 0xe8, 0x03) // NFT none+commitment+amount 1000
	coinbase := wire.NewMsgTx(1)
	coinbase.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{1, 1}, Sequence: 0xffffffff})
	coinbase.AddTxOut(&wire.TxOut{Value: 5000, PkScript: append(append([]byte{}, prefix...), lockA...)})
	coinbase.AddTxOut(&wire.TxOut{Value: 7000, PkScript: lockA})
	spend := wire.NewMsgTx(2)
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Hash: coinbase.TxHash(), Index: 0}, SignatureScript: []byte{0x51}, Sequence: 0xffffffff})
	spend.AddTxOut(&wire.TxOut{Value: 4000, PkScript: append(append([]byte{}, prefix...), lockB...)})
	cb2 := wire.NewMsgTx(1)
	cb2.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{1, 2}, Sequence: 0xffffffff})
	cb2.AddTxOut(&wire.TxOut{Value: 1000, PkScript: []byte{0x51}})

	d, err := memdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Bcash Testnet", Network: b.Params.Network,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	x, err := db.NewUtxoIndex(d, b.Utxo, 300, db.FilterParams{})
	if err != nil {
		t.Fatal(err)
	}
	txs := txSource{}
	var prev chainhash.Hash
	for h, blockTxs := range [][]*wire.MsgTx{{coinbase}, {cb2, spend}} {
		mb := wire.MsgBlock{Header: wire.BlockHeader{Version: 1, PrevBlock: prev, Timestamp: time.Unix(1700000000+int64(h)*600, 0), Bits: 0x207fffff}}
		for _, tx := range blockTxs {
			_ = mb.AddTransaction(tx)
		}
		var buf bytes.Buffer
		if err := mb.Serialize(&buf); err != nil {
			t.Fatal(err)
		}
		blk, err := b.Utxo.ParseBlock(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		blk.Height = uint32(h)
		if err := x.ConnectBlock(blk); err != nil {
			t.Fatalf("connect %d: %v", h, err)
		}
		for i := range blk.Txs {
			txs[blk.Txs[i].Txid] = blk.Txs[i].Raw
		}
		prev = mb.Header.BlockHash()
	}
	b.Txs = txs
	svc := api.NewUtxoService(d, b, nil, api.Config{})
	ctx := context.Background()

	a, err := svc.Address(ctx, "bchtest:qp86jfla8084048rckpv85ht90falr050s03ejaesm", api.AddressQuery{Details: api.DetailsTxids})
	if err != nil {
		t.Fatal(err)
	}
	// A received 5000 (token output) + 7000, sent the token output.
	if a.Balance.String() != "7000" || a.TotalReceived.String() != "12000" || a.Txs != 2 {
		t.Errorf("A: balance %s received %s txs %d", a.Balance, a.TotalReceived, a.Txs)
	}
	// B, asked for without the prefix: holds the token output.
	bAddr, err := svc.Address(ctx, "prxkdrtcrm8xqrh6fvjqfhy3l5nt3w9wmq9fmsvkmz", api.AddressQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if bAddr.Balance.String() != "4000" || bAddr.Txs != 1 || bAddr.Address != "bchtest:prxkdrtcrm8xqrh6fvjqfhy3l5nt3w9wmq9fmsvkmz" {
		t.Errorf("B: %+v", bAddr)
	}
	utxos, err := svc.Utxos(ctx, "bchtest:prxkdrtcrm8xqrh6fvjqfhy3l5nt3w9wmq9fmsvkmz", false, 0)
	if err != nil || len(utxos) != 1 || utxos[0].Value.String() != "4000" {
		t.Errorf("B utxos %+v %v", utxos, err)
	}
	tx, err := svc.Tx(ctx, spend.TxHash().String())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(tx)
	for _, want := range []string{
		`"coinSpecific":{"tokenData":{"category":"` + strings.Repeat("11", 32) + `","amount":"1000","nft":{"capability":"none","commitment":"cafe"}}}`,
		`"addresses":["bchtest:prxkdrtcrm8xqrh6fvjqfhy3l5nt3w9wmq9fmsvkmz"]`,
		`"addresses":["bchtest:qp86jfla8084048rckpv85ht90falr050s03ejaesm"]`, // the input's
		`"fees":"1000"`,
	} {
		if !strings.Contains(string(js), want) {
			t.Errorf("tx lacks %s:\n%s", want, js)
		}
	}
}
