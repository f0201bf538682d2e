// Package btctest holds the test helpers the Bitcoin-derived coin
// packages share: a registered network's parser, merkle roots of decoded
// blocks, recorded JSON fixtures, and address vectors checked both ways.
// Only tests import it.
package btctest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Parser returns the parser a backend of the registered coin name builds,
// with an empty configuration.
func Parser(t testing.TB, name string) bchain.UtxoParser {
	t.Helper()
	n, ok := btc.NetworkFor(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	if n.NewParser == nil {
		return btc.NewParser(n.Params)
	}
	p, err := n.NewParser(n.Params, &bchain.Config{})
	if err != nil {
		t.Fatalf("%s parser: %v", name, err)
	}
	return p
}

// MerkleRoot recomputes a block's merkle root (display order) from its
// txs' ids with Bitcoin's tree: double SHA-256 of each pair, the last one
// of an odd level paired with itself.
func MerkleRoot(txs []bchain.Tx) bchain.Hash {
	if len(txs) == 0 {
		return bchain.Hash{}
	}
	level := make([]chainhash.Hash, 0, len(txs)+1)
	for i := range txs {
		level = append(level, btc.InternalHash(txs[i].Txid))
	}
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		next := make([]chainhash.Hash, len(level)/2)
		for i := range next {
			var pair [2 * chainhash.HashSize]byte
			copy(pair[:], level[2*i][:])
			copy(pair[chainhash.HashSize:], level[2*i+1][:])
			next[i] = chainhash.DoubleHashH(pair[:])
		}
		level = next
	}
	return btc.DisplayHash(level[0])
}

// ReadJSON decodes the test's fixture testdata/name into v.
func ReadJSON(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// ReadText returns the test's fixture testdata/name without surrounding
// white space.
func ReadText(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// ReadHex decodes the test's hex fixture testdata/name.
func ReadHex(t testing.TB, name string) []byte {
	t.Helper()
	b, err := hex.DecodeString(ReadText(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// RecordedTx is a tx as a node's verbose getrawtransaction (or Blockbook's
// test data) records it: raw hex, txid, and each output's script and
// addresses.
type RecordedTx struct {
	Hex  string `json:"hex"`
	Txid string `json:"txid"`
	Vout []struct {
		ScriptPubKey struct {
			Hex       string   `json:"hex"`
			Addresses []string `json:"addresses"`
		} `json:"scriptPubKey"`
	} `json:"vout"`
}

// CheckRecordedTx decodes a recorded tx: its txid recomputes, its output
// scripts are the recorded ones, and every recorded address is the one
// rendered and decodes to the output's descriptor. It returns how many
// addresses it checked.
func CheckRecordedTx(t testing.TB, p bchain.UtxoParser, rec RecordedTx) int {
	t.Helper()
	raw, err := hex.DecodeString(rec.Hex)
	if err != nil {
		t.Fatalf("tx %s: %v", rec.Txid, err)
	}
	tx, err := p.ParseTx(raw)
	if err != nil {
		t.Fatalf("tx %s: %v", rec.Txid, err)
	}
	if tx.Txid.String() != rec.Txid || len(tx.Vout) != len(rec.Vout) {
		t.Fatalf("tx %s: decoded %s with %d outputs, recorded %d", rec.Txid, tx.Txid, len(tx.Vout), len(rec.Vout))
	}
	checked := 0
	for i, out := range rec.Vout {
		if hex.EncodeToString(tx.Vout[i].Script) != out.ScriptPubKey.Hex {
			t.Errorf("tx %s:%d script %x", rec.Txid, i, tx.Vout[i].Script)
		}
		if len(out.ScriptPubKey.Addresses) == 0 {
			continue
		}
		addr := out.ScriptPubKey.Addresses[0]
		if addrs, _ := p.OutputAddresses(tx.Vout[i].Script); len(addrs) != 1 || addrs[0] != addr {
			t.Errorf("tx %s:%d addresses %v, recorded %v", rec.Txid, i, addrs, out.ScriptPubKey.Addresses)
		}
		desc, err := p.AddrDescFromAddress(addr)
		if err != nil || !bytes.Equal(desc, p.OutputAddrDesc(tx.Vout[i].Script)) {
			t.Errorf("tx %s:%d: address %s gives %x, %v", rec.Txid, i, addr, desc, err)
		}
		checked++
	}
	return checked
}

// CheckAddresses checks address vectors (address -> output script hex)
// both ways: the address decodes to the script, and the script renders as
// that one searchable address.
func CheckAddresses(t testing.TB, p bchain.UtxoParser, vectors map[string]string) {
	t.Helper()
	for addr, script := range vectors {
		desc, err := p.AddrDescFromAddress(addr)
		if err != nil || hex.EncodeToString(desc) != script {
			t.Errorf("%s gives %x, %v; want %s", addr, desc, err, script)
		}
		raw, err := hex.DecodeString(script)
		if err != nil {
			t.Fatalf("vector %s: %v", addr, err)
		}
		if got, ok := p.OutputAddresses(raw); len(got) != 1 || got[0] != addr || !ok {
			t.Errorf("script %s shows %v %v, want %s", script, got, ok, addr)
		}
	}
}

// CheckForeign checks that other networks' addresses are refused as
// invalid for this one.
func CheckForeign(t testing.TB, p bchain.UtxoParser, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		if _, err := p.AddrDescFromAddress(addr); !errors.Is(err, bchain.ErrInvalidAddress) {
			t.Errorf("accepts %s: %v", addr, err)
		}
	}
}

// BlockbookTxs reads the recorded txs of Blockbook's per-coin test data:
// the txDetails of testdata/blockbook_rpc_mainnet.json and those of each
// block in testdata/blockbook_sync_mainnet.json's connectBlocks.
func BlockbookTxs(t testing.TB) []RecordedTx {
	t.Helper()
	var rpc struct {
		TxDetails map[string]RecordedTx `json:"txDetails"`
	}
	ReadJSON(t, "blockbook_rpc_mainnet.json", &rpc)
	var sync struct {
		ConnectBlocks struct {
			Blocks map[string]struct {
				TxDetails []RecordedTx `json:"txDetails"`
			} `json:"blocks"`
		} `json:"connectBlocks"`
	}
	ReadJSON(t, "blockbook_sync_mainnet.json", &sync)
	if len(rpc.TxDetails) == 0 || len(sync.ConnectBlocks.Blocks) == 0 {
		t.Fatalf("no recorded txs: %d in rpc, %d sync blocks", len(rpc.TxDetails), len(sync.ConnectBlocks.Blocks))
	}
	var txs []RecordedTx
	for _, rec := range rpc.TxDetails {
		txs = append(txs, rec)
	}
	for _, b := range sync.ConnectBlocks.Blocks {
		txs = append(txs, b.TxDetails...)
	}
	return txs
}
