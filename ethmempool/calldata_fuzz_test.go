package ethmempool

// A fuzz target of the calldata decoder: any calldata a pending tx carries
// yields at most the one token transfer its selector announces, taken word
// by word from the arguments, and never a panic. What it decodes,
// re-encoded as the same call, decodes to the same transfer.

import (
	"bytes"
	"math/big"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

var (
	fuzzContract = bchain.EthAddress{0xc1}
	fuzzSender   = bchain.EthAddress{0xa1}
)

func word(b []byte) []byte {
	return append(make([]byte, 32-len(b)), b...)
}

// encodeCall writes transfer t back as calldata of the token call whose
// selector is sel (argument words it does not use left zero).
func encodeCall(sel []byte, t bchain.TokenTransfer) []byte {
	for _, c := range tokenCalls {
		if !bytes.Equal(sel, c.selector[:]) {
			continue
		}
		args := make([][]byte, c.words)
		for i := range args {
			args[i] = word(nil)
		}
		if c.from >= 0 {
			args[c.from] = word(t.From[:])
		}
		args[c.to] = word(t.To[:])
		if c.id >= 0 {
			args[c.id] = word(t.TokenID.Bytes())
		}
		if c.value >= 0 {
			args[c.value] = word(t.Value.Bytes())
		}
		return slices.Concat(append([][]byte{sel}, args...)...)
	}
	return nil
}

func FuzzPendingTransfers(f *testing.F) {
	to, from := bchain.EthAddress{0xb2}, bchain.EthAddress{0xd4}
	sel := func(b ...byte) []byte { return b }
	f.Add(slices.Concat(sel(0xa9, 0x05, 0x9c, 0xbb), word(to[:]), word([]byte{0x03, 0xe8})), true)                                       // transfer
	f.Add(slices.Concat(sel(0x23, 0xb8, 0x72, 0xdd), word(from[:]), word(to[:]), word([]byte{7})), true)                                 // transferFrom
	f.Add(slices.Concat(sel(0x42, 0x84, 0x2e, 0x0e), word(from[:]), word(to[:]), word([]byte{42})), true)                                // ERC721 safeTransferFrom
	f.Add(slices.Concat(sel(0xb8, 0x8d, 0x4f, 0xde), word(from[:]), word(to[:]), word([]byte{42}), word([]byte{0x80}), word(nil)), true) // with data
	f.Add(slices.Concat(sel(0xf2, 0x42, 0x43, 0x2a), word(from[:]), word(to[:]), word([]byte{5}), word([]byte{9}), word([]byte{0xa0}), word(nil)), true)
	f.Add(slices.Concat(sel(0xa9, 0x05, 0x9c, 0xbb), bytes.Repeat([]byte{0xff}, 32), word([]byte{1})), true) // not an address
	f.Add(sel(0xa9, 0x05, 0x9c), false)
	f.Fuzz(func(t *testing.T, data []byte, hasTo bool) {
		tx := &bchain.EthTx{From: fuzzSender, Data: data}
		if hasTo {
			tx.To = &fuzzContract
		}
		got := PendingTransfers(tx)
		if len(got) == 0 {
			return
		}
		if len(got) > 1 || !hasTo || len(data) < 4 {
			t.Fatalf("%x: %d transfers", data, len(got))
		}
		tt := got[0]
		if tt.Contract != fuzzContract || tt.Value == nil || tt.Value.Sign() < 0 || tt.Value.BitLen() > 256 ||
			(tt.TokenID != nil && (tt.TokenID.Sign() < 0 || tt.TokenID.BitLen() > 256)) {
			t.Fatalf("%x: transfer %+v", data, tt)
		}
		switch tt.Standard {
		case bchain.TokenERC20:
			if tt.TokenID != nil {
				t.Fatalf("%x: ERC20 with a token id: %+v", data, tt)
			}
		case bchain.TokenERC721:
			if tt.TokenID == nil || tt.Value.Cmp(big.NewInt(1)) != 0 {
				t.Fatalf("%x: ERC721 %+v", data, tt)
			}
		case bchain.TokenERC1155:
			if tt.TokenID == nil {
				t.Fatalf("%x: ERC1155 without a token id: %+v", data, tt)
			}
		default:
			t.Fatalf("%x: standard %v", data, tt.Standard)
		}
		call := encodeCall(data[:4], tt)
		if call == nil {
			t.Fatalf("%x: decoded a call of unknown selector", data)
		}
		again := PendingTransfers(&bchain.EthTx{From: fuzzSender, To: &fuzzContract, Data: call})
		if len(again) != 1 || !sameTransfer(again[0], tt) {
			t.Fatalf("%+v re-encoded as %x decodes to %+v", tt, call, again)
		}
	})
}

func sameTransfer(a, b bchain.TokenTransfer) bool {
	eq := func(x, y *big.Int) bool { return (x == nil && y == nil) || (x != nil && y != nil && x.Cmp(y) == 0) }
	return a.Standard == b.Standard && a.Contract == b.Contract && a.From == b.From && a.To == b.To && eq(a.Value, b.Value) && eq(a.TokenID, b.TokenID)
}
