package ltc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// blockExpect is what the node reported for a fixture block (see
// testdata/README.md): getblock verbosity 2, trimmed.
type blockExpect struct {
	Hash       string `json:"hash"`
	NTx        int    `json:"nTx"`
	MerkleRoot string `json:"merkleroot"`
	MWEB       struct {
		Hash    string `json:"hash"`
		Height  int64  `json:"height"`
		Inputs  int    `json:"inputs"`
		Outputs int    `json:"outputs"`
		Kernels int    `json:"kernels"`
	} `json:"mweb"`
	Tx []struct {
		Txid  string `json:"txid"`
		Size  int    `json:"size"`
		VSize int    `json:"vsize"`
		Vout  []struct {
			Value   uint64 `json:"value"`
			Type    string `json:"type"`
			Address string `json:"address"`
		} `json:"vout"`
	} `json:"tx"`
}

func loadFixture(t *testing.T, name string) ([]byte, *blockExpect) {
	t.Helper()
	raw := btctest.ReadHex(t, name+".hex")
	var e blockExpect
	btctest.ReadJSON(t, name+".json", &e)
	return raw, &e
}

func dsha(b []byte) [32]byte {
	h := sha256.Sum256(b)
	return sha256.Sum256(h[:])
}

// Real blocks: Litecoin mainnet MWEB blocks (each with its HogEx and
// extension block), Litecoin testnet's genesis block, and litecoind regtest
// MWEB blocks with a peg-in, an MWEB-only spend and a peg-out.
func TestRealBlocksLitecoin(t *testing.T) {
	cases := []struct{ coin, fixture string }{
		{"Litecoin", "mainnet-2383207"},
		{"Litecoin", "mainnet-2383209"},
		{"Litecoin Testnet", "testnet-0"},
		{"Litecoin Regtest", "regtest-432"},
		{"Litecoin Regtest", "regtest-433"},
		{"Litecoin Regtest", "regtest-437"},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			raw, e := loadFixture(t, c.fixture)
			n, ok := btc.NetworkFor(c.coin)
			if !ok {
				t.Fatalf("%s not registered", c.coin)
			}
			up, err := n.NewParser(n.Params, &bchain.Config{})
			if err != nil {
				t.Fatal(err)
			}
			p := up.(*Parser)
			blk, ext, err := parseBlock(raw)
			if err != nil {
				t.Fatal(err)
			}
			if blk2, err := p.ParseBlock(raw); err != nil || blk2.Hash != blk.Hash {
				t.Fatalf("ParseBlock: %v", err)
			}
			if blk.Hash.String() != e.Hash {
				t.Errorf("hash %s, want %s", blk.Hash, e.Hash)
			}
			if got := btc.DisplayHash(dsha(blk.Header)).String(); got != e.Hash {
				t.Errorf("header hashes to %s", got)
			}
			if len(blk.Txs) != e.NTx || len(e.Tx) != e.NTx {
				t.Fatalf("%d txs, node's nTx %d", len(blk.Txs), e.NTx)
			}
			if got := btctest.MerkleRoot(blk.Txs).String(); got != e.MerkleRoot || blk.MerkleRoot.String() != e.MerkleRoot {
				t.Errorf("merkle root %s (header %s), want %s", got, blk.MerkleRoot, e.MerkleRoot)
			}
			checkMWEB(t, blk, ext, e)
			for i := range blk.Txs {
				checkTx(t, p, &blk.Txs[i], e, i)
			}
		})
	}
}

func checkMWEB(t *testing.T, blk *bchain.Block, ext *mwebSummary, e *blockExpect) {
	t.Helper()
	if e.MWEB.Hash == "" {
		if ext != nil || hogEx(&blk.Txs[len(blk.Txs)-1]) {
			t.Fatal("MWEB data in a block the node shows without")
		}
		return
	}
	if ext == nil || !ext.HasBlock {
		t.Fatal("no MWEB extension block decoded")
	}
	if ext.Height != e.MWEB.Height || ext.Inputs != e.MWEB.Inputs || ext.Outputs != e.MWEB.Outputs || ext.Kernels != e.MWEB.Kernels {
		t.Errorf("mweb %+v, node says %+v", ext, e.MWEB)
	}
	last := &blk.Txs[len(blk.Txs)-1]
	if !hogEx(last) {
		t.Fatal("last tx is not marked as the HogEx")
	}
	// Peg-ins and peg-outs of the extension block's kernels are the canonical
	// peg-in outputs and the HogEx's outputs after the pool.
	var pegIn uint64
	for i := range blk.Txs {
		for _, o := range blk.Txs[i].Vout {
			if s, _ := o.Specific.(VoutSpecific); s.MWEB == "pegin" {
				pegIn += o.Value
			}
		}
	}
	if uint64(ext.PegInValue) != pegIn || ext.PegOuts != len(blk.Txs[len(blk.Txs)-1].Vout)-1 {
		t.Errorf("mweb peg-ins %d sat, %d peg-outs; block shows %d sat, HogEx %d outputs", ext.PegInValue, ext.PegOuts, pegIn, len(blk.Txs[len(blk.Txs)-1].Vout))
	}
	// The HogEx pays the MWEB pool to a v8 program of the MWEB header hash.
	if want, _ := hex.DecodeString("5820" + e.MWEB.Hash); !bytes.Equal(last.Vout[0].Script, want) {
		t.Errorf("HogEx output 0 is %x", last.Vout[0].Script)
	}
}

func checkTx(t *testing.T, p *Parser, tx *bchain.Tx, e *blockExpect, i int) {
	t.Helper()
	want := e.Tx[i]
	if tx.Txid.String() != want.Txid {
		t.Errorf("tx %d: txid %s, want %s", i, tx.Txid, want.Txid)
	}
	if tx.Size != want.Size || tx.VSize != want.VSize {
		t.Errorf("tx %d: size %d vsize %d, want %d %d", i, tx.Size, tx.VSize, want.Size, want.VSize)
	}
	again, err := p.ParseTx(tx.Raw)
	if err != nil || again.Txid != tx.Txid {
		t.Errorf("tx %d: ParseTx of its raw bytes: %v", i, err)
	}
	if len(tx.Vout) != len(want.Vout) {
		t.Fatalf("tx %d: %d outputs, want %d", i, len(tx.Vout), len(want.Vout))
	}
	pegIns := 0
	for j, o := range tx.Vout {
		w := want.Vout[j]
		if o.Value != w.Value {
			t.Errorf("tx %d out %d: value %d, want %d", i, j, o.Value, w.Value)
		}
		addrs, _ := p.OutputAddresses(o.Script)
		switch {
		case w.Address != "":
			if len(addrs) != 1 || addrs[0] != w.Address {
				t.Errorf("tx %d out %d: addresses %v, want %s", i, j, addrs, w.Address)
			}
		case w.Type == "pubkey" || w.Type == "nulldata":
			// Core shows no address; Blockbook shows P2PK as its P2PKH
			// address and data carriers as OP_RETURN text.
		case len(addrs) != 0:
			t.Errorf("tx %d out %d (%s): addresses %v, node shows none", i, j, w.Type, addrs)
		}
		spec, _ := o.Specific.(VoutSpecific)
		switch w.Type {
		case "witness_mweb_pegin":
			pegIns++
			if spec.MWEB != "pegin" {
				t.Errorf("tx %d out %d: peg-in not marked: %+v", i, j, o.Specific)
			}
		case "witness_mweb_hogaddr":
			if spec.MWEB != "hogaddr" {
				t.Errorf("tx %d out %d: HogAddr not marked: %+v", i, j, o.Specific)
			}
		default:
			if hogEx(tx) != (spec.MWEB == "pegout") {
				t.Errorf("tx %d out %d: peg-out mark %+v", i, j, o.Specific)
			}
		}
	}
	if s, _ := tx.Specific.(TxSpecific); s.PegIns != pegIns {
		t.Errorf("tx %d: coinSpecific %+v, want %d peg-ins", i, tx.Specific, pegIns)
	}
}
