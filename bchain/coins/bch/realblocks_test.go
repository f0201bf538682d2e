package bch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

type fixtureOutput struct {
	Descriptor string     `json:"descriptor"`
	Address    string     `json:"address"`
	Value      string     `json:"value"`
	TokenData  *TokenData `json:"tokenData"`
}

type fixtureTx struct {
	Name    string          `json:"name"`
	Txid    string          `json:"txid"`
	Hex     string          `json:"hex"`
	Outputs []fixtureOutput `json:"outputs"`
}

type fixtureBlock struct {
	Height     int    `json:"height"`
	Hash       string `json:"hash"`
	MerkleRoot string `json:"merkleRoot"`
	TxCount    int    `json:"txCount"`
	Block      string `json:"block"`
}

func testParser(t *testing.T, name, format string) *Parser {
	t.Helper()
	return newBackend(t, name, format).Utxo.(*Parser)
}

func dsha(b []byte) []byte {
	h := sha256.Sum256(b)
	h = sha256.Sum256(h[:])
	return h[:]
}

// checkBlock decodes a real block and checks that its hash, every txid and
// the merkle root recompute.
func checkBlock(t *testing.T, p *Parser, raw []byte, wantHash string) *bchain.Block {
	t.Helper()
	blk, err := p.ParseBlock(raw)
	if err != nil {
		t.Fatal(err)
	}
	if blk.Hash.String() != wantHash {
		t.Errorf("hash %s, want %s", blk.Hash, wantHash)
	}
	if got := reverse(dsha(raw[:80])); hex.EncodeToString(got) != wantHash {
		t.Errorf("header hashes to %x", got)
	}
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		if got := hex.EncodeToString(reverse(dsha(tx.Raw))); got != tx.Txid.String() {
			t.Errorf("tx %d: txid %s, raw hashes to %s", i, tx.Txid, got)
		}
		for _, o := range tx.Vout {
			// Every output renders without error, indexed or not.
			p.OutputAddresses(o.Script)
			p.OutputAddrDesc(o.Script)
		}
	}
	if root := btc.InternalHash(btctest.MerkleRoot(blk.Txs)); !bytes.Equal(root[:], raw[36:68]) {
		t.Errorf("merkle root of the txs does not match the header's")
	}
	return blk
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[i] = b[len(b)-1-i]
	}
	return out
}

// TestRealBlocksBcash decodes real chain data of each network: Bitcoin Cash
// mainnet txs (a CashTokens tx among them), Bitcoin Cash testnet blocks from
// Bitcoin Cash Node's test data, and an eCash mainnet block. See
// testdata/README.md for the sources.
func TestRealBlocksBcash(t *testing.T) {
	t.Run("Bcash", func(t *testing.T) {
		var txs []fixtureTx
		btctest.ReadJSON(t, "bch_mainnet_txs.json", &txs)
		p := testParser(t, "Bcash", "cashaddr")
		for _, f := range txs {
			t.Run(f.Name, func(t *testing.T) { checkFixtureTx(t, p, f) })
		}
	})
	t.Run("Bcash Testnet", func(t *testing.T) {
		var blocks []struct {
			Height int    `json:"height"`
			Hash   string `json:"hash"`
			Block  string `json:"block"`
		}
		btctest.ReadJSON(t, "bch_testnet_blocks.json", &blocks)
		p := testParser(t, "Bcash Testnet", "")
		for _, b := range blocks {
			raw, err := hex.DecodeString(b.Block)
			if err != nil {
				t.Fatal(err)
			}
			blk := checkBlock(t, p, raw, b.Hash)
			if b.Height == 49291 {
				// Its tx pays to an empty output script: never indexed.
				found := false
				for _, tx := range blk.Txs {
					for _, o := range tx.Vout {
						if len(o.Script) == 0 {
							found = true
							if p.OutputAddrDesc(o.Script) != nil {
								t.Error("empty script indexed")
							}
						}
					}
				}
				if !found {
					t.Error("block 49291 has no empty output script")
				}
			}
		}
	})
	t.Run("ECash", func(t *testing.T) {
		var blocks []fixtureBlock
		btctest.ReadJSON(t, "ecash_blocks.json", &blocks)
		p := testParser(t, "ECash", "")
		for _, b := range blocks {
			raw, err := hex.DecodeString(b.Block)
			if err != nil {
				t.Fatal(err)
			}
			blk := checkBlock(t, p, raw, b.Hash)
			if len(blk.Txs) != b.TxCount || blk.Size != len(raw) || blk.MerkleRoot.String() != b.MerkleRoot {
				t.Errorf("block %d: %d txs, size %d, merkle root %s", b.Height, len(blk.Txs), blk.Size, blk.MerkleRoot)
			}
			// The coinbase pays a P2PKH and the miner fund's P2SH.
			addrs, ok := p.OutputAddresses(blk.Txs[0].Vout[1].Script)
			if !ok || len(addrs) != 1 || addrs[0][:7] != "ecash:p" {
				t.Errorf("coinbase output 1: %v", addrs)
			}
		}
	})
}

func checkFixtureTx(t *testing.T, p *Parser, f fixtureTx) {
	raw, err := hex.DecodeString(f.Hex)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := p.ParseTx(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Txid.String() != f.Txid || hex.EncodeToString(reverse(dsha(raw))) != f.Txid {
		t.Fatalf("txid %s, want %s", tx.Txid, f.Txid)
	}
	if len(tx.Vout) != len(f.Outputs) {
		t.Fatalf("%d outputs, want %d", len(tx.Vout), len(f.Outputs))
	}
	for i, want := range f.Outputs {
		o := tx.Vout[i]
		if strconv.FormatUint(o.Value, 10) != want.Value {
			t.Errorf("output %d: value %d, want %s", i, o.Value, want.Value)
		}
		desc := p.OutputAddrDesc(o.Script)
		if hex.EncodeToString(desc) != want.Descriptor {
			t.Errorf("output %d: descriptor %x, want %s", i, desc, want.Descriptor)
		}
		addrs, _ := p.OutputAddresses(o.Script)
		if want.Address == "" {
			if len(addrs) != 0 {
				t.Errorf("output %d: addresses %v, want none", i, addrs)
			}
		} else {
			if len(addrs) != 1 || addrs[0] != want.Address {
				t.Errorf("output %d: addresses %v, want %s", i, addrs, want.Address)
			}
			back, err := p.AddrDescFromAddress(want.Address)
			if err != nil || !bytes.Equal(back, desc) {
				t.Errorf("output %d: %s parses to %x, %v", i, want.Address, back, err)
			}
		}
		var got *TokenData
		if s, ok := o.Specific.(*OutputSpecific); ok {
			got = s.TokenData
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want.TokenData)
		if string(gj) != string(wj) {
			t.Errorf("output %d: token %s, want %s", i, gj, wj)
		}
	}
}
