package btc_test

import (
	"bytes"
	"compress/bzip2"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/address/v2/bech32"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // HASH160 is defined with RIPEMD-160

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Helpers in this file carry a "pt" (parser test) prefix so that they cannot
// clash with other test files of the package.

func ptParser() *btc.Parser { return btc.NewParser(&chaincfg.MainNetParams) }

// ---------------------------------------------------------------------------
// Test data.

type ptFixture struct {
	once sync.Once
	data []byte
	err  error
}

var ptFixtures sync.Map // relative path -> *ptFixture

// ptLoad returns the content of testdata/<rel>, decompressed when the name
// ends in .bz2. The result is shared between tests and must not be modified.
func ptLoad(tb testing.TB, rel string) []byte {
	tb.Helper()
	v, _ := ptFixtures.LoadOrStore(rel, new(ptFixture))
	fx := v.(*ptFixture)
	fx.once.Do(func() {
		f, err := os.Open(filepath.Join("testdata", filepath.FromSlash(rel)))
		if err != nil {
			fx.err = err
			return
		}
		defer f.Close() //nolint:errcheck // opened for reading: Close has nothing to lose
		var r io.Reader = f
		if strings.HasSuffix(rel, ".bz2") {
			r = bzip2.NewReader(f)
		}
		fx.data, fx.err = io.ReadAll(r)
	})
	if fx.err != nil {
		tb.Fatalf("test data %s: %v", rel, fx.err)
	}
	return fx.data
}

func ptHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func ptHash160(b []byte) []byte {
	s := sha256.Sum256(b)
	r := ripemd160.New()
	r.Write(s[:])
	return r.Sum(nil)
}

func ptP2PKH(hash160 []byte) []byte {
	return append(append([]byte{0x76, 0xa9, 0x14}, hash160...), 0x88, 0xac)
}

// ptDoubleSHA256 returns SHA256(SHA256(b)) in internal byte order.
func ptDoubleSHA256(b []byte) [32]byte {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}

// ptDisplay renders an internal-order hash the way explorers print it.
func ptDisplay(h [32]byte) string {
	for i, j := 0, 31; i < j; i, j = i+1, j-1 {
		h[i], h[j] = h[j], h[i]
	}
	return hex.EncodeToString(h[:])
}

// ptVarIntLen is the size of Bitcoin's CompactSize encoding of n.
func ptVarIntLen(n uint64) int {
	switch {
	case n < 0xfd:
		return 1
	case n <= 0xffff:
		return 3
	case n <= 0xffffffff:
		return 5
	}
	return 9
}

// ---------------------------------------------------------------------------
// Mainnet blocks.

type ptBlock struct {
	height  uint32
	file    string
	hash    string // from the header, checked against the file name and PoW
	prev    string
	merkle  string
	version int32
	time    int64
	bits    uint32
	nonce   uint32
	size    int
	txs     int
	outputs int
	// witnessTxs counts txs serialized with witness data, witnessInputs the
	// inputs with a non-empty witness (the coinbase's nonce included).
	witnessTxs, witnessInputs int
	coinbaseValue             uint64 // sum of the coinbase outputs
	kinds                     map[string]int
	opReturnText              int // OP_RETURN outputs rendered as "(text)"
	opReturnHex               int // ... and as hex
}

var ptMainnetBlocks = []ptBlock{
	{
		height:        574200,
		file:          "mainnet/block-0000000000000000001602407ac49862a7bca9d00f7f402db20b7be2f5de59d2.blk.bz2",
		hash:          "0000000000000000001602407ac49862a7bca9d00f7f402db20b7be2f5de59d2",
		prev:          "0000000000000000001a899a865d3e6f9fef7801b86c0dc1bdda8b2337c1ae75",
		merkle:        "7343589f88a866dee0247b29d1330467201e7eb9bb0001a01ac0922a983a9e52",
		version:       0x20000000,
		time:          1556771671,
		bits:          0x172c4e11,
		nonce:         2570383886,
		size:          1245250,
		txs:           3315,
		outputs:       8150,
		witnessTxs:    1341,
		witnessInputs: 2285,
		coinbaseValue: 1300076961,
		kinds: map[string]int{
			"p2pkh": 4035, "p2sh": 2601, "p2wpkh": 442, "p2wsh": 58,
			"p2pk": 38, "op_return": 976,
		},
		opReturnText: 45,
		opReturnHex:  931,
	},
	{
		height:        540107,
		file:          "mainnet/block-00000000000000000021868c2cefc52a480d173c849412fe81c4e5ab806f94ab.blk.bz2",
		hash:          "00000000000000000021868c2cefc52a480d173c849412fe81c4e5ab806f94ab",
		prev:          "0000000000000000001e719751a8f1262a2a37599f0f671cfa55ad57b7b3d2a1",
		merkle:        "bc337232e053ba46ae12f21c640d16190cbba10f914759ef54a7f07eda58be70",
		version:       0x20000000,
		time:          1536190243,
		bits:          0x1729d72d,
		nonce:         3689036364,
		size:          2259447,
		txs:           230,
		outputs:       472,
		witnessTxs:    104,
		witnessInputs: 6712,
		coinbaseValue: 1254491058,
		kinds: map[string]int{
			"p2pkh": 266, "p2sh": 175, "p2wpkh": 15, "nonstandard": 1, "op_return": 15,
		},
		opReturnText: 2,
		opReturnHex:  13,
	},
}

// ptCheckTx compares a parsed tx field by field with btcd's own decoding of
// tx.Raw, and its size fields with an independent weight computation. It
// returns btcd's decoding.
func ptCheckTx(tb testing.TB, p *btc.Parser, tx *bchain.Tx, ctx string) *wire.MsgTx {
	tb.Helper()
	var m wire.MsgTx
	r := bytes.NewReader(tx.Raw)
	if err := m.Deserialize(r); err != nil {
		tb.Fatalf("%s: Raw does not decode: %v", ctx, err)
	}
	if r.Len() != 0 {
		tb.Fatalf("%s: Raw has %d bytes after the tx", ctx, r.Len())
	}
	var full, stripped bytes.Buffer
	if err := m.Serialize(&full); err != nil {
		tb.Fatal(err)
	}
	if !bytes.Equal(full.Bytes(), tx.Raw) {
		tb.Fatalf("%s: Raw does not round-trip through re-serialization", ctx)
	}
	if err := m.SerializeNoWitness(&stripped); err != nil {
		tb.Fatal(err)
	}
	if got, want := tx.Txid.String(), m.TxHash().String(); got != want {
		tb.Fatalf("%s: Txid %s, btcd says %s", ctx, got, want)
	}
	if got, want := tx.Txid.String(), ptDisplay(ptDoubleSHA256(stripped.Bytes())); got != want {
		tb.Fatalf("%s: Txid %s, dSHA256 of the stripped tx is %s", ctx, got, want)
	}
	if tx.Size != len(tx.Raw) {
		tb.Fatalf("%s: Size %d, len(Raw) %d", ctx, tx.Size, len(tx.Raw))
	}
	weight := blockchain.GetTransactionWeight(btcutil.NewTx(&m))
	if want := int((weight + 3) / 4); tx.VSize != want {
		tb.Fatalf("%s: VSize %d, want ceil(weight %d / 4) = %d", ctx, tx.VSize, weight, want)
	}
	if got := tx.Weight(); int64(got) != weight {
		tb.Fatalf("%s: Weight %d, btcd says %d", ctx, got, weight)
	}
	if tx.Version != m.Version || tx.LockTime != m.LockTime {
		tb.Fatalf("%s: version/locktime %d/%d, want %d/%d", ctx, tx.Version, tx.LockTime, m.Version, m.LockTime)
	}
	if len(tx.Vin) != len(m.TxIn) || len(tx.Vout) != len(m.TxOut) {
		tb.Fatalf("%s: %d inputs / %d outputs, want %d / %d", ctx, len(tx.Vin), len(tx.Vout), len(m.TxIn), len(m.TxOut))
	}
	coinbase := blockchain.IsCoinBaseTx(&m)
	if tx.IsCoinbase() != coinbase {
		tb.Fatalf("%s: IsCoinbase %v, btcd says %v", ctx, tx.IsCoinbase(), coinbase)
	}
	for i, in := range m.TxIn {
		v := &tx.Vin[i]
		if v.Coinbase != coinbase {
			tb.Fatalf("%s: vin %d: Coinbase %v, want %v", ctx, i, v.Coinbase, coinbase)
		}
		if coinbase {
			if !v.PrevTxid.IsZero() {
				tb.Fatalf("%s: coinbase input has PrevTxid %s", ctx, v.PrevTxid)
			}
		} else if v.PrevTxid.String() != in.PreviousOutPoint.Hash.String() || v.PrevVout != in.PreviousOutPoint.Index {
			tb.Fatalf("%s: vin %d: prevout %s:%d, want %s", ctx, i, v.PrevTxid, v.PrevVout, in.PreviousOutPoint)
		}
		if !bytes.Equal(v.ScriptSig, in.SignatureScript) || v.Sequence != in.Sequence {
			tb.Fatalf("%s: vin %d: scriptSig/sequence differ", ctx, i)
		}
		if len(v.Witness) != len(in.Witness) {
			tb.Fatalf("%s: vin %d: %d witness items, want %d", ctx, i, len(v.Witness), len(in.Witness))
		}
		for j := range in.Witness {
			if !bytes.Equal(v.Witness[j], in.Witness[j]) {
				tb.Fatalf("%s: vin %d: witness item %d differs", ctx, i, j)
			}
		}
	}
	for i, out := range m.TxOut {
		if out.Value >= 0 && tx.Vout[i].Value != uint64(out.Value) {
			tb.Fatalf("%s: vout %d: value %d, want %d", ctx, i, tx.Vout[i].Value, out.Value)
		}
		if !bytes.Equal(tx.Vout[i].Script, out.PkScript) {
			tb.Fatalf("%s: vout %d: script differs", ctx, i)
		}
	}
	again, err := p.ParseTx(tx.Raw)
	if err != nil {
		tb.Fatalf("%s: ParseTx(Raw): %v", ctx, err)
	}
	if !reflect.DeepEqual(again, tx) {
		tb.Fatalf("%s: ParseTx(Raw) differs from the tx it came from", ctx)
	}
	return &m
}

// ptMerkleRoot computes the Bitcoin merkle root of internal-order hashes.
func ptMerkleRoot(level [][32]byte) [32]byte {
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		next := make([][32]byte, len(level)/2)
		for i := range next {
			var pair [64]byte
			copy(pair[:32], level[2*i][:])
			copy(pair[32:], level[2*i+1][:])
			next[i] = ptDoubleSHA256(pair[:])
		}
		level = next
	}
	return level[0]
}

func ptInternal(h bchain.Hash) [32]byte {
	var out [32]byte
	for i := range h {
		out[i] = h[31-i]
	}
	return out
}

func TestParseBlockMainnet(t *testing.T) {
	p := ptParser()
	for i := range ptMainnetBlocks {
		fx := &ptMainnetBlocks[i]
		t.Run(fmt.Sprint(fx.height), func(t *testing.T) {
			raw := ptLoad(t, fx.file)
			if len(raw) != fx.size {
				t.Fatalf("test data has %d bytes, want %d", len(raw), fx.size)
			}
			if !strings.Contains(fx.file, fx.hash) {
				t.Fatalf("file %s is not named after block %s", fx.file, fx.hash)
			}
			blk, err := p.ParseBlock(raw)
			if err != nil {
				t.Fatal(err)
			}

			// Header, each field read independently from the raw bytes.
			var prev, merkle [32]byte
			copy(prev[:], raw[4:36])
			copy(merkle[:], raw[36:68])
			le := binary.LittleEndian
			if got := ptDisplay(ptDoubleSHA256(raw[:80])); got != fx.hash {
				t.Fatalf("dSHA256(header) = %s, want %s", got, fx.hash)
			}
			if blk.Hash.String() != fx.hash {
				t.Errorf("Hash %s, want %s", blk.Hash, fx.hash)
			}
			if len(blk.Header) != 80 || ptDisplay(ptDoubleSHA256(blk.Header)) != fx.hash {
				t.Errorf("Header %x does not hash to the block", blk.Header)
			}
			if ptDisplay(prev) != fx.prev || blk.Prev.String() != fx.prev {
				t.Errorf("Prev %s (header %s), want %s", blk.Prev, ptDisplay(prev), fx.prev)
			}
			if ptDisplay(merkle) != fx.merkle || blk.MerkleRoot.String() != fx.merkle {
				t.Errorf("MerkleRoot %s (header %s), want %s", blk.MerkleRoot, ptDisplay(merkle), fx.merkle)
			}
			if blk.Version != fx.version || int32(le.Uint32(raw[0:4])) != fx.version {
				t.Errorf("Version %#x, want %#x", blk.Version, fx.version)
			}
			if blk.Time != fx.time || int64(le.Uint32(raw[68:72])) != fx.time {
				t.Errorf("Time %d, want %d", blk.Time, fx.time)
			}
			if blk.Bits != fx.bits || le.Uint32(raw[72:76]) != fx.bits {
				t.Errorf("Bits %#x, want %#x", blk.Bits, fx.bits)
			}
			if blk.Nonce != fx.nonce || le.Uint32(raw[76:80]) != fx.nonce {
				t.Errorf("Nonce %d, want %d", blk.Nonce, fx.nonce)
			}
			if blk.Size != len(raw) || blk.Height != 0 {
				t.Errorf("Size %d Height %d, want %d and 0 (height is the caller's)", blk.Size, blk.Height, len(raw))
			}
			// Proof of work: a real mainnet header hashes below its target.
			h, err := chainhash.NewHashFromStr(fx.hash)
			if err != nil {
				t.Fatal(err)
			}
			if blockchain.HashToBig(h).Cmp(blockchain.CompactToBig(fx.bits)) > 0 {
				t.Fatalf("hash %s is above the target of bits %#x", fx.hash, fx.bits)
			}

			if len(blk.Txs) != fx.txs {
				t.Fatalf("%d txs, want %d", len(blk.Txs), fx.txs)
			}
			// The txs tile the block after the header and tx count.
			off := 80 + ptVarIntLen(uint64(len(blk.Txs)))
			txids := make([][32]byte, len(blk.Txs))
			wtxids := make([][32]byte, len(blk.Txs))
			var witnessTxs, witnessInputs, outputs int
			for i := range blk.Txs {
				tx := &blk.Txs[i]
				ctx := fmt.Sprintf("block %d tx %d %s", fx.height, i, tx.Txid)
				if off+len(tx.Raw) > len(raw) || !bytes.Equal(tx.Raw, raw[off:off+len(tx.Raw)]) {
					t.Fatalf("%s: Raw is not the block's bytes at offset %d", ctx, off)
				}
				off += len(tx.Raw)
				m := ptCheckTx(t, p, tx, ctx)
				if tx.IsCoinbase() != (i == 0) {
					t.Fatalf("%s: IsCoinbase %v", ctx, tx.IsCoinbase())
				}
				if m.HasWitness() {
					witnessTxs++
				}
				for _, in := range tx.Vin {
					if len(in.Witness) > 0 {
						witnessInputs++
					}
				}
				outputs += len(tx.Vout)
				txids[i] = ptInternal(tx.Txid)
				if i > 0 {
					wtxids[i] = ptDoubleSHA256(tx.Raw)
				}
			}
			if off != len(raw) {
				t.Fatalf("txs end at %d, block at %d", off, len(raw))
			}
			if got := ptDisplay(ptMerkleRoot(txids)); got != fx.merkle {
				t.Fatalf("merkle root of the parsed txids %s, header says %s", got, fx.merkle)
			}
			if witnessTxs != fx.witnessTxs || witnessInputs != fx.witnessInputs || outputs != fx.outputs {
				t.Errorf("%d witness txs, %d witness inputs, %d outputs; want %d, %d, %d",
					witnessTxs, witnessInputs, outputs, fx.witnessTxs, fx.witnessInputs, fx.outputs)
			}

			// Coinbase: BIP34 height, value, and the BIP141 commitment to the
			// wtxids (computed from the parsed Raw bytes).
			cb := &blk.Txs[0]
			if got, err := blockchain.ExtractCoinbaseHeight(btcutil.NewTx(ptCheckTx(t, p, cb, "coinbase"))); err != nil || got != int32(fx.height) {
				t.Errorf("coinbase height %d (%v), want %d", got, err, fx.height)
			}
			if s := cb.Vin[0].ScriptSig; len(s) < 4 || s[0] != 3 || uint32(s[1])|uint32(s[2])<<8|uint32(s[3])<<16 != fx.height {
				t.Errorf("coinbase scriptSig does not start with push(%d): %x", fx.height, s)
			}
			var cbValue uint64
			var commitment []byte
			for _, out := range cb.Vout {
				cbValue += out.Value
				if len(out.Script) >= 38 && bytes.HasPrefix(out.Script, []byte{0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed}) {
					commitment = out.Script[6:38]
				}
			}
			if cbValue != fx.coinbaseValue {
				t.Errorf("coinbase pays %d, want %d", cbValue, fx.coinbaseValue)
			}
			if len(cb.Vin[0].Witness) != 1 || len(cb.Vin[0].Witness[0]) != 32 || commitment == nil {
				t.Fatalf("coinbase has no witness nonce or commitment")
			}
			root := ptMerkleRoot(wtxids)
			if got := ptDoubleSHA256(append(root[:], cb.Vin[0].Witness[0]...)); !bytes.Equal(got[:], commitment) {
				t.Fatalf("witness commitment %x, computed %x", commitment, got)
			}
		})
	}
}

// ptSegwitAddress encodes a witness program as bech32 (m == false) or
// bech32m, whatever version it has.
func ptSegwitAddress(tb testing.TB, hrp string, version byte, program []byte, m bool) string {
	tb.Helper()
	data, err := bech32.ConvertBits(program, 8, 5, true)
	if err != nil {
		tb.Fatal(err)
	}
	data = append([]byte{version}, data...)
	var s string
	if m {
		s, err = bech32.EncodeM(hrp, data)
	} else {
		s, err = bech32.Encode(hrp, data)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// ptSinglePush returns the payload of s when s is exactly one data push.
func ptSinglePush(s []byte) ([]byte, bool) {
	if len(s) == 0 {
		return nil, false
	}
	op, s := s[0], s[1:]
	var n uint64
	switch {
	case op <= 75:
		n = uint64(op)
	case op == 0x4c && len(s) >= 1:
		n, s = uint64(s[0]), s[1:]
	case op == 0x4d && len(s) >= 2:
		n, s = uint64(binary.LittleEndian.Uint16(s)), s[2:]
	case op == 0x4e && len(s) >= 4:
		n, s = uint64(binary.LittleEndian.Uint32(s)), s[4:]
	default:
		return nil, false
	}
	if uint64(len(s)) != n {
		return nil, false
	}
	return s, true
}

// ptOPReturnText is an independent rendering of data-carrier scripts.
func ptOPReturnText(script []byte) string {
	if len(script) == 1 {
		return "OP_RETURN"
	}
	rest := script[1:]
	if data, ok := ptSinglePush(rest); ok {
		if utf8.Valid(data) {
			return "OP_RETURN (" + string(data) + ")"
		}
		return "OP_RETURN " + hex.EncodeToString(data)
	}
	return "OP_RETURN " + hex.EncodeToString(rest)
}

func ptIsWitnessProgram(s []byte) bool {
	return len(s) >= 4 && len(s) <= 42 && (s[0] == 0 || (s[0] >= 0x51 && s[0] <= 0x60)) && int(s[1]) == len(s)-2
}

func ptRoundTrip(tb testing.TB, p *btc.Parser, addr string, desc []byte, ctx string) {
	tb.Helper()
	got, err := p.AddrDescFromAddress(addr)
	if err != nil {
		tb.Fatalf("%s: AddrDescFromAddress(%q): %v", ctx, addr, err)
	}
	if !bytes.Equal(got, desc) {
		tb.Fatalf("%s: AddrDescFromAddress(%q) = %x, want %x", ctx, addr, []byte(got), desc)
	}
}

var ptAddressKinds = map[txscript.ScriptClass]struct {
	kind   string
	prefix string
	length int // of the address, 0: any
}{
	txscript.PubKeyHashTy:          {"p2pkh", "1", 0},
	txscript.ScriptHashTy:          {"p2sh", "3", 0},
	txscript.WitnessV0PubKeyHashTy: {"p2wpkh", "bc1q", 42},
	txscript.WitnessV0ScriptHashTy: {"p2wsh", "bc1q", 62},
	txscript.WitnessV1TaprootTy:    {"p2tr", "bc1p", 62},
	txscript.PayToAnchorTy:         {"p2a", "bc1pfeessrawgf", 14},
}

// ptCheckOutput classifies an output script with btcd, checks the parser's
// descriptor and rendering rules against that classification, and returns
// the kind: p2pkh, p2sh, p2wpkh, p2wsh, p2tr, p2a, p2pk, p2pk_bad_key,
// multisig, witness_unknown, nonstandard, op_return or empty.
func ptCheckOutput(tb testing.TB, p *btc.Parser, script []byte, ctx string) string {
	tb.Helper()
	fail := func(format string, args ...any) {
		tb.Helper()
		tb.Fatalf("%s: script %x: %s", ctx, script, fmt.Sprintf(format, args...))
	}
	desc := p.OutputAddrDesc(script)
	shown, searchable := p.OutputAddresses(script)
	if len(script) == 0 {
		if desc != nil || len(shown) != 0 || searchable {
			fail("empty script: desc %x, addresses %q %v", []byte(desc), shown, searchable)
		}
		return "empty"
	}
	if script[0] == txscript.OP_RETURN {
		if desc != nil {
			fail("OP_RETURN output has descriptor %x", []byte(desc))
		}
		if len(shown) != 1 || searchable {
			fail("OP_RETURN output shown as %q searchable %v", shown, searchable)
		}
		if want := ptOPReturnText(script); shown[0] != want {
			fail("OP_RETURN output shown as %q, want %q", shown[0], want)
		}
		if len(script) > 1 && !strings.HasPrefix(shown[0], "OP_RETURN ") {
			fail("OP_RETURN output shown as %q", shown[0])
		}
		return "op_return"
	}
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(script, &chaincfg.MainNetParams)
	if err != nil {
		fail("btcd: %v", err)
	}
	fromDesc, descSearchable, err := p.AddressesFromAddrDesc(desc)
	if err != nil {
		fail("AddressesFromAddrDesc(%x): %v", []byte(desc), err)
	}
	if !reflect.DeepEqual(fromDesc, shown) || descSearchable != searchable {
		fail("OutputAddresses %q %v, AddressesFromAddrDesc(OutputAddrDesc) %q %v", shown, searchable, fromDesc, descSearchable)
	}
	if ak, ok := ptAddressKinds[class]; ok && len(addrs) == 1 {
		want := addrs[0].EncodeAddress()
		if !strings.HasPrefix(want, ak.prefix) || (ak.length != 0 && len(want) != ak.length) {
			fail("btcd renders %s as %q", ak.kind, want)
		}
		if !bytes.Equal(desc, script) {
			fail("%s descriptor %x is not the script", ak.kind, []byte(desc))
		}
		if !searchable || !reflect.DeepEqual(shown, []string{want}) {
			fail("%s shown as %q searchable %v, want [%s] true", ak.kind, shown, searchable, want)
		}
		ptRoundTrip(tb, p, want, desc, ctx)
		if class == txscript.WitnessV1TaprootTy || class == txscript.PayToAnchorTy {
			if _, _, v, err := bech32.DecodeGeneric(want); err != nil || v != bech32.VersionM {
				fail("%s address %s is not bech32m (%v)", ak.kind, want, err)
			}
		}
		if strings.HasPrefix(want, "bc1") {
			ptRoundTrip(tb, p, strings.ToUpper(want), desc, ctx)
		}
		return ak.kind
	}
	if class == txscript.PubKeyTy && len(addrs) == 1 {
		key := script[1 : len(script)-1]
		wantDesc := ptP2PKH(ptHash160(key))
		if !bytes.Equal(desc, wantDesc) {
			fail("P2PK descriptor %x, want P2PKH of HASH160(key) %x", []byte(desc), wantDesc)
		}
		if _, ok := addrs[0].(*address.AddressPubKey); !ok {
			fail("btcd gives %T for a P2PK script", addrs[0])
		}
		// The key's address is HASH160 of its bytes as they appear (for
		// hybrid keys this differs from btcd's re-serialized form).
		pkh, err := address.NewAddressPubKeyHash(ptHash160(key), p.Params())
		if err != nil {
			fail("%v", err)
		}
		want := pkh.EncodeAddress()
		if !searchable || !reflect.DeepEqual(shown, []string{want}) {
			fail("P2PK shown as %q searchable %v, want [%s] true", shown, searchable, want)
		}
		ptRoundTrip(tb, p, want, desc, ctx)
		ptRoundTrip(tb, p, hex.EncodeToString(key), desc, ctx)
		return "p2pk"
	}
	// Everything else is filed under the script and has no address.
	if !bytes.Equal(desc, script) {
		fail("%v descriptor %x is not the script", class, []byte(desc))
	}
	if len(shown) != 0 || searchable {
		fail("%v shown as %q searchable %v, want no address", class, shown, searchable)
	}
	switch {
	case class == txscript.PubKeyTy:
		return "p2pk_bad_key"
	case class == txscript.MultiSigTy:
		return "multisig"
	case class == txscript.NonStandardTy && ptIsWitnessProgram(script):
		return "witness_unknown"
	case class == txscript.NonStandardTy:
		return "nonstandard"
	}
	fail("unexpected class %v with %d addresses", class, len(addrs))
	return ""
}

func TestParseBlockOutputs(t *testing.T) {
	p := ptParser()
	for i := range ptMainnetBlocks {
		fx := &ptMainnetBlocks[i]
		t.Run(fmt.Sprint(fx.height), func(t *testing.T) {
			blk, err := p.ParseBlock(ptLoad(t, fx.file))
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			var text, hexed int
			for i, tx := range blk.Txs {
				for j, out := range tx.Vout {
					kind := ptCheckOutput(t, p, out.Script, fmt.Sprintf("block %d tx %d %s vout %d", fx.height, i, tx.Txid, j))
					kinds[kind]++
					if kind == "op_return" {
						if shown, _ := p.OutputAddresses(out.Script); strings.HasPrefix(shown[0], "OP_RETURN (") {
							text++
						} else {
							hexed++
						}
					}
				}
			}
			if !reflect.DeepEqual(kinds, fx.kinds) {
				t.Errorf("output kinds %v, want %v", kinds, fx.kinds)
			}
			if fx.height == 574200 && kinds["op_return"] != 976 {
				t.Errorf("block 574200 has %d OP_RETURN outputs, want 976", kinds["op_return"])
			}
			if text != fx.opReturnText || hexed != fx.opReturnHex {
				t.Errorf("OP_RETURN outputs: %d text, %d hex; want %d, %d", text, hexed, fx.opReturnText, fx.opReturnHex)
			}
		})
	}
}

// ptGenesis returns mainnet's genesis block, serialized.
func ptGenesis(tb testing.TB) []byte {
	var buf bytes.Buffer
	if err := chaincfg.MainNetParams.GenesisBlock.Serialize(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestParseBlockGenesis(t *testing.T) {
	p := ptParser()
	raw := ptGenesis(t)
	blk, err := p.ParseBlock(raw)
	if err != nil {
		t.Fatal(err)
	}
	const hash = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
	if blk.Hash.String() != hash || chaincfg.MainNetParams.GenesisHash.String() != hash || !blk.Prev.IsZero() {
		t.Fatalf("genesis hash %s prev %s", blk.Hash, blk.Prev)
	}
	if len(blk.Txs) != 1 || !blk.Txs[0].IsCoinbase() || blk.Txs[0].Txid.String() != "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b" {
		t.Fatalf("genesis txs: %+v", blk.Txs)
	}
	ptCheckTx(t, p, &blk.Txs[0], "genesis coinbase")
	out := blk.Txs[0].Vout[0]
	if out.Value != 50e8 {
		t.Errorf("genesis output value %d", out.Value)
	}
	// The genesis output pays to a bare key; it is filed under that key's
	// P2PKH script and shown as the key's well-known address.
	if kind := ptCheckOutput(t, p, out.Script, "genesis vout 0"); kind != "p2pk" {
		t.Fatalf("genesis output is %s", kind)
	}
	if desc := p.OutputAddrDesc(out.Script); hex.EncodeToString(desc) != "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac" {
		t.Errorf("genesis output descriptor %x", []byte(desc))
	}
	if shown, ok := p.OutputAddresses(out.Script); !ok || !reflect.DeepEqual(shown, []string{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"}) {
		t.Errorf("genesis output shown as %q %v", shown, ok)
	}
	for n := 0; n < len(raw); n++ {
		if blk, err := p.ParseBlock(raw[:n]); !errors.Is(err, bchain.ErrInvalidData) || blk != nil {
			t.Fatalf("genesis truncated to %d bytes: %v, %v", n, blk, err)
		}
	}
}

func TestParseBlockMalformed(t *testing.T) {
	p := ptParser()
	genesis := ptGenesis(t)
	header := genesis[:80]
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := map[string][]byte{
		"empty":                nil,
		"short header":         header[:79],
		"header only":          header,
		"no transactions":      cat(header, []byte{0}),
		"missing tx":           cat(header, []byte{1}),
		"count above txs":      cat(header, []byte{2}, genesis[81:]),
		"huge tx count":        cat(header, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}),
		"non-canonical count":  cat(header, []byte{0xfd, 0x01, 0x00}, genesis[81:]),
		"trailing byte":        cat(genesis, []byte{0}),
		"trailing tx":          cat(genesis, genesis[81:]),
		"trailing header":      cat(genesis, header),
		"garbage":              []byte("this is not a block, not even close to one; it is text"),
		"tx in place of block": genesis[81:],
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if blk, err := p.ParseBlock(cases[name]); !errors.Is(err, bchain.ErrInvalidData) || blk != nil {
			t.Errorf("%s: got %v, %v; want an error wrapping ErrInvalidData", name, blk, err)
		}
	}

	raw := ptLoad(t, ptMainnetBlocks[0].file)
	for _, n := range []int{1, 80, 81, 82, 83, 1000, len(raw) / 2, len(raw) - 1} {
		if _, err := p.ParseBlock(raw[:n]); !errors.Is(err, bchain.ErrInvalidData) {
			t.Errorf("block truncated to %d bytes: %v", n, err)
		}
	}
	extended := cat(raw, []byte{0})
	if _, err := p.ParseBlock(extended); !errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("block with a trailing byte: %v", err)
	}
}

func TestParseTxMegaTx(t *testing.T) {
	p := ptParser()
	raw := ptLoad(t, "mainnet/megatx.bin.bz2")
	tx, err := p.ParseTx(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Txid.String() != "bb41a757f405890fb0f5856228e23b715702d714d59bf2b1feb70d8b2b4e3e08" {
		t.Errorf("txid %s", tx.Txid)
	}
	if tx.Size != 999657 || tx.VSize != tx.Size || len(tx.Vin) != 5569 || len(tx.Vout) != 1 || tx.IsCoinbase() {
		t.Errorf("size %d vsize %d, %d inputs, %d outputs", tx.Size, tx.VSize, len(tx.Vin), len(tx.Vout))
	}
	ptCheckTx(t, p, tx, "megatx")
	ptCheckOutput(t, p, tx.Vout[0].Script, "megatx vout 0")
	if _, err := p.ParseTx(raw[:len(raw)-1]); !errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := p.ParseTx(append(raw[:len(raw):len(raw)], 0)); !errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("trailing byte: %v", err)
	}
}

// ---------------------------------------------------------------------------
// Bitcoin Core's tx vectors.

type ptCoreTx struct {
	comment string
	raw     []byte
	flags   string
}

func ptCoreTxVectors(tb testing.TB, name string) []ptCoreTx {
	tb.Helper()
	var entries [][]json.RawMessage
	if err := json.Unmarshal(ptLoad(tb, "vectors/"+name), &entries); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	var out []ptCoreTx
	var comment []string
	for _, e := range entries {
		var s string
		if len(e) == 1 && json.Unmarshal(e[0], &s) == nil {
			comment = append(comment, s)
			continue
		}
		var txHex, flags string
		if len(e) != 3 || json.Unmarshal(e[1], &txHex) != nil || json.Unmarshal(e[2], &flags) != nil {
			tb.Fatalf("%s: unexpected entry %s", name, e)
		}
		out = append(out, ptCoreTx{strings.Join(comment, " "), ptHex(tb, txHex), flags})
		comment = nil
	}
	return out
}

func ptCheckCoreVectors(t *testing.T, name string, want, wantWitness int) []ptCoreTx {
	p := ptParser()
	vectors := ptCoreTxVectors(t, name)
	if len(vectors) != want {
		t.Fatalf("%s has %d vectors, want %d", name, len(vectors), want)
	}
	witness := 0
	for i, v := range vectors {
		ctx := fmt.Sprintf("%s #%d (%s)", name, i, v.comment)
		tx, err := p.ParseTx(v.raw)
		if err != nil {
			t.Fatalf("%s: %v", ctx, err)
		}
		if !bytes.Equal(tx.Raw, v.raw) {
			t.Fatalf("%s: Raw is not the input", ctx)
		}
		if ptCheckTx(t, p, tx, ctx).HasWitness() {
			witness++
		}
		for j, out := range tx.Vout {
			ptCheckOutput(t, p, out.Script, fmt.Sprintf("%s vout %d", ctx, j))
		}
	}
	if witness != wantWitness {
		t.Errorf("%s: %d vectors with witness data, want %d", name, witness, wantWitness)
	}
	return vectors
}

// Every valid vector decodes and re-serializes byte for byte.
func TestCoreTxVectorsValid(t *testing.T) {
	ptCheckCoreVectors(t, "tx_valid.json", 121, ptCoreWitnessValid)
}

// The invalid vectors break consensus or policy rules, but all of them are
// well-formed serializations, which is all the parser checks.
func TestCoreTxVectorsInvalid(t *testing.T) {
	vectors := ptCheckCoreVectors(t, "tx_invalid.json", 93, ptCoreWitnessInvalid)
	badtx := 0
	for _, v := range vectors {
		if strings.Contains(v.flags, "BADTX") {
			badtx++
		}
	}
	if badtx != ptCoreBadTx {
		t.Errorf("%d BADTX vectors decoded, want %d", badtx, ptCoreBadTx)
	}
}

const (
	ptCoreWitnessValid   = 28
	ptCoreWitnessInvalid = 13
	ptCoreBadTx          = 9
)

// Truncated, extended and random inputs fail with ErrInvalidData; inputs
// that do decode are self-consistent.
func TestParseTxMalformed(t *testing.T) {
	p := ptParser()
	var all [][]byte
	for _, name := range []string{"tx_valid.json", "tx_invalid.json"} {
		for _, v := range ptCoreTxVectors(t, name) {
			all = append(all, v.raw)
		}
	}
	expectErr := func(ctx string, raw []byte) {
		t.Helper()
		if tx, err := p.ParseTx(raw); !errors.Is(err, bchain.ErrInvalidData) || tx != nil {
			t.Fatalf("%s (%x): got %v, %v; want an error wrapping ErrInvalidData", ctx, raw, tx, err)
		}
	}
	for i, raw := range all {
		for n := 0; n < len(raw); n++ {
			expectErr(fmt.Sprintf("vector %d truncated to %d bytes", i, n), raw[:n])
		}
		cp := raw[:len(raw):len(raw)]
		expectErr(fmt.Sprintf("vector %d with a trailing byte", i), append(cp, 0))
		expectErr(fmt.Sprintf("vector %d twice", i), append(cp, raw...))
	}

	le := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	cases := map[string][]byte{
		"version only":       le(1),
		"huge input count":   append(le(1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"huge script length": append(le(1), append(append([]byte{1}, make([]byte, 36)...), 0xfe, 0xff, 0xff, 0xff, 0x7f)...),
		"unknown flag":       append(le(2), 0x00, 0x02, 0x01),
		"text":               []byte("not a transaction"),
	}
	for name, raw := range cases {
		expectErr(name, raw)
	}

	// A witness marker with only empty witnesses is rejected, as Bitcoin Core
	// does ("Superfluous witness record").
	for i, raw := range all {
		var m wire.MsgTx
		if err := m.Deserialize(bytes.NewReader(raw)); err != nil || m.HasWitness() || len(m.TxIn) == 0 {
			continue
		}
		var w bytes.Buffer
		w.Write(raw[:4])
		w.Write([]byte{0x00, 0x01})
		w.Write(raw[4 : len(raw)-4])
		w.Write(make([]byte, len(m.TxIn)))
		w.Write(raw[len(raw)-4:])
		expectErr(fmt.Sprintf("vector %d with a superfluous witness record", i), w.Bytes())
	}

	// Random bytes and random mutations of real txs never panic; whatever
	// decodes is consistent with btcd.
	rng := rand.New(rand.NewSource(1))
	decoded := 0
	for i := 0; i < 3000; i++ {
		var raw []byte
		if i%2 == 0 {
			raw = make([]byte, rng.Intn(300))
			rng.Read(raw)
		} else {
			raw = bytes.Clone(all[rng.Intn(len(all))])
			for k := 1 + rng.Intn(3); k > 0; k-- {
				raw[rng.Intn(len(raw))] ^= byte(1 + rng.Intn(255))
			}
		}
		tx, err := p.ParseTx(raw)
		if err != nil {
			if !errors.Is(err, bchain.ErrInvalidData) {
				t.Fatalf("%x: error %v does not wrap ErrInvalidData", raw, err)
			}
			continue
		}
		decoded++
		ptCheckTx(t, p, tx, fmt.Sprintf("random input %x", raw))
	}
	t.Logf("%d of 3000 random and mutated inputs decoded", decoded)
}

// ---------------------------------------------------------------------------
// Addresses.

const (
	ptGenesisKey = "04678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5f"
	ptGx         = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	ptGy         = "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8"
)

func TestAddressParsing(t *testing.T) {
	p := ptParser()
	cases := []struct{ in, desc, shown string }{
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", ""},
		{"1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", "76a914751e76e8199196d454941c45d1b3a323f1433bd688ac", ""},
		{"3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC", "a914f815b036d9bbbce5e9f2a00abd1bf3dc91e9551087", ""},
		{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "0014751e76e8199196d454941c45d1b3a323f1433bd6", ""},
		{"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
		{"bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3", "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262", ""},
		{"BC1QRP33G0Q5C5TXSP9ARYSRX4K6ZDKFS4NCE4XJ0GDCCCEFVPYSXF3QCCFMV3", "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"},
		{"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "5120" + ptGx, ""},
		{"BC1P0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQZK5JJ0", "5120" + ptGx, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"},
		{"bc1pfeessrawgf", "51024e73", ""},
		// Hex public keys map to the key's P2PKH descriptor, like P2PK outputs.
		{ptGenesisKey, "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"},
		{strings.ToUpper(ptGenesisKey), "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"},
		{"02" + ptGx, "76a914751e76e8199196d454941c45d1b3a323f1433bd688ac", "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH"},
		{"04" + ptGx + ptGy, "76a91491b24bf9f5288532960ac687abb035127b1d28a588ac", "1EHNa6Q4Jz2uvNExL497mE43ikXhwF6kZm"},
	}
	for _, c := range cases {
		desc, err := p.AddrDescFromAddress(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if hex.EncodeToString(desc) != c.desc {
			t.Errorf("%s: descriptor %x, want %s", c.in, []byte(desc), c.desc)
			continue
		}
		want := c.shown
		if want == "" {
			want = c.in
		}
		shown, searchable, err := p.AddressesFromAddrDesc(desc)
		if err != nil || !searchable || !reflect.DeepEqual(shown, []string{want}) {
			t.Errorf("%s: rendered as %q %v %v, want [%s]", c.in, shown, searchable, err, want)
		}
		ptRoundTrip(t, p, want, desc, c.in)
		if strings.HasPrefix(c.desc, "76a914") && len(c.in) >= 66 {
			// The key's P2PK script is filed under the same descriptor.
			key := ptHex(t, c.in)
			script := append(append([]byte{byte(len(key))}, key...), txscript.OP_CHECKSIG)
			if got := p.OutputAddrDesc(script); hex.EncodeToString(got) != c.desc {
				t.Errorf("%s: P2PK script filed under %x, want %s", c.in, []byte(got), c.desc)
			}
			if got := hex.EncodeToString(ptP2PKH(ptHash160(key))); got != c.desc {
				t.Errorf("%s: HASH160 gives %s, want %s", c.in, got, c.desc)
			}
		}
	}
}

func TestAddressErrors(t *testing.T) {
	p := ptParser()
	h20 := ptHex(t, "751e76e8199196d454941c45d1b3a323f1433bd6")
	h32 := ptHex(t, ptGx)
	enc := func(a address.Address, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a.EncodeAddress()
	}
	cases := map[string]string{
		"empty":                         "",
		"space":                         " ",
		"garbage":                       "not an address",
		"base58 alphabet violation":     "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0",
		"bad checksum":                  "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb",
		"leading space":                 " 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
		"trailing newline":              "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa\n",
		"truncated":                     "1A1zP1eP5QGefi2DMPTfTL5SLmv7Divf",
		"testnet p2pkh":                 "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn",
		"testnet p2pkh (generated)":     enc(address.NewAddressPubKeyHash(h20, &chaincfg.TestNet3Params)),
		"testnet p2sh":                  enc(address.NewAddressScriptHashFromHash(h20, &chaincfg.TestNet3Params)),
		"testnet p2wpkh":                "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
		"testnet p2wsh":                 "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
		"testnet p2tr":                  enc(address.NewAddressTaproot(h32, &chaincfg.TestNet3Params)),
		"regtest p2wpkh":                enc(address.NewAddressWitnessPubKeyHash(h20, &chaincfg.RegressionNetParams)),
		"signet p2tr":                   enc(address.NewAddressTaproot(h32, &chaincfg.SigNetParams)),
		"other coin's base58 version":   base58.CheckEncode(h20, 0x30),
		"base58 payload of 21 bytes":    base58.CheckEncode(append(h20, 0), 0x00),
		"bech32 bad checksum":           "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5",
		"bech32 unknown hrp":            ptSegwitAddress(t, "xyz", 0, h20, false),
		"bech32 other chain's hrp":      ptSegwitAddress(t, "ltc", 0, h20, false),
		"bech32 testnet hrp":            ptSegwitAddress(t, "tb", 0, h20, false),
		"bech32 mixed case":             "bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		"bech32 mixed case hrp":         "Bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		"v0 with bech32m checksum":      ptSegwitAddress(t, "bc", 0, h20, true),
		"v1 with bech32 checksum":       ptSegwitAddress(t, "bc", 1, h32, false),
		"v0 with 21-byte program":       ptSegwitAddress(t, "bc", 0, append(h20, 0), false),
		"v1 with 41-byte program":       ptSegwitAddress(t, "bc", 1, append(h32, h20[:9]...), true),
		"bech32 no data":                "bc1gmk9yu",
		"hex key not on the curve":      "02" + strings.Repeat("ff", 32),
		"hex key bad prefix":            "05" + ptGx,
		"hex key wrong length":          "02" + ptGx + "00",
		"hex key of 66 non-hex chars":   strings.Repeat("zz", 33),
		"hybrid hex key, wrong parity":  "07" + ptGx + ptGy,
		"uncompressed key, wrong y":     "04" + ptGx + strings.Repeat("00", 32),
		"20 bytes of hex":               hex.EncodeToString(h20),
		"script hex instead of address": "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac",
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		desc, err := p.AddrDescFromAddress(cases[name])
		if !errors.Is(err, bchain.ErrInvalidAddress) || desc != nil {
			t.Errorf("%s %q: got %x, %v; want an error wrapping ErrInvalidAddress", name, cases[name], []byte(desc), err)
		}
	}
}

// Data-carrier outputs are never indexed and render like Blockbook does.
func TestOPReturnRendering(t *testing.T) {
	p := ptParser()
	cases := []struct{ script, want string }{
		{"6a", "OP_RETURN"},
		{"6a00", "OP_RETURN ()"},
		{"6a0b68656c6c6f20776f726c64", "OP_RETURN (hello world)"},
		{"6a04deadbeef", "OP_RETURN deadbeef"},
		{"6a4c0568656c6c6f", "OP_RETURN (hello)"},
		{"6a4d050068656c6c6f", "OP_RETURN (hello)"},
		{"6a4e0500000068656c6c6f", "OP_RETURN (hello)"},
		{"6a0dc5bd6c75c5a56f75c48d6bc3bd", "OP_RETURN (Žluťoučký)"},
		{"6a02fffe", "OP_RETURN fffe"},
		{"6a02686902686a", "OP_RETURN 02686902686a"}, // two pushes
		{"6a51", "OP_RETURN 51"},                     // OP_1 is not a data push
		{"6a0568656c", "OP_RETURN 0568656c"},         // push runs past the end
		{"6a4c", "OP_RETURN 4c"},
		{"6a6a", "OP_RETURN 6a"},
	}
	for _, c := range cases {
		script := ptHex(t, c.script)
		if got := ptOPReturnText(script); got != c.want {
			t.Fatalf("test helper renders %s as %q, want %q", c.script, got, c.want)
		}
		if kind := ptCheckOutput(t, p, script, c.script); kind != "op_return" {
			t.Errorf("%s: kind %s", c.script, kind)
		}
		if shown, _ := p.OutputAddresses(script); !reflect.DeepEqual(shown, []string{c.want}) {
			t.Errorf("%s: shown as %q, want %q", c.script, shown, c.want)
		}
		if shown, searchable, err := p.AddressesFromAddrDesc(script); err != nil || len(shown) != 0 || searchable {
			t.Errorf("%s as a descriptor: %q %v %v", c.script, shown, searchable, err)
		}
	}
}

// One script of each kind that the mainnet blocks do not contain.
func TestParserScriptKinds(t *testing.T) {
	p := ptParser()
	g := "02" + ptGx
	cases := []struct{ script, kind string }{
		{"", "empty"},
		{"51024e73", "p2a"},
		{"5120" + ptGx, "p2tr"},
		{"21" + g + "ac", "p2pk"},
		{"41" + ptGenesisKey + "ac", "p2pk"},
		{"21" + "02" + strings.Repeat("ff", 32) + "ac", "p2pk_bad_key"},
		{"5121" + g + "21" + g + "52ae", "multisig"},
		{"5221" + g + "21" + g + "21" + g + "53ae", "multisig"},
		{"5220" + ptGx, "witness_unknown"},
		{"6028" + strings.Repeat("ab", 40), "witness_unknown"},
		{"5114751e76e8199196d454941c45d1b3a323f1433bd6", "witness_unknown"},
		{"0015751e76e8199196d454941c45d1b3a323f1433bd600", "witness_unknown"},
		{"51", "nonstandard"},
		{"ac", "nonstandard"},
		{"76a914751e76e8199196d454941c45d1b3a323f1433bd688", "nonstandard"},
		{"76a914751e76e8199196d454941c45d1b3a323f1433bd688acac", "nonstandard"},
		{"4c", "nonstandard"},
	}
	for _, c := range cases {
		if kind := ptCheckOutput(t, p, ptHex(t, c.script), c.script); kind != c.kind {
			t.Errorf("%s: kind %s, want %s", c.script, kind, c.kind)
		}
	}
}

// A bech32m address of witness version 1 with a 20-byte program names the
// script OP_1 <20 bytes>, not a P2WPKH output.
func TestAddressWitnessV1NonTaproot(t *testing.T) {
	p := ptParser()
	prog := ptHex(t, "751e76e8199196d454941c45d1b3a323f1433bd6")
	addr := ptSegwitAddress(t, "bc", 1, prog, true)
	v1 := append([]byte{0x51, 0x14}, prog...)
	if kind := ptCheckOutput(t, p, v1, "v1 20-byte program"); kind != "witness_unknown" {
		t.Fatalf("OP_1 <20 bytes> is %s", kind)
	}
	desc, err := p.AddrDescFromAddress(addr)
	// Either rejecting the address or filing it under its own script is fine.
	if err == nil && !bytes.Equal(desc, v1) {
		t.Fatalf("AddrDescFromAddress(%q) = %x, want an error or %x", addr, []byte(desc), v1)
	}
	if err != nil && !errors.Is(err, bchain.ErrInvalidAddress) {
		t.Fatalf("AddrDescFromAddress(%q): %v does not wrap ErrInvalidAddress", addr, err)
	}
}

// A P2PK output with a hybrid key (0x06/0x07 prefix, valid by consensus) is
// filed under HASH160 of the key bytes as they appear in the script.
func TestParserP2PKHybridKey(t *testing.T) {
	p := ptParser()
	hybrid := ptHex(t, "06"+ptGx+ptGy) // G has an even y
	script := append(append([]byte{0x41}, hybrid...), txscript.OP_CHECKSIG)
	if class, addrs, _, err := txscript.ExtractPkScriptAddrs(script, &chaincfg.MainNetParams); err != nil || class != txscript.PubKeyTy || len(addrs) != 1 {
		t.Fatalf("btcd: %v %d %v", class, len(addrs), err)
	}
	want := ptP2PKH(ptHash160(hybrid))
	got := p.OutputAddrDesc(script)
	fromHex, err := p.AddrDescFromAddress(hex.EncodeToString(hybrid))
	if err != nil {
		t.Fatalf("hybrid hex key: %v", err)
	}
	if !bytes.Equal(got, want) || !bytes.Equal(fromHex, want) {
		t.Fatalf("descriptors %x (script) and %x (hex key), want %x", []byte(got), []byte(fromHex), want)
	}
	ptCheckOutput(t, p, script, "hybrid P2PK")
}

// ---------------------------------------------------------------------------
// Taproot reference vectors.

type ptTaprootSpend struct {
	ScriptSig string   `json:"scriptSig"`
	Witness   []string `json:"witness"`
}

type ptTaprootVector struct {
	Tx       string          `json:"tx"`
	Prevouts []string        `json:"prevouts"`
	Index    int             `json:"index"`
	Comment  string          `json:"comment"`
	Success  *ptTaprootSpend `json:"success"`
	Failure  *ptTaprootSpend `json:"failure"`
}

func TestTaprootRefVectors(t *testing.T) {
	p := ptParser()
	files, err := filepath.Glob(filepath.Join("testdata", "vectors", "taproot-ref", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 68 {
		t.Fatalf("%d taproot-ref files, want 68", len(files))
	}
	kinds := map[string]int{}
	spends := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v ptTaprootVector
		if err := json.Unmarshal(bytes.TrimSuffix(bytes.TrimSpace(data), []byte(",")), &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ctx := fmt.Sprintf("%s (%s)", filepath.Base(f), v.Comment)
		raw := ptHex(t, v.Tx)
		tx, err := p.ParseTx(raw)
		if err != nil {
			t.Fatalf("%s: %v", ctx, err)
		}
		m := ptCheckTx(t, p, tx, ctx)
		if len(tx.Vin) != len(v.Prevouts) || v.Index >= len(tx.Vin) {
			t.Fatalf("%s: %d inputs, %d prevouts, index %d", ctx, len(tx.Vin), len(v.Prevouts), v.Index)
		}
		for i, po := range v.Prevouts {
			b := ptHex(t, po)
			r := bytes.NewReader(b[8:])
			n, err := wire.ReadVarInt(r, 0)
			if err != nil || uint64(r.Len()) != n {
				t.Fatalf("%s: prevout %d: bad serialization", ctx, i)
			}
			kinds[ptCheckOutput(t, p, b[len(b)-int(n):], fmt.Sprintf("%s prevout %d", ctx, i))]++
		}
		for i, out := range tx.Vout {
			kinds[ptCheckOutput(t, p, out.Script, fmt.Sprintf("%s vout %d", ctx, i))]++
		}
		// Put the real spending data in place and parse the result.
		for _, spend := range []*ptTaprootSpend{v.Success, v.Failure} {
			if spend == nil {
				continue
			}
			spends++
			m.TxIn[v.Index].SignatureScript = ptHex(t, spend.ScriptSig)
			m.TxIn[v.Index].Witness = nil
			for _, w := range spend.Witness {
				m.TxIn[v.Index].Witness = append(m.TxIn[v.Index].Witness, ptHex(t, w))
			}
			var buf bytes.Buffer
			if err := m.Serialize(&buf); err != nil {
				t.Fatal(err)
			}
			signed, err := p.ParseTx(buf.Bytes())
			if err != nil {
				t.Fatalf("%s: signed tx: %v", ctx, err)
			}
			ptCheckTx(t, p, signed, ctx+" signed")
			if got := signed.Vin[v.Index].Witness; len(got) != len(spend.Witness) {
				t.Fatalf("%s: signed input has %d witness items, want %d", ctx, len(got), len(spend.Witness))
			}
		}
	}
	t.Logf("output kinds: %v; %d spends", kinds, spends)
	want := map[string]int{
		"p2tr": 58, "witness_unknown": 63, "p2wpkh": 64, "p2wsh": 1, "p2sh": 58,
		"p2pkh": 52, "p2pk": 2, "nonstandard": 1,
	}
	if spends != 79 {
		t.Errorf("%d spends, want 79", spends)
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("output kinds %v, want %v", kinds, want)
	}
}

// Overlong input is rejected (and should be rejected before decoding: base58
// decoding is quadratic in the length, see the report).
func TestAddressOverlong(t *testing.T) {
	p := ptParser()
	for _, in := range []string{
		strings.Repeat("z", 20000),
		"bc1" + strings.Repeat("q", 20000),
		strings.Repeat("02", 20000),
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa" + strings.Repeat("1", 1000),
	} {
		if desc, err := p.AddrDescFromAddress(in); !errors.Is(err, bchain.ErrInvalidAddress) || desc != nil {
			t.Errorf("%d-byte input %.20q...: got %x, %v", len(in), in, []byte(desc), err)
		}
	}
}
