package eth

// Fuzz targets of the decoders of what contracts emit and answer: token
// transfer logs (ERC20, ERC721, ERC1155 single and batch) and name() or
// symbol() answers. Any contract can emit any bytes, so the decoders must
// never panic and must keep only what follows the standard's layout; what
// they accept, re-encoded in that layout, decodes to the same.

import (
	"bytes"
	"math/big"
	"testing"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
)

// fuzzLog builds a log from fuzz input: kind picks topic 0 (the three
// transfer events, or the first 32 bytes of topics for any other), the
// rest of topics are the further topics, 32 bytes each.
func fuzzLog(kind byte, topics, data []byte) bchain.EthLog {
	l := bchain.EthLog{Address: addr(tok), Index: uint(kind), Data: data}
	switch kind % 4 {
	case 0:
		l.Topics = []bchain.Hash{topicTransfer}
	case 1:
		l.Topics = []bchain.Hash{topicTransferSingle}
	case 2:
		l.Topics = []bchain.Hash{topicTransferBatch}
	}
	for len(topics) >= 32 && len(l.Topics) < 5 {
		l.Topics = append(l.Topics, bchain.Hash(topics[:32]))
		topics = topics[32:]
	}
	return l
}

// encodeTransfers writes transfers, all from one log, back as the log the
// standard prescribes.
func encodeTransfers(tts []bchain.TokenTransfer) bchain.EthLog {
	t0 := tts[0]
	l := bchain.EthLog{Address: t0.Contract, Index: t0.LogIndex}
	from, to := bchain.Hash(common.BytesToHash(t0.From[:])), bchain.Hash(common.BytesToHash(t0.To[:]))
	operator := addrTopic(op)
	u256 := func(x *big.Int) []byte { return common.LeftPadBytes(x.Bytes(), 32) }
	switch {
	case t0.Standard == bchain.TokenERC20:
		l.Topics, l.Data = []bchain.Hash{topicTransfer, from, to}, u256(t0.Value)
	case t0.Standard == bchain.TokenERC721:
		l.Topics = []bchain.Hash{topicTransfer, from, to, bchain.Hash(u256(t0.TokenID))}
	case len(tts) == 1:
		l.Topics, l.Data = []bchain.Hash{topicTransferSingle, operator, from, to}, cat(u256(t0.TokenID), u256(t0.Value))
	default:
		n := int64(len(tts))
		ids, values := word(n), word(n)
		for _, t := range tts {
			ids, values = append(ids, u256(t.TokenID)...), append(values, u256(t.Value)...)
		}
		l.Topics = []bchain.Hash{topicTransferBatch, operator, from, to}
		l.Data = cat(word(64), word(64+int64(len(ids))), ids, values)
	}
	return l
}

func addTransferSeeds(f *testing.F) {
	topics := func(hs ...bchain.Hash) []byte {
		var b []byte
		for _, h := range hs {
			b = append(b, h[:]...)
		}
		return b
	}
	f.Add(byte(0), topics(addrTopic(from), addrTopic(to)), word(1000))                                                                                      // ERC20
	f.Add(byte(4), topics(addrTopic(from), addrTopic(to), bchain.Hash(common.BigToHash(big.NewInt(42)))), []byte(nil))                                      // ERC721
	f.Add(byte(1), topics(addrTopic(op), addrTopic(from), addrTopic(to)), cat(word(5), word(9)))                                                            // ERC1155 single
	f.Add(byte(2), topics(addrTopic(op), addrTopic(from), addrTopic(to)), cat(word(64), word(160), word(2), word(7), word(8), word(2), word(70), word(80))) // ERC1155 batch
	f.Add(byte(2), topics(addrTopic(op), addrTopic(from), addrTopic(to)), cat(word(64), word(96), word(1<<40), word(0)))                                    // huge length
	f.Add(byte(3), topics(bchain.Hash{1, 2, 3}), word(1))                                                                                                   // another event
}

func FuzzTokenTransfers(f *testing.F) {
	addTransferSeeds(f)
	f.Fuzz(func(t *testing.T, kind byte, topics, data []byte) {
		l := fuzzLog(kind, topics, data)
		got := TokenTransfers([]bchain.EthLog{l})
		if len(got) == 0 {
			return
		}
		checkTransfers(t, &l, got)
		again := TokenTransfers([]bchain.EthLog{encodeTransfers(got)})
		if len(again) != len(got) {
			t.Fatalf("re-encoded %d transfers decode to %d", len(got), len(again))
		}
		for i := range got {
			if !sameTransfer(again[i], got[i]) {
				t.Fatalf("transfer %d: %+v re-encoded decodes to %+v", i, got[i], again[i])
			}
		}
	})
}

// checkTransfers checks what was decoded from l against the standard's
// layout of l.
func checkTransfers(t *testing.T, l *bchain.EthLog, got []bchain.TokenTransfer) {
	t.Helper()
	isAddr := func(h bchain.Hash, a bchain.EthAddress) bool {
		return bytes.Equal(h[:12], make([]byte, 12)) && bytes.Equal(h[12:], a[:])
	}
	for _, tt := range got {
		if tt.Contract != l.Address || tt.LogIndex != l.Index || tt.Value == nil || tt.Value.Sign() < 0 || tt.Value.BitLen() > 256 {
			t.Fatalf("transfer %+v from log %+v", tt, l)
		}
		switch tt.Standard {
		case bchain.TokenERC20:
			if len(got) != 1 || len(l.Topics) != 3 || len(l.Data) != 32 || tt.TokenID != nil ||
				!isAddr(l.Topics[1], tt.From) || !isAddr(l.Topics[2], tt.To) || tt.Value.Cmp(new(big.Int).SetBytes(l.Data)) != 0 {
				t.Fatalf("ERC20 %+v from log %+v", tt, l)
			}
		case bchain.TokenERC721:
			if len(got) != 1 || len(l.Topics) != 4 || len(l.Data) != 0 || tt.Value.Cmp(big.NewInt(1)) != 0 ||
				!isAddr(l.Topics[1], tt.From) || !isAddr(l.Topics[2], tt.To) || tt.TokenID.Cmp(new(big.Int).SetBytes(l.Topics[3][:])) != 0 {
				t.Fatalf("ERC721 %+v from log %+v", tt, l)
			}
		case bchain.TokenERC1155:
			// Each entry takes an id and an amount word of the data.
			if len(l.Topics) != 4 || tt.TokenID == nil || tt.TokenID.Sign() < 0 || len(got) > maxBatchEntries || 64*len(got) > len(l.Data) ||
				!isAddr(l.Topics[2], tt.From) || !isAddr(l.Topics[3], tt.To) {
				t.Fatalf("ERC1155 %+v (of %d) from log %+v", tt, len(got), l)
			}
		default:
			t.Fatalf("standard %v from log %+v", tt.Standard, l)
		}
	}
}

func encodeABIString(s string) []byte {
	n := (len(s) + 31) / 32 * 32
	return cat(word(32), word(int64(len(s))), common.RightPadBytes([]byte(s), n))
}

// name() and symbol() answers: an ABI string or a zero-padded bytes32.
func FuzzABIString(f *testing.F) {
	f.Add(encodeABIString("Wrapped Ether"))
	f.Add(encodeABIString(""))
	f.Add(common.RightPadBytes([]byte("MKR"), 32))
	f.Add(cat(word(32), word(100), common.RightPadBytes([]byte("abc"), 32)))
	f.Add(cat(word(1<<40), word(3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := abiString(data)
		if !ok {
			if s != "" {
				t.Fatalf("refused %x but returned %q", data, s)
			}
			return
		}
		if !utf8.ValidString(s) || len(s) > len(data) {
			t.Fatalf("%x decoded to %q", data, s)
		}
		for _, r := range s {
			if r < 0x20 && r != '\t' {
				t.Fatalf("%x decoded to %q, with control characters", data, s)
			}
		}
		if again, ok := abiString(encodeABIString(s)); !ok || again != s {
			t.Fatalf("%q re-encoded decodes to %q, %v", s, again, ok)
		}
	})
}
