package btc_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/address/v2/bech32"
	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// The fuzz targets reuse the checks of parser_test.go (ptCheckTx,
// ptCheckOutput): a property failure is a t.Fatal that prints the input.

// ptSeedTxs returns a few small real transactions of different shapes.
func ptSeedTxs(tb testing.TB) [][]byte {
	tb.Helper()
	p := ptParser()
	genesis := ptGenesis(tb)
	seeds := [][]byte{genesis[81:]}
	smallest := func(blk *bchain.Block, pick func(tx *bchain.Tx) bool) {
		var best []byte
		for i := range blk.Txs {
			tx := &blk.Txs[i]
			if pick(tx) && (best == nil || len(tx.Raw) < len(best)) {
				best = tx.Raw
			}
		}
		if best == nil {
			tb.Fatal("no seed tx matches")
		}
		seeds = append(seeds, best)
	}
	hasWitness := func(tx *bchain.Tx) bool {
		for _, in := range tx.Vin {
			if len(in.Witness) > 0 {
				return true
			}
		}
		return false
	}
	hasOutput := func(prefix string, size int) func(tx *bchain.Tx) bool {
		want, _ := hex.DecodeString(prefix)
		return func(tx *bchain.Tx) bool {
			for _, out := range tx.Vout {
				if bytes.HasPrefix(out.Script, want) && (size == 0 || len(out.Script) == size) {
					return true
				}
			}
			return false
		}
	}
	for _, fx := range ptMainnetBlocks {
		blk, err := p.ParseBlock(ptLoad(tb, fx.file))
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, blk.Txs[0].Raw)
		smallest(blk, func(tx *bchain.Tx) bool { return !tx.IsCoinbase() && hasWitness(tx) })
		smallest(blk, func(tx *bchain.Tx) bool { return !tx.IsCoinbase() && !hasWitness(tx) })
		smallest(blk, hasOutput("6a", 0))
		if fx.height == 574200 {
			smallest(blk, hasOutput("21", 35))
			smallest(blk, hasOutput("0020", 34))
		}
	}
	valid := ptCoreTxVectors(tb, "tx_valid.json")
	seeds = append(seeds, valid[0].raw, valid[len(valid)-1].raw)
	return seeds
}

// ptTruncations returns b, b cut in half, b without its last byte, and b with
// a trailing byte.
func ptTruncations(b []byte) [][]byte {
	return [][]byte{b, b[:len(b)/2], b[:len(b)-1], append(bytes.Clone(b), 0)}
}

func FuzzParseTx(f *testing.F) {
	for _, tx := range ptSeedTxs(f) {
		for _, v := range ptTruncations(tx) {
			f.Add(v)
		}
	}
	f.Add([]byte{})
	p := ptParser()
	f.Fuzz(func(t *testing.T, data []byte) {
		tx, err := p.ParseTx(data)
		if err != nil {
			if !errors.Is(err, bchain.ErrInvalidData) || tx != nil {
				t.Fatalf("input %x: got %v, %v; want nil and an error wrapping ErrInvalidData", data, tx, err)
			}
			return
		}
		ctx := fmt.Sprintf("input %x", data)
		if !bytes.Equal(tx.Raw, data) {
			t.Fatalf("%s: Raw is not the input", ctx)
		}
		ptCheckTx(t, p, tx, ctx)
		for i, out := range tx.Vout {
			ptCheckOutput(t, p, out.Script, fmt.Sprintf("%s vout %d", ctx, i))
		}
	})
}

func FuzzParseBlock(f *testing.F) {
	genesis := ptGenesis(f)
	// A small block made of real parts: the header of block 540107 with its
	// coinbase and two of its smallest txs (one of them segwit). Its merkle
	// root does not match, which the parser does not check.
	p := ptParser()
	blk, err := p.ParseBlock(ptLoad(f, ptMainnetBlocks[1].file))
	if err != nil {
		f.Fatal(err)
	}
	parts := [][]byte{ptLoad(f, ptMainnetBlocks[1].file)[:80], {3}, blk.Txs[0].Raw}
	for _, witness := range []bool{false, true} {
		var best []byte
		for _, tx := range blk.Txs[1:] {
			if (len(tx.Vin[0].Witness) > 0) == witness && (best == nil || len(tx.Raw) < len(best)) {
				best = tx.Raw
			}
		}
		parts = append(parts, best)
	}
	small := bytes.Join(parts, nil)
	if b, err := p.ParseBlock(small); err != nil || len(b.Txs) != 3 {
		f.Fatalf("small seed block: %v", err)
	}
	for _, b := range [][]byte{genesis, small} {
		for _, v := range ptTruncations(b) {
			f.Add(v)
		}
	}
	f.Add(genesis[:81])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		blk, err := p.ParseBlock(data)
		if err != nil {
			if !errors.Is(err, bchain.ErrInvalidData) || blk != nil {
				t.Fatalf("input %x: got %v, %v; want nil and an error wrapping ErrInvalidData", data, blk, err)
			}
			return
		}
		ctx := fmt.Sprintf("input %x", data)
		if len(data) < 81 || len(blk.Txs) == 0 || blk.Size != len(data) {
			t.Fatalf("%s: %d txs, Size %d", ctx, len(blk.Txs), blk.Size)
		}
		var prev [32]byte
		copy(prev[:], data[4:36])
		if blk.Hash.String() != ptDisplay(ptDoubleSHA256(data[:80])) || blk.Prev.String() != ptDisplay(prev) {
			t.Fatalf("%s: hash %s prev %s do not match the header", ctx, blk.Hash, blk.Prev)
		}
		off := 80 + ptVarIntLen(uint64(len(blk.Txs)))
		for i := range blk.Txs {
			tx := &blk.Txs[i]
			if off+len(tx.Raw) > len(data) || !bytes.Equal(tx.Raw, data[off:off+len(tx.Raw)]) {
				t.Fatalf("%s: tx %d: Raw is not the block's bytes at offset %d", ctx, i, off)
			}
			off += len(tx.Raw)
			ptCheckTx(t, p, tx, fmt.Sprintf("%s tx %d", ctx, i))
			for j, out := range tx.Vout {
				ptCheckOutput(t, p, out.Script, fmt.Sprintf("%s tx %d vout %d", ctx, i, j))
			}
		}
		if off != len(data) {
			t.Fatalf("%s: txs end at %d of %d bytes", ctx, off, len(data))
		}
	})
}

func FuzzOutputScript(f *testing.F) {
	p := ptParser()
	seen := map[string]bool{}
	for _, fx := range ptMainnetBlocks {
		blk, err := p.ParseBlock(ptLoad(f, fx.file))
		if err != nil {
			f.Fatal(err)
		}
		// One script of each kind and length from the mainnet blocks.
		for _, tx := range blk.Txs {
			for _, out := range tx.Vout {
				key := fmt.Sprintf("%s/%d", ptCheckOutput(f, p, out.Script, "seed"), len(out.Script))
				if !seen[key] {
					seen[key] = true
					f.Add(out.Script)
				}
			}
		}
	}
	g := "02" + ptGx
	for _, s := range []string{
		"", "6a", "6a00", "6a4c", "6a4d0500", "6a0568656c", "6a02fffe",
		"51024e73", "5120" + ptGx, "5220" + ptGx, "5114751e76e8199196d454941c45d1b3a323f1433bd6",
		"21" + g + "ac", "41" + ptGenesisKey + "ac", "41" + "06" + ptGx + ptGy + "ac",
		"5121" + g + "21" + g + "52ae", "76a914751e76e8199196d454941c45d1b3a323f1433bd688",
	} {
		f.Add(ptHex(f, s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		ctx := fmt.Sprintf("script %x", script)
		desc := p.OutputAddrDesc(script)
		shown, searchable := p.OutputAddresses(script)
		if desc != nil {
			addrs, descSearchable, err := p.AddressesFromAddrDesc(desc)
			if err != nil {
				t.Fatalf("%s: AddressesFromAddrDesc(%x): %v", ctx, []byte(desc), err)
			}
			if descSearchable {
				if len(addrs) != 1 {
					t.Fatalf("%s: searchable descriptor %x renders as %q", ctx, []byte(desc), addrs)
				}
				ptRoundTrip(t, p, addrs[0], desc, ctx)
			}
		} else if len(script) > 0 && script[0] != 0x6a {
			t.Fatalf("%s: nil descriptor for a script that is neither empty nor OP_RETURN", ctx)
		}
		if searchable && len(shown) != 1 {
			t.Fatalf("%s: searchable output shown as %q", ctx, shown)
		}
		// The script itself used as a descriptor must not break rendering.
		if _, _, err := p.AddressesFromAddrDesc(script); err != nil && !errors.Is(err, bchain.ErrInvalidData) {
			t.Fatalf("%s: AddressesFromAddrDesc(script): %v", ctx, err)
		}
		ptCheckOutput(t, p, script, ctx)
	})
}

func FuzzAddress(f *testing.F) {
	h20 := ptHex(f, "751e76e8199196d454941c45d1b3a323f1433bd6")
	for _, s := range []string{
		"", "1", "bc1", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb",
		"3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn",
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4",
		"bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
		"bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "bc1pfeessrawgf",
		ptSegwitAddress(f, "bc", 2, h20, true), ptSegwitAddress(f, "bc", 0, h20, true),
		ptGenesisKey, "02" + ptGx, "03" + ptGx, "06" + ptGx + ptGy, "07" + ptGx + ptGy,
		"02" + strings.Repeat("ff", 32),
	} {
		f.Add(s)
	}
	p := ptParser()
	f.Fuzz(func(t *testing.T, in string) {
		desc, err := p.AddrDescFromAddress(in)
		if err != nil {
			if !errors.Is(err, bchain.ErrInvalidAddress) || desc != nil {
				t.Fatalf("input %q: got %x, %v; want nil and an error wrapping ErrInvalidAddress", in, []byte(desc), err)
			}
			return
		}
		addrs, searchable, err := p.AddressesFromAddrDesc(desc)
		if err != nil || !searchable || len(addrs) != 1 {
			t.Fatalf("input %q: descriptor %x renders as %q %v %v", in, []byte(desc), addrs, searchable, err)
		}
		ptRoundTrip(t, p, addrs[0], desc, fmt.Sprintf("input %q", in))

		// The rendering is the canonical form of the input: bech32 in lower
		// case, base58 as is, a hex key as its P2PKH address.
		want := in
		if _, _, _, err := bech32.DecodeGeneric(in); err == nil {
			want = strings.ToLower(in)
		} else if key, err := hex.DecodeString(in); err == nil && (len(key) == 33 || len(key) == 65) {
			a, err := address.NewAddressPubKeyHash(ptHash160(key), &chaincfg.MainNetParams)
			if err != nil {
				t.Fatal(err)
			}
			want = a.EncodeAddress()
		}
		if addrs[0] != want {
			t.Fatalf("input %q renders as %q, want %q", in, addrs[0], want)
		}
	})
}
