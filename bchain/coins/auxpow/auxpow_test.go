package auxpow

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// realBlock is a block recorded by ElectrumX's test data (see the README
// of the coin packages' testdata).
type realBlock struct {
	Hash       string   `json:"hash"`
	MerkleRoot string   `json:"merkleroot"`
	Prev       string   `json:"previousblockhash"`
	Tx         []string `json:"tx"`
	Block      string   `json:"block"`
}

// Merge-mined mainnet blocks: Dogecoin's first AuxPoW block (parent:
// Litecoin) and a Namecoin block (parent: Bitcoin).
var realFiles = []string{
	"../doge/testdata/electrumx_dogecoin_mainnet_371337.json",
	"../nmc/testdata/electrumx_namecoin_mainnet_19200.json",
}

func loadReal(tb testing.TB, path string) (realBlock, []byte) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var b realBlock
	if err := json.Unmarshal(data, &b); err != nil {
		tb.Fatal(err)
	}
	raw, err := hex.DecodeString(b.Block)
	if err != nil {
		tb.Fatal(err)
	}
	return b, raw
}

// The AuxPoW data of real blocks decodes, proves what it must (the parent
// coinbase is in the parent header's merkle tree, the parent coinbase
// commits to the chain merkle root that holds the block's hash), and is
// skipped exactly: the block's txs follow it.
func TestDecodeRealAuxPoW(t *testing.T) {
	for _, f := range realFiles {
		b, raw := loadReal(t, f)
		var h wire.BlockHeader
		if err := h.Deserialize(bytes.NewReader(raw[:80])); err != nil {
			t.Fatal(err)
		}
		if !HasAuxPoW(h.Version) {
			t.Fatalf("%s: version %#x has no AuxPoW flag", f, h.Version)
		}
		a, n, err := Decode(raw[80:])
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		hash := h.BlockHash()
		if hash.String() != b.Hash {
			t.Errorf("%s: hash %s, recorded %s", f, hash, b.Hash)
		}
		cbRoot := BranchRoot(a.CoinbaseTx.TxHash(), a.CoinbaseBranch, a.CoinbaseIndex)
		if cbRoot != a.ParentHeader.MerkleRoot {
			t.Errorf("%s: parent coinbase branch gives %s, parent header has %s", f, cbRoot, a.ParentHeader.MerkleRoot)
		}
		chainRoot := BranchRoot(hash, a.ChainBranch, a.ChainIndex)
		// The coinbase holds the chain root in display (reversed) order.
		want := make([]byte, 32)
		for i := range want {
			want[i] = chainRoot[31-i]
		}
		if !bytes.Contains(a.CoinbaseTx.TxIn[0].SignatureScript, want) {
			t.Errorf("%s: parent coinbase does not commit to chain root %x", f, want)
		}
		// The tx count follows the AuxPoW data: the block's txs decode from there.
		blk, err := ParseBlock(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(blk.Txs) != len(b.Tx) || blk.Txs[0].Txid.String() != b.Tx[0] {
			t.Errorf("%s: %d txs after %d AuxPoW bytes, want %d", f, len(blk.Txs), n, len(b.Tx))
		}
		if len(blk.Header) != 80 || !bytes.Equal(blk.Header, raw[:80]) {
			t.Errorf("%s: stored header is %d bytes, want the 80-byte own header", f, len(blk.Header))
		}
		if blk.Hash.String() != b.Hash || blk.Prev.String() != b.Prev || blk.MerkleRoot.String() != b.MerkleRoot {
			t.Errorf("%s: header fields %s %s %s", f, blk.Hash, blk.Prev, blk.MerkleRoot)
		}
		if ChainID(h.Version) == 0 {
			t.Errorf("%s: no chain id in version %#x", f, h.Version)
		}
	}
}

// Truncated or corrupted AuxPoW data is a clear error wrapping
// bchain.ErrInvalidData (and ErrMalformed from Decode), never a panic.
func TestMalformedAuxPoW(t *testing.T) {
	_, raw := loadReal(t, realFiles[0])
	_, n, err := Decode(raw[80:])
	if err != nil {
		t.Fatal(err)
	}
	for cut := 80; cut < 80+n; cut++ {
		if _, err := ParseBlock(raw[:cut]); !errors.Is(err, bchain.ErrInvalidData) {
			t.Fatalf("block cut at %d: %v, want ErrInvalidData", cut, err)
		}
		if _, _, err := Decode(raw[80:cut]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("auxpow cut at %d: %v, want ErrMalformed", cut, err)
		}
	}
	// A chain branch claiming a huge number of hashes.
	a, _, _ := Decode(raw[80:])
	var buf bytes.Buffer
	if err := a.CoinbaseTx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	buf.Write(a.BlockHash[:])
	buf.Write([]byte{0xfe, 0xff, 0xff, 0xff, 0x7f})
	if _, _, err := Decode(buf.Bytes()); !errors.Is(err, ErrMalformed) {
		t.Fatalf("huge branch: %v", err)
	}
	// Without the AuxPoW flag the same bytes are not a valid block.
	flipped := bytes.Clone(raw)
	flipped[1] &^= VersionFlag >> 8
	if _, err := ParseBlock(flipped); !errors.Is(err, bchain.ErrInvalidData) {
		t.Fatalf("unflagged block: %v", err)
	}
}

// encode is the AuxPoW serialization, for the round-trip property.
func encode(tb testing.TB, a *AuxPoW) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := a.CoinbaseTx.Serialize(&buf); err != nil {
		tb.Fatal(err)
	}
	buf.Write(a.BlockHash[:])
	for _, br := range []struct {
		h   []chainhash.Hash
		idx int32
	}{{a.CoinbaseBranch, a.CoinbaseIndex}, {a.ChainBranch, a.ChainIndex}} {
		if err := wire.WriteVarInt(&buf, 0, uint64(len(br.h))); err != nil {
			tb.Fatal(err)
		}
		for _, h := range br.h {
			buf.Write(h[:])
		}
		buf.Write([]byte{byte(br.idx), byte(br.idx >> 8), byte(br.idx >> 16), byte(br.idx >> 24)})
	}
	if err := a.ParentHeader.Serialize(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzDecode: any input either fails with ErrMalformed or decodes to an
// AuxPoW whose serialization is exactly the bytes consumed.
func FuzzDecode(f *testing.F) {
	for _, file := range realFiles {
		_, raw := loadReal(f, file)
		f.Add(raw[80:])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, n, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error without ErrMalformed: %v", err)
			}
			return
		}
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		// btcd re-serializes a tx exactly as read, but a witness-flagged
		// encoding without witness data is not canonical: skip those.
		if enc := encode(t, a); !bytes.Equal(enc, data[:n]) && a.CoinbaseTx.HasWitness() == (len(data) > 4 && data[4] == 0) {
			t.Fatalf("re-encoding differs:\n%x\n%x", enc, data[:n])
		}
	})
}
