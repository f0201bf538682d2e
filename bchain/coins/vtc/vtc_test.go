package vtc

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// genesis builds a Vertcoin genesis block from Vertcoin Core's
// chainparams: the coinbase's scriptSig pushes 0, 999 and the timestamp
// text; its one output pays 50 VTC to an empty script.
func genesis(time, bits, nonce uint32) []byte {
	const text = "01/09/2014 Germany to Help in Disposal of Syrian Chemical Weapons"
	sig := append([]byte{0, 2, 0xe7, 0x03, byte(len(text))}, text...)
	var tx bytes.Buffer
	tx.Write(binary.LittleEndian.AppendUint32(nil, 1))
	tx.Write([]byte{1})
	tx.Write(make([]byte, 32))
	tx.Write([]byte{0xff, 0xff, 0xff, 0xff, byte(len(sig))})
	tx.Write(sig)
	tx.Write([]byte{0xff, 0xff, 0xff, 0xff, 1})
	tx.Write(binary.LittleEndian.AppendUint64(nil, 50e8))
	tx.Write([]byte{0, 0, 0, 0, 0})
	txid := chainhash.DoubleHashH(tx.Bytes())
	var blk bytes.Buffer
	blk.Write(binary.LittleEndian.AppendUint32(nil, 1))
	blk.Write(make([]byte, 32))
	blk.Write(txid[:])
	for _, v := range []uint32{time, bits, nonce} {
		blk.Write(binary.LittleEndian.AppendUint32(nil, v))
	}
	blk.Write([]byte{1})
	blk.Write(tx.Bytes())
	return blk.Bytes()
}

// Each network's parameters are Vertcoin Core's: the genesis block built
// from its chainparams values hashes (double SHA-256 of the header, not
// the proof-of-work hash) to the registered genesis hash; address
// versions, bech32 prefixes, magics and Blockbook's ports.
func TestParamsVertcoin(t *testing.T) {
	for _, c := range []struct {
		name              string
		time, bits, nonce uint32
		genesis           string
		pkh, sh           byte
		hrp               string
		magic             wire.BitcoinNet
		public, internal  int
		slip44            uint32
		shortcut          string
	}{
		{"Vertcoin", 1389311371, 0x1e0ffff0, 5749262, "4d96a915f49d40b1e5c2844d1ee2dccb90013a990ccea12c492d22110489f0c4", 71, 5, "vtc", 0xdab5bffb, 9140, 9040, 28, "VTC"},
		{"Vertcoin Testnet", 1481291250, 0x1e0ffff0, 915027, "cee8f24feb7a64c8f07916976aa4855decac79b6741a8ec2e32e2747497ad2c9", 74, 196, "tvtc", 0x74726576, 19140, 19040, 1, "TVTC"},
	} {
		n, ok := btc.NetworkFor(c.name)
		if !ok {
			t.Fatalf("%s is not registered", c.name)
		}
		p := n.Params
		if p.GenesisHash.String() != c.genesis || p.PubKeyHashAddrID != c.pkh || p.ScriptHashAddrID != c.sh ||
			p.Bech32HRPSegwit != c.hrp || p.Net != c.magic {
			t.Errorf("%s: params %s %d %d %s %#x", c.name, p.GenesisHash, p.PubKeyHashAddrID, p.ScriptHashAddrID, p.Bech32HRPSegwit, uint32(p.Net))
		}
		if n.PublicPort != c.public || n.InternalPort != c.internal || n.Slip44 != c.slip44 || n.Shortcut != c.shortcut {
			t.Errorf("%s: %+v", c.name, n)
		}
		blk, err := btc.NewParser(p).ParseBlock(genesis(c.time, c.bits, c.nonce))
		if err != nil {
			t.Fatalf("%s genesis: %v", c.name, err)
		}
		const merkle = "4af38ca0e323c0a5226208a73b7589a52c030f234810cf51e13e3249fc0123e7"
		if blk.Hash.String() != c.genesis || blk.MerkleRoot.String() != merkle || blk.Txs[0].Txid.String() != merkle {
			t.Errorf("%s genesis: hash %s merkle %s", c.name, blk.Hash, blk.MerkleRoot)
		}
	}
}

// Real Vertcoin data. Blocks: the mainnet and testnet genesis blocks
// (built from Vertcoin Core's chainparams) decode and their hashes and
// merkle roots recompute. Txs (Blockbook's test data, mainnet blocks
// 952235 and 1010918–1010922, segwit ones included): txids recompute and
// output scripts are the recorded ones; where an address was recorded
// (Blockbook's parser tests: P2PKH V…, P2SH 3…, P2WPKH vtc1…) it is the
// one rendered and it decodes to the same script.
func TestRealBlocksVertcoin(t *testing.T) {
	for name, g := range map[string][]byte{
		"Vertcoin":         genesis(1389311371, 0x1e0ffff0, 5749262),
		"Vertcoin Testnet": genesis(1481291250, 0x1e0ffff0, 915027),
	} {
		n, _ := btc.NetworkFor(name)
		blk, err := btc.NewParser(n.Params).ParseBlock(g)
		if err != nil || blk.Hash.String() != n.Params.GenesisHash.String() {
			t.Errorf("%s genesis: %v %v", name, blk, err)
		}
	}
	n, _ := btc.NetworkFor("Vertcoin")
	p := btc.NewParser(n.Params)
	checked := 0
	for _, rec := range btctest.BlockbookTxs(t) {
		checked += btctest.CheckRecordedTx(t, p, rec)
	}
	var parserTxs []btctest.RecordedTx
	btctest.ReadJSON(t, "blockbook_parser_txs.json", &parserTxs)
	for _, rec := range parserTxs {
		checked += btctest.CheckRecordedTx(t, p, rec)
	}
	if checked < 2 {
		t.Fatalf("only %d recorded addresses checked", checked)
	}
	// Blockbook's vertcoin parser tests: addresses and their scripts.
	btctest.CheckAddresses(t, p, map[string]string{
		"Ve7SkjuVgVm1z3X8aqqxnzGV6GraUcde6K":          "76a9142d20ebccc60a8b7dcba607701c6e5bda05eb6d9a88ac",
		"Vavx3LENdGctDMsaVm426McFE5iDDrSuk5":          "76a9140a3c6a3970a5b6b94ee0c1da82d6a87899d169da88ac",
		"36c8VAv74dPZZa4cFayb92hzozkPL4fBPe":          "a91435ec06fa05f2d3b16e88cd7eda7651a10ca2e01987",
		"38A1RNvbA5c9wNRfyLVn1FCH5TPKJVG8YR":          "a91446eb90e002f137f05385896c882fe000cc2e967f87",
		"vtc1qd80qaputavyhtvszlz9zprueqch0qd003g520j": "001469de0e878beb0975b202f88a208f99062ef035ef",
	})
}
