package nmc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/chainhash/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/auxpow"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// Network parameters and address forms (vectors of Blockbook's Namecoin
// parser tests and libdohj's name script tests).
func TestParamsNamecoin(t *testing.T) {
	n, ok := btc.NetworkFor("Namecoin")
	if !ok {
		t.Fatal("Namecoin is not registered")
	}
	if n.Shortcut != "NMC" || n.PublicPort != 9139 || n.InternalPort != 9039 || n.Slip44 != 7 || n.Testnet {
		t.Errorf("%+v", n)
	}
	if n.Params.Net != 0xfeb4bef9 || n.Params.GenesisHash.String() != "000000000062b72c5e2ceb45fbc8587e807c155b0da735e6483dfba2f0a9c770" {
		t.Errorf("magic %#x genesis %s", uint32(n.Params.Net), n.Params.GenesisHash)
	}
	p := btctest.Parser(t, "Namecoin")
	btctest.CheckAddresses(t, p, map[string]string{
		"MzBvZ4F759X6wHTjzwkMEbKh12am3PHT6F": "76a91427a1f12771de5cc3b73941664b2537c15316be4388ac",
		"N8Jkcm44Uq55GdmPojkpuGyoW4Cm658TwW": "76a91480ad90d403581fa3bf46086a91b2d9d4125db6c188ac",
	})
	// SegWit outputs have "nc" bech32 addresses, both ways.
	wpkh, _ := hex.DecodeString("0014751e76e8199196d454941c45d1b3a323f1433bd6")
	got, ok := p.OutputAddresses(wpkh)
	if len(got) != 1 || !strings.HasPrefix(got[0], "nc1q") || !ok {
		t.Fatalf("P2WPKH shows %v", got)
	}
	if desc, err := p.AddrDescFromAddress(got[0]); err != nil || !bytes.Equal(desc, wpkh) {
		t.Errorf("%s gives %x, %v", got[0], desc, err)
	}
	btctest.CheckForeign(t, p, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "DHZYinsaM9nW5piCMN639ELRKbZomThPnZ")
}

type recordedBlock struct {
	File       string   `json:"file"`
	Size       int      `json:"size"`
	Time       int64    `json:"time"`
	Hash       string   `json:"hash"`
	MerkleRoot string   `json:"merkleroot"`
	Prev       string   `json:"previousblockhash"`
	Tx         []string `json:"tx"`
	Block      string   `json:"block"`
}

func loadBlocks(t *testing.T) []recordedBlock {
	t.Helper()
	var blocks []recordedBlock
	btctest.ReadJSON(t, "blockbook_blocks.json", &blocks)
	for i := range blocks {
		blocks[i].Block = btctest.ReadText(t, blocks[i].File)
	}
	for _, f := range []string{"electrumx_namecoin_mainnet_19200.json", "electrumx_namecoin_mainnet_19204.json"} {
		b := recordedBlock{File: f}
		btctest.ReadJSON(t, f, &b)
		blocks = append(blocks, b)
	}
	return blocks
}

// Real mainnet blocks, merge-mined (19200, 40000) and not (19204): every tx
// decodes with its recorded txid, which recomputes from its bytes; the
// txids give the header's merkle root; the hash is the double SHA-256 of
// the 80-byte header and the recorded one; name outputs are indexed under
// the address after their name prefix.
func TestRealBlocksNamecoin(t *testing.T) {
	p := btctest.Parser(t, "Namecoin")
	nameOps := 0
	for _, rb := range loadBlocks(t) {
		raw, err := hex.DecodeString(rb.Block)
		if err != nil {
			t.Fatal(err)
		}
		blk, err := p.ParseBlock(raw)
		if err != nil {
			t.Fatalf("%s: %v", rb.File, err)
		}
		if rb.Size != 0 && blk.Size != rb.Size || rb.Time != 0 && blk.Time != rb.Time {
			t.Errorf("%s: size %d time %d", rb.File, blk.Size, blk.Time)
		}
		if len(blk.Header) != 80 || blk.Hash != btc.DisplayHash(chainhash.DoubleHashH(raw[:80])) ||
			rb.Hash != "" && (blk.Hash.String() != rb.Hash || blk.Prev.String() != rb.Prev) {
			t.Errorf("%s: hash %s prev %s", rb.File, blk.Hash, blk.Prev)
		}
		if aux := auxpow.HasAuxPoW(blk.Version); aux != (rb.File != "electrumx_namecoin_mainnet_19204.json") {
			t.Errorf("%s: AuxPoW %v", rb.File, aux)
		}
		if len(blk.Txs) != len(rb.Tx) {
			t.Fatalf("%s: %d txs, recorded %d", rb.File, len(blk.Txs), len(rb.Tx))
		}
		for i := range blk.Txs {
			tx := &blk.Txs[i]
			if tx.Txid.String() != rb.Tx[i] || tx.Txid != btc.DisplayHash(chainhash.DoubleHashH(tx.Raw)) {
				t.Errorf("%s: tx %d is %s, recorded %s", rb.File, i, tx.Txid, rb.Tx[i])
			}
			for j, out := range tx.Vout {
				op, rest := ParseNameScript(out.Script)
				if op == nil {
					continue
				}
				nameOps++
				desc := p.OutputAddrDesc(out.Script)
				if !bytes.Equal(desc, rest) || out.Specific == nil {
					t.Errorf("%s: %s:%d indexed as %x", rb.File, tx.Txid, j, desc)
				}
				if addrs, ok := p.OutputAddresses(out.Script); len(addrs) != 1 || !ok {
					t.Errorf("%s: %s:%d shows %v", rb.File, tx.Txid, j, addrs)
				}
			}
		}
		if root := btctest.MerkleRoot(blk.Txs); root != blk.MerkleRoot || rb.MerkleRoot != "" && root.String() != rb.MerkleRoot {
			t.Errorf("%s: txids give merkle root %s, header has %s", rb.File, root, blk.MerkleRoot)
		}
	}
	if nameOps < 2 {
		t.Errorf("%d name outputs in the real blocks, want the name_new and name_firstupdate of block 40000", nameOps)
	}
}

// Real name_new, name_firstupdate and name_update txs of d/bitcoin and a
// plain payment, with the addresses, names and values libdohj's name
// script tests record for them.
func TestNameOpsNamecoin(t *testing.T) {
	var txs []struct {
		Txid    string `json:"txid"`
		Hex     string `json:"hex"`
		Vout    int    `json:"vout"`
		Address string `json:"address"`
		Op      string `json:"op"`
		Name    string `json:"name"`
		Value   string `json:"value"`
	}
	btctest.ReadJSON(t, "libdohj_txs.json", &txs)
	p := btctest.Parser(t, "Namecoin")
	for _, rt := range txs {
		raw, _ := hex.DecodeString(rt.Hex)
		tx, err := p.ParseTx(raw)
		if err != nil || tx.Txid.String() != rt.Txid {
			t.Fatalf("%s: %v %v", rt.Txid, tx, err)
		}
		out := tx.Vout[rt.Vout]
		addrs, ok := p.OutputAddresses(out.Script)
		if len(addrs) != 1 || addrs[0] != rt.Address || !ok {
			t.Errorf("%s:%d shows %v, recorded %s", rt.Txid, rt.Vout, addrs, rt.Address)
		}
		desc, err := p.AddrDescFromAddress(rt.Address)
		if err != nil || !bytes.Equal(desc, p.OutputAddrDesc(out.Script)) {
			t.Errorf("%s:%d: %s is %x, the output is indexed as %x", rt.Txid, rt.Vout, rt.Address, desc, p.OutputAddrDesc(out.Script))
		}
		if rt.Op == "" {
			if out.Specific != nil {
				t.Errorf("%s: payment with coinSpecific %v", rt.Txid, out.Specific)
			}
			continue
		}
		spec, ok := out.Specific.(Specific)
		if !ok || spec.NameOp == nil {
			t.Fatalf("%s:%d: coinSpecific %#v", rt.Txid, rt.Vout, out.Specific)
		}
		op := spec.NameOp
		if op.Op != rt.Op || op.Name != rt.Name || op.Value != rt.Value {
			t.Errorf("%s:%d: %+v, recorded %s %q %q", rt.Txid, rt.Vout, op, rt.Op, rt.Name, rt.Value)
		}
		if rt.Name != "" && (op.NameEncoding != "utf8" || op.ValueEncoding != "utf8") {
			t.Errorf("%s: encodings %s %s", rt.Txid, op.NameEncoding, op.ValueEncoding)
		}
		if (rt.Op == "name_new") != (len(op.Hash) == 40) || (rt.Op == "name_firstupdate") != (op.Rand != "") {
			t.Errorf("%s: hash %q rand %q", rt.Txid, op.Hash, op.Rand)
		}
		// The same outputs parsed within a block carry the same detail.
		js, err := json.Marshal(out.Specific)
		if err != nil || !bytes.Contains(js, []byte(`"nameOp":{"op":"`+rt.Op+`"`)) {
			t.Errorf("%s: coinSpecific JSON %s", rt.Txid, js)
		}
	}
}

// Scripts that look like name operations but are not stay whole: indexed
// under their full script with no name detail.
func TestNotNameOps(t *testing.T) {
	p := btctest.Parser(t, "Namecoin")
	pkh, _ := hex.DecodeString("76a91480ad90d403581fa3bf46086a91b2d9d4125db6c188ac")
	for name, script := range map[string][]byte{
		"update with one argument":  append([]byte{0x53, 0x01, 'a', 0x75}, pkh...),
		"firstupdate with two args": append([]byte{0x52, 0x01, 'a', 0x01, 'b', 0x6d}, pkh...),
		"no drop":                   append([]byte{0x53, 0x01, 'a', 0x01, 'b'}, pkh...),
		"truncated push":            {0x53, 0x05, 'a'},
		"opcode argument":           append([]byte{0x53, 0x01, 'a', 0x76, 0x6d}, pkh...),
		"plain OP_1":                {0x51},
	} {
		if op, _ := ParseNameScript(script); op != nil {
			t.Errorf("%s: parsed as %+v", name, op)
		}
		if desc := p.OutputAddrDesc(script); !bytes.Equal(desc, script) {
			t.Errorf("%s: indexed as %x", name, desc)
		}
		tx := &bchain.Tx{Vout: []bchain.Vout{{Script: script}}}
		annotate(tx)
		if tx.Vout[0].Specific != nil {
			t.Errorf("%s: coinSpecific %v", name, tx.Vout[0].Specific)
		}
	}
	// A name prefix with nothing after it: a name op, indexed whole.
	bare := []byte{0x53, 0x01, 'a', 0x01, 0xff, 0x6d}
	if op, rest := ParseNameScript(bare); op == nil || len(rest) != 0 || op.ValueEncoding != "hex" || op.Value != "ff" {
		t.Errorf("bare name op: %+v %x", op, rest)
	}
	if desc := p.OutputAddrDesc(bare); !bytes.Equal(desc, bare) {
		t.Errorf("bare name op indexed as %x", desc)
	}
	// A P2PK owner script after the prefix (a push first) is found whole.
	key, _ := hex.DecodeString("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	p2pk := append(append([]byte{0x21}, key...), 0xac)
	op, rest := ParseNameScript(append([]byte{0x53, 0x01, 'a', 0x01, 'b', 0x6d, 0x75}, p2pk...))
	if op == nil || !bytes.Equal(rest, p2pk) {
		t.Errorf("P2PK owner: %+v %x", op, rest)
	}
	if a, err := address.NewAddressPubKey(key, MainNetParams); err != nil || !strings.HasPrefix(a.AddressPubKeyHash().EncodeAddress(), "N") {
		t.Errorf("P2PK address: %v", err)
	}
}

// FuzzParseNameScript: never panics; a recognized operation's owner script
// is a suffix of the input, and its detail marshals to JSON.
func FuzzParseNameScript(f *testing.F) {
	f.Add([]byte{0x53, 0x01, 'a', 0x01, 'b', 0x6d, 0x76, 0xa9})
	f.Add([]byte{0x51, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x6d, 0x76})
	f.Fuzz(func(t *testing.T, script []byte) {
		op, rest := ParseNameScript(script)
		if op == nil {
			if rest != nil {
				t.Fatalf("no op but rest %x", rest)
			}
			return
		}
		if !bytes.HasSuffix(script, rest) || len(rest) >= len(script) {
			t.Fatalf("rest %x of %x", rest, script)
		}
		if _, err := json.Marshal(Specific{NameOp: op}); err != nil {
			t.Fatal(err)
		}
	})
}
