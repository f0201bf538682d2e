package btc_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Bitcoin's own networks carry their chain's genesis hash, address
// versions and bech32 prefix, and Blockbook's names, shortcuts and ports;
// each network's genesis block (btcd's copy) decodes to its genesis hash.
func TestParamsBitcoinNetworks(t *testing.T) {
	for _, c := range []struct {
		name, genesis, hrp, shortcut string
		pkh, sh                      byte
		public, internal             int
		slip44                       uint32
		testnet                      bool
	}{
		{"Bitcoin", "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f", "bc", "BTC", 0, 5, 9130, 9030, 0, false},
		{"Testnet", "000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943", "tb", "TEST", 111, 196, 19130, 19030, 1, true},
		{"Testnet4", "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043", "tb", "TEST", 111, 196, 19129, 19029, 1, true},
		{"Signet", "00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6", "tb", "sBTC", 111, 196, 19120, 19020, 1, true},
		{"Regtest", "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206", "bcrt", "rBTC", 111, 196, 19121, 19021, 1, true},
	} {
		n, ok := btc.NetworkFor(c.name)
		if !ok {
			t.Fatalf("%s is not registered", c.name)
		}
		p := n.Params
		if p.GenesisHash.String() != c.genesis || p.Bech32HRPSegwit != c.hrp || p.PubKeyHashAddrID != c.pkh || p.ScriptHashAddrID != c.sh {
			t.Errorf("%s: params %s %s %d %d", c.name, p.GenesisHash, p.Bech32HRPSegwit, p.PubKeyHashAddrID, p.ScriptHashAddrID)
		}
		if n.Shortcut != c.shortcut || n.PublicPort != c.public || n.InternalPort != c.internal || n.Slip44 != c.slip44 || n.Testnet != c.testnet {
			t.Errorf("%s: %+v", c.name, n)
		}
		var buf bytes.Buffer
		if err := p.GenesisBlock.Serialize(&buf); err != nil {
			t.Fatal(err)
		}
		blk, err := btc.NewParser(p).ParseBlock(buf.Bytes())
		if err != nil || blk.Hash.String() != c.genesis {
			t.Errorf("%s genesis block: %v %v", c.name, blk, err)
		}
	}
}

func netReadJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "networks", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// Real blocks and txs of every Bitcoin network. Mainnet: block 574200
// (btcd's test data). Testnet (testnet3): six blocks of the BIP 158 test
// vectors, whose hashes recompute and whose txs all decode. Testnet4,
// signet and regtest: their genesis blocks, and the txs Blockbook's RPC
// tests recorded (txids and output scripts recompute). Addresses: Bitcoin
// Core's key_io test vectors for each chain decode to the recorded script
// and render back to the recorded address.
func TestRealBlocksBitcoinNetworks(t *testing.T) {
	main, _ := btc.NetworkFor("Bitcoin")
	raw := ptLoad(t, "mainnet/block-0000000000000000001602407ac49862a7bca9d00f7f402db20b7be2f5de59d2.blk.bz2")
	if blk, err := btc.NewParser(main.Params).ParseBlock(raw); err != nil || blk.Hash.String() != "0000000000000000001602407ac49862a7bca9d00f7f402db20b7be2f5de59d2" {
		t.Fatalf("Bitcoin block 574200: %v", err)
	}
	testnet, _ := btc.NetworkFor("Testnet")
	var blocks []struct {
		Height      int
		Hash, Block string
	}
	netReadJSON(t, "testnet3_blocks.json", &blocks)
	for _, b := range blocks {
		raw, _ := hex.DecodeString(b.Block)
		blk, err := btc.NewParser(testnet.Params).ParseBlock(raw)
		if err != nil || blk.Hash.String() != b.Hash {
			t.Errorf("Testnet block %d: %v %v", b.Height, blk, err)
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("%d testnet3 blocks", len(blocks))
	}
	for name, file := range map[string]string{
		"Testnet":  "blockbook_rpc_testnet.json",
		"Testnet4": "blockbook_rpc_testnet4.json",
		"Signet":   "blockbook_rpc_signet.json",
		"Regtest":  "blockbook_rpc_regtest.json",
	} {
		n, _ := btc.NetworkFor(name)
		var rec struct {
			TxDetails map[string]struct {
				Hex, Txid string
				Vout      []struct {
					ScriptPubKey struct{ Hex string }
				}
			}
		}
		netReadJSON(t, file, &rec)
		if len(rec.TxDetails) == 0 {
			t.Fatalf("%s: no txs", file)
		}
		for _, r := range rec.TxDetails {
			raw, _ := hex.DecodeString(r.Hex)
			tx, err := btc.NewParser(n.Params).ParseTx(raw)
			if err != nil || tx.Txid.String() != r.Txid || len(tx.Vout) != len(r.Vout) {
				t.Fatalf("%s tx %s: %v", name, r.Txid, err)
			}
			for i, out := range r.Vout {
				if hex.EncodeToString(tx.Vout[i].Script) != out.ScriptPubKey.Hex {
					t.Errorf("%s tx %s:%d script %x", name, r.Txid, i, tx.Vout[i].Script)
				}
			}
		}
	}
	checkKeyIOAddresses(t)
}

// checkKeyIOAddresses checks Bitcoin Core's key_io vectors on the network
// of each chain (testnet4's also on testnet3, which shares its versions).
func checkKeyIOAddresses(t *testing.T) {
	var rows [][3]string
	netReadJSON(t, "key_io_addresses.json", &rows)
	names := map[string][]string{"main": {"Bitcoin"}, "testnet4": {"Testnet4", "Testnet"}, "signet": {"Signet"}, "regtest": {"Regtest"}}
	checked := map[string]int{}
	for _, r := range rows {
		for _, name := range names[r[2]] {
			n, _ := btc.NetworkFor(name)
			p := btc.NewParser(n.Params)
			desc, err := p.AddrDescFromAddress(r[0])
			if err != nil || hex.EncodeToString(desc) != r[1] {
				t.Errorf("%s %s: %x %v", name, r[0], desc, err)
				continue
			}
			addrs, ok := p.OutputAddresses(desc)
			if !ok || len(addrs) != 1 || addrs[0] != strings.ToLower(r[0]) && addrs[0] != r[0] {
				t.Errorf("%s %x renders %v", name, desc, addrs)
			}
			checked[name]++
		}
	}
	for _, name := range []string{"Bitcoin", "Testnet", "Testnet4", "Signet", "Regtest"} {
		if checked[name] < 5 {
			t.Errorf("%s: %d addresses checked", name, checked[name])
		}
	}
}
