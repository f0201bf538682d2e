package tron

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// Address pairs published by Blockbook's parser tests (mainnet and Nile
// accounts): base58check and the 20-byte descriptor.
var knownAddresses = []struct{ base58, hex string }{
	{"TJngGWiRMLgNFScEybQxLEKQMNdB4nR6Vx", "60bb513e91aa723a10a4020ae6fcce39bce7e240"},
	{"TYD4pB7wGi1p8zK67rBTV3KdfEb9nvNDXh", "f3f1c189594e2642e5d42d7669b4ec60a69802a9"},
}

func TestAddressForms(t *testing.T) {
	for _, c := range knownAddresses {
		want, _ := hex.DecodeString(c.hex)
		for _, form := range []string{c.base58, c.hex, "0x" + c.hex, "41" + c.hex, "0x41" + c.hex, strings.ToUpper("41" + c.hex)} {
			got, err := ParseAddress(form)
			if err != nil || string(got) != string(want) {
				t.Errorf("ParseAddress(%q) = %x, %v; want %s", form, got, err, c.hex)
			}
		}
		addrs, ok, err := AddressParser{}.AddressesFromAddrDesc(want)
		if err != nil || !ok || len(addrs) != 1 || addrs[0] != c.base58 {
			t.Errorf("render %s = %v %v %v, want %s", c.hex, addrs, ok, err, c.base58)
		}
	}
}

func TestAddressRejects(t *testing.T) {
	good := knownAddresses[0].base58
	bad := []string{
		"", "T", "invalidAddress",
		good[:33] + "W",                      // checksum broken
		"42" + knownAddresses[0].hex,         // wrong version byte
		"zz" + knownAddresses[0].hex[2:],     // not hex
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", // a Bitcoin address: 34 chars, not T
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	}
	for _, s := range bad {
		if d, err := ParseAddress(s); err == nil || !errors.Is(err, ErrInvalidAddress) {
			t.Errorf("ParseAddress(%q) = %x, %v; want ErrInvalidAddress", s, d, err)
		}
	}
	if _, _, err := (AddressParser{}).AddressesFromAddrDesc(make([]byte, 19)); err == nil {
		t.Error("a 19-byte descriptor rendered")
	}
}

func TestIDForms(t *testing.T) {
	const id = "0000000002625a003cdd3f3fbe99c6a0e59884bade6070424a404a665ae25121"
	for _, s := range []string{id, "0x" + id, strings.ToUpper(id), " " + id} {
		h, err := ParseID(s)
		if err != nil || h.String() != id {
			t.Errorf("ParseID(%q) = %s, %v", s, h, err)
		}
	}
	for _, s := range []string{"", "0x", id[:62], id + "00", "zz" + id[2:]} {
		if _, err := ParseID(s); err == nil {
			t.Errorf("ParseID(%q) accepted", s)
		}
	}
}

// blockbookAnswer is the part of Blockbook's recorded answers read here.
type blockbookTx struct {
	Txid string `json:"txid"`
	Vin  []struct {
		Addresses []string `json:"addresses"`
	} `json:"vin"`
	Vout []struct {
		ScriptPubKey struct {
			Addresses []string `json:"addresses"`
		} `json:"scriptPubKey"`
	} `json:"vout"`
}

// checkRecordedBlock checks a real block's hash and txs: a Tron block id
// begins with its height as 8 big-endian bytes, ids parse in both forms,
// and every address round-trips through the descriptor.
func checkRecordedBlock(t *testing.T, height uint64, hash string, txids []string, txs []blockbookTx) int {
	t.Helper()
	h, err := ParseID(hash)
	if err != nil {
		t.Fatalf("block %d hash %q: %v", height, hash, err)
	}
	if got := binary.BigEndian.Uint64(h[:8]); got != height {
		t.Errorf("block hash %s starts with height %d, want %d", hash, got, height)
	}
	for _, id := range txids {
		if _, err := ParseID(id); err != nil {
			t.Errorf("txid %q: %v", id, err)
		}
	}
	n := 0
	for _, tx := range txs {
		if _, err := ParseID(tx.Txid); err != nil {
			t.Errorf("txid %q: %v", tx.Txid, err)
		}
		var addrs []string
		for _, v := range tx.Vin {
			addrs = append(addrs, v.Addresses...)
		}
		for _, v := range tx.Vout {
			addrs = append(addrs, v.ScriptPubKey.Addresses...)
		}
		for _, a := range addrs {
			d, err := ParseAddress(a)
			if err != nil {
				t.Errorf("tx %s address %q: %v", tx.Txid, a, err)
				continue
			}
			if back := EncodeAddress(d); back != a {
				t.Errorf("address %q round-trips to %q", a, back)
			}
			n++
		}
	}
	return n
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestRecordedBlockbookBlocks reads every block of Blockbook's Tron
// fixtures (testdata/README.md): 4 + 1 Nile blocks and mainnet block
// 10000000 with 14 txs.
func TestRecordedBlockbookBlocks(t *testing.T) {
	var sync struct {
		ConnectBlocks struct {
			Blocks map[string]struct {
				Height    uint64        `json:"height"`
				Hash      string        `json:"hash"`
				NoTxs     int           `json:"noTxs"`
				TxDetails []blockbookTx `json:"txDetails"`
			} `json:"blocks"`
		} `json:"connectBlocks"`
	}
	readJSON(t, "blockbook_sync_nile.json", &sync)
	blocks, addrs := 0, 0
	for _, b := range sync.ConnectBlocks.Blocks {
		addrs += checkRecordedBlock(t, b.Height, b.Hash, nil, b.TxDetails)
		blocks++
	}
	for _, f := range []string{"blockbook_rpc_nile.json", "blockbook_rpc_mainnet.json"} {
		var rpc struct {
			BlockHeight uint64                 `json:"blockHeight"`
			BlockHash   string                 `json:"blockHash"`
			BlockTxs    []string               `json:"blockTxs"`
			TxDetails   map[string]blockbookTx `json:"txDetails"`
		}
		readJSON(t, f, &rpc)
		var txs []blockbookTx
		for id, tx := range rpc.TxDetails {
			if tx.Txid != id {
				t.Errorf("%s: tx %s keyed %s", f, tx.Txid, id)
			}
			txs = append(txs, tx)
		}
		addrs += checkRecordedBlock(t, rpc.BlockHeight, rpc.BlockHash, rpc.BlockTxs, txs)
		blocks++
	}
	if blocks != 6 || addrs < 30 {
		t.Errorf("read %d blocks and %d addresses of the recorded data", blocks, addrs)
	}
}

// TestRecordedJavaTronAnswers decodes java-tron's documented Nile answers
// and maps the tx onto the account-model tx: owner and called contract in
// base58, the log's bare EVM address equal to the contract, the fee.
func TestRecordedJavaTronAnswers(t *testing.T) {
	var hb HTTPBlock
	readJSON(t, "nile_getblockbynum_66987565.json", &hb)
	checkRecordedBlock(t, uint64(hb.BlockHeader.RawData.Number), hb.BlockID, []string{hb.BlockHeader.RawData.ParentHash}, nil)
	if _, err := ParseAddress(hb.BlockHeader.RawData.WitnessAddress); err != nil {
		t.Errorf("witness: %v", err)
	}
	var tx HTTPTx
	readJSON(t, "nile_gettransactionbyid_01b4cde4.json", &tx)
	var info TxInfo
	readJSON(t, "nile_gettransactioninfobyid_01b4cde4.json", &info)
	var next uint
	et, err := ethTx(&tx, &info, 0, &next, true)
	if err != nil {
		t.Fatal(err)
	}
	if et.Hash.String() != info.ID || hex.EncodeToString(et.From[:]) != "dd791d6b49e190062d650e6a23c575510d35f2f9" ||
		et.To == nil || string(et.To[:]) != string(mustDesc(t, info.ContractAddress)) {
		t.Errorf("tx = %+v", et)
	}
	// The log names the caller in its first indexed topic: the same 20
	// bytes as the tx's 41-prefixed owner.
	if et.Receipt.Status != 1 || len(et.Receipt.Logs) != 1 || et.Receipt.Logs[0].Address != *et.To || next != 1 ||
		string(et.Receipt.Logs[0].Topics[1][12:]) != string(et.From[:]) {
		t.Errorf("receipt = %+v", et.Receipt)
	}
	// Its one recorded inner call is a call of the contract by itself,
	// carrying no value.
	if et.Internal == nil || et.Internal.Type != 0 || len(et.Internal.Transfers) != 0 || et.Internal.Error != "" ||
		len(info.Internal) != 1 || info.Internal[0].Caller != info.ContractAddress {
		t.Errorf("internal data %+v of %+v", et.Internal, info.Internal)
	}
	if *info.Fee != *info.Receipt.EnergyFee+*info.Receipt.NetFee {
		t.Errorf("fee %d != energy fee %d + net fee %d", *info.Fee, *info.Receipt.EnergyFee, *info.Receipt.NetFee)
	}
}

func mustDesc(t *testing.T, s string) []byte {
	t.Helper()
	d, err := ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func FuzzParseAddress(f *testing.F) {
	for _, c := range knownAddresses {
		f.Add(c.base58)
		f.Add("41" + c.hex)
		f.Add("0x" + c.hex)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAddress(s)
		if err != nil {
			return
		}
		if len(d) != addrLen {
			t.Fatalf("%q parsed to %d bytes", s, len(d))
		}
		back, err := ParseAddress(EncodeAddress(d))
		if err != nil || string(back) != string(d) {
			t.Fatalf("%q: base58 round trip %x %v", s, back, err)
		}
	})
}

// Each network's genesis id is a block 0 id whose last 4 bytes are the
// chain id Blockbook knows the network by (eth_chainId).
func TestGenesis(t *testing.T) {
	for name, chainID := range map[string]string{"Tron": "2b6653dc", "Tron Testnet Nile": "cd8690dc"} {
		g, err := ParseID(networks[name].genesis)
		if err != nil || binary.BigEndian.Uint64(g[:8]) != 0 || hex.EncodeToString(g[28:]) != chainID {
			t.Errorf("%s genesis %s %v", name, g, err)
		}
	}
}
