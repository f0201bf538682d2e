package grs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// genesis builds a Groestlcoin genesis block from Groestlcoin Core's
// chainparams: the coinbase's scriptSig pushes 486604799, 4 and the
// timestamp text; its one output pays 0 to a fixed key (mainnet, testnet,
// regtest, signet alike).
func genesis(t *testing.T, version int32, time, bits, nonce uint32) []byte {
	t.Helper()
	const text = "Pressure must be put on Vladimir Putin over Crimea"
	key, _ := hex.DecodeString("04678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5f")
	sig := append([]byte{4, 0xff, 0xff, 0x00, 0x1d, 1, 4, byte(len(text))}, text...)
	var tx bytes.Buffer
	tx.Write(binary.LittleEndian.AppendUint32(nil, 1))
	tx.Write([]byte{1})
	tx.Write(make([]byte, 32))
	tx.Write([]byte{0xff, 0xff, 0xff, 0xff, byte(len(sig))})
	tx.Write(sig)
	tx.Write([]byte{0xff, 0xff, 0xff, 0xff, 1})
	tx.Write(make([]byte, 8))
	tx.Write([]byte{byte(len(key) + 2), byte(len(key))})
	tx.Write(key)
	tx.Write([]byte{0xac, 0, 0, 0, 0})
	txid := sha256.Sum256(tx.Bytes()) // the merkle root of a one-tx block
	var blk bytes.Buffer
	blk.Write(binary.LittleEndian.AppendUint32(nil, uint32(version)))
	blk.Write(make([]byte, 32))
	blk.Write(txid[:])
	for _, v := range []uint32{time, bits, nonce} {
		blk.Write(binary.LittleEndian.AppendUint32(nil, v))
	}
	blk.Write([]byte{1})
	blk.Write(tx.Bytes())
	return blk.Bytes()
}

// Each network's parameters are Groestlcoin Core's: its genesis block,
// built from the chainparams values, hashes (double Grøstl-512) to the
// registered genesis hash and its merkle root (single SHA-256) to Core's;
// address versions, bech32 prefixes, magics and Blockbook's ports.
func TestParamsGroestlcoin(t *testing.T) {
	const merkle = "3ce968df58f9c8a752306c4b7264afab93149dbc578bd08a42c446caaa6628bb"
	for _, c := range []struct {
		name              string
		version           int32
		time, bits, nonce uint32
		genesis           string
		pkh, sh           byte
		hrp               string
		magic             wire.BitcoinNet
		public, internal  int
		slip44            uint32
		shortcut          string
	}{
		{"Groestlcoin", 112, 1395342829, 0x1e0fffff, 220035, "00000ac5927c594d49cc0bdb81759d0da8297eb614683d3acb62f0703b639023", 36, 5, "grs", 0xd4b4bef9, 9145, 9045, 17, "GRS"},
		{"Groestlcoin Testnet", 3, 1440000002, 0x1e00ffff, 6556309, "000000ffbb50fc9898cdd36ec163e6ba23230164c0052a28876255b7dcf2cd36", 111, 196, "tgrs", 0x0709110b, 19145, 19045, 1, "tGRS"},
		{"Groestlcoin Regtest", 3, 1440000002, 0x1e00ffff, 6556309, "000000ffbb50fc9898cdd36ec163e6ba23230164c0052a28876255b7dcf2cd36", 111, 196, "grsrt", 0xdab5bffa, 19146, 19046, 1, "rGRS"},
		{"Groestlcoin Signet", 3, 1606082400, 0x1e00ffff, 14675970, "0000007fcaa2a27993c6cde9e7818c254357af517b876ceba2f23592bb14ab31", 111, 196, "tgrs", 0x7696b422, 19147, 19047, 1, "sGRS"},
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
		blk, err := NewParser(p).ParseBlock(genesis(t, c.version, c.time, c.bits, c.nonce))
		if err != nil {
			t.Fatalf("%s genesis: %v", c.name, err)
		}
		if blk.Hash.String() != c.genesis || blk.MerkleRoot.String() != merkle || blk.Txs[0].Txid.String() != merkle {
			t.Errorf("%s genesis: hash %s merkle %s txid %s", c.name, blk.Hash, blk.MerkleRoot, blk.Txs[0].Txid)
		}
		if n.P2P.BlockHash == nil || n.P2P.Checksum == nil {
			t.Errorf("%s: P2P downloads would hash Bitcoin's way", c.name)
		}
	}
}

// Real Groestlcoin blocks and txs. Blocks (ElectrumX's test data): the
// block hash recomputes with double Grøstl-512, the txids with single
// SHA-256, and the header fields are the recorded ones. Txs (Blockbook's
// test data): txids recompute and every output address is the recorded
// one (P2PKH, P2SH, P2WPKH, OP_RETURN; base58 with the Grøstl checksum).
func TestRealBlocksGroestlcoin(t *testing.T) {
	for file, name := range map[string]string{
		"electrumx_mainnet_2000000.json": "Groestlcoin",
		"electrumx_testnet_600000.json":  "Groestlcoin Testnet",
	} {
		n, _ := btc.NetworkFor(name)
		var rec struct {
			Hash, Merkleroot, Previousblockhash, Block, Bits string
			Tx                                               []string
			Time, Nonce                                      int64
		}
		btctest.ReadJSON(t, file, &rec)
		raw, _ := hex.DecodeString(rec.Block)
		blk, err := NewParser(n.Params).ParseBlock(raw)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if blk.Hash.String() != rec.Hash || blk.Prev.String() != rec.Previousblockhash ||
			blk.MerkleRoot.String() != rec.Merkleroot || blk.Time != rec.Time || int64(blk.Nonce) != rec.Nonce {
			t.Errorf("%s: block %s prev %s merkle %s", file, blk.Hash, blk.Prev, blk.MerkleRoot)
		}
		if len(blk.Txs) != len(rec.Tx) {
			t.Fatalf("%s: %d txs, recorded %d", file, len(blk.Txs), len(rec.Tx))
		}
		for i, tx := range blk.Txs {
			if tx.Txid.String() != rec.Tx[i] {
				t.Errorf("%s: tx %d id %s, recorded %s", file, i, tx.Txid, rec.Tx[i])
			}
			p := NewParser(n.Params)
			for _, out := range tx.Vout {
				addrs, _ := p.OutputAddresses(out.Script)
				if len(addrs) == 0 {
					t.Errorf("%s: output %x has no address", file, out.Script)
				}
			}
		}
	}
	// Regtest and signet: their genesis blocks, built from Groestlcoin
	// Core's chainparams, decode under their networks' parsers; the P2PK
	// output renders as its key's P2PKH address, which decodes back.
	for name, raw := range map[string][]byte{
		"Groestlcoin Regtest": genesis(t, 3, 1440000002, 0x1e00ffff, 6556309),
		"Groestlcoin Signet":  genesis(t, 3, 1606082400, 0x1e00ffff, 14675970),
	} {
		n, _ := btc.NetworkFor(name)
		p := NewParser(n.Params)
		blk, err := p.ParseBlock(raw)
		if err != nil || blk.Hash.String() != n.Params.GenesisHash.String() {
			t.Fatalf("%s genesis: %v %v", name, blk, err)
		}
		addrs, ok := p.OutputAddresses(blk.Txs[0].Vout[0].Script)
		if !ok || len(addrs) != 1 {
			t.Fatalf("%s genesis output: %v", name, addrs)
		}
		if desc, err := p.AddrDescFromAddress(addrs[0]); err != nil || !bytes.Equal(desc, p.OutputAddrDesc(blk.Txs[0].Vout[0].Script)) {
			t.Errorf("%s: %s decodes to %x, %v", name, addrs[0], desc, err)
		}
	}
	main := NewParser(MainNetParams)
	for _, rec := range btctest.BlockbookTxs(t) {
		btctest.CheckRecordedTx(t, main, rec)
	}
	// Blockbook's grs parser tests: a mainnet P2PKH and a testnet segwit tx.
	var parserTxs []struct {
		Network string `json:"network"`
		btctest.RecordedTx
	}
	btctest.ReadJSON(t, "blockbook_parser_txs.json", &parserTxs)
	for _, rec := range parserTxs {
		n, _ := btc.NetworkFor(rec.Network)
		btctest.CheckRecordedTx(t, NewParser(n.Params), rec.RecordedTx)
	}
}
