package eth

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
)

func addr(s string) bchain.EthAddress { return bchain.EthAddress(common.HexToAddress(s)) }

func addrTopic(s string) bchain.Hash {
	return bchain.Hash(common.BytesToHash(common.HexToAddress(s).Bytes()))
}

func word(v int64) []byte { return common.LeftPadBytes(big.NewInt(v).Bytes(), 32) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

const (
	tok  = "0x1000000000000000000000000000000000000001"
	from = "0x2000000000000000000000000000000000000002"
	to   = "0x3000000000000000000000000000000000000003"
	op   = "0x4000000000000000000000000000000000000004"
)

func TestTokenTransfers(t *testing.T) {
	batchData := cat(word(64), word(160), word(2), word(7), word(8), word(2), word(70), word(80))
	logs := []bchain.EthLog{
		// ERC20: 3 topics, amount in data.
		{Address: addr(tok), Index: 0, Topics: []bchain.Hash{topicTransfer, addrTopic(from), addrTopic(to)}, Data: word(1000)},
		// ERC721: 4 topics, token id indexed.
		{Address: addr(tok), Index: 1, Topics: []bchain.Hash{topicTransfer, addrTopic(from), addrTopic(to), bchain.Hash(common.BigToHash(big.NewInt(42)))}},
		// ERC1155 single.
		{Address: addr(tok), Index: 2, Topics: []bchain.Hash{topicTransferSingle, addrTopic(op), addrTopic(from), addrTopic(to)}, Data: cat(word(5), word(9))},
		// ERC1155 batch of two.
		{Address: addr(tok), Index: 3, Topics: []bchain.Hash{topicTransferBatch, addrTopic(op), addrTopic(from), addrTopic(to)}, Data: batchData},
		// Malformed ones, all ignored:
		{Address: addr(tok), Index: 4, Topics: []bchain.Hash{topicTransfer, addrTopic(from)}, Data: word(1)},                                                                                                     // too few topics
		{Address: addr(tok), Index: 5, Topics: []bchain.Hash{topicTransfer, addrTopic(from), addrTopic(to)}, Data: word(1)[:31]},                                                                                 // short data
		{Address: addr(tok), Index: 6, Topics: []bchain.Hash{topicTransfer, {0xff}, addrTopic(to)}, Data: word(1)},                                                                                               // not an address
		{Address: addr(tok), Index: 7, Topics: []bchain.Hash{topicTransfer, addrTopic(from), addrTopic(to), {1}}, Data: word(1)},                                                                                 // 721 with data
		{Address: addr(tok), Index: 8, Topics: []bchain.Hash{topicTransferSingle, addrTopic(op), addrTopic(from), addrTopic(to)}},                                                                                // no data
		{Address: addr(tok), Index: 9, Topics: []bchain.Hash{topicTransferBatch, addrTopic(op), addrTopic(from), addrTopic(to)}, Data: batchData[:len(batchData)-32]},                                            // truncated
		{Address: addr(tok), Index: 10, Topics: []bchain.Hash{topicTransferBatch, addrTopic(op), addrTopic(from), addrTopic(to)}, Data: cat(word(64), word(128), word(1), word(7), word(2), word(70), word(80))}, // length mismatch
		{Address: addr(tok), Index: 11, Topics: []bchain.Hash{topicTransferBatch, addrTopic(op), addrTopic(from), addrTopic(to)}, Data: cat(word(1<<40), word(0))},                                               // offset out of range
		{Address: addr(tok), Index: 12, Topics: []bchain.Hash{topicTransferBatch, addrTopic(op), addrTopic(from), addrTopic(to)}, Data: cat(word(64), word(96), word(1<<40), word(0))},                           // huge length
		{Address: addr(tok), Index: 13}, // no topics
		{Address: addr(tok), Index: 14, Topics: []bchain.Hash{{1, 2, 3}}, Data: word(1)}, // other event
	}
	got := TokenTransfers(logs)
	want := []bchain.TokenTransfer{
		{Standard: bchain.TokenERC20, Contract: addr(tok), From: addr(from), To: addr(to), Value: big.NewInt(1000), LogIndex: 0},
		{Standard: bchain.TokenERC721, Contract: addr(tok), From: addr(from), To: addr(to), Value: big.NewInt(1), TokenID: big.NewInt(42), LogIndex: 1},
		{Standard: bchain.TokenERC1155, Contract: addr(tok), From: addr(from), To: addr(to), Value: big.NewInt(9), TokenID: big.NewInt(5), LogIndex: 2},
		{Standard: bchain.TokenERC1155, Contract: addr(tok), From: addr(from), To: addr(to), Value: big.NewInt(70), TokenID: big.NewInt(7), LogIndex: 3},
		{Standard: bchain.TokenERC1155, Contract: addr(tok), From: addr(from), To: addr(to), Value: big.NewInt(80), TokenID: big.NewInt(8), LogIndex: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d transfers, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !sameTransfer(got[i], want[i]) {
			t.Errorf("transfer %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func sameTransfer(a, b bchain.TokenTransfer) bool {
	eq := func(x, y *big.Int) bool { return (x == nil && y == nil) || (x != nil && y != nil && x.Cmp(y) == 0) }
	return a.Standard == b.Standard && a.Contract == b.Contract && a.From == b.From && a.To == b.To &&
		a.LogIndex == b.LogIndex && eq(a.Value, b.Value) && eq(a.TokenID, b.TokenID)
}

func TestABIString(t *testing.T) {
	str := func(s string) []byte {
		n := (len(s) + 31) / 32 * 32
		return cat(word(32), word(int64(len(s))), common.RightPadBytes([]byte(s), n))
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
		ok   bool
	}{
		{"string", str("Wrapped Ether"), "Wrapped Ether", true},
		{"empty string", str(""), "", true},
		{"long string", str(strings.Repeat("x", 70)), strings.Repeat("x", 70), true},
		{"bytes32", common.RightPadBytes([]byte("MKR"), 32), "MKR", true},
		{"bytes32 full", []byte(strings.Repeat("A", 32)), strings.Repeat("A", 32), true},
		{"bytes32 garbage after zero", append(common.RightPadBytes([]byte("AB"), 31), 'C'), "", false},
		{"bytes32 control chars", common.RightPadBytes([]byte{1, 2}, 32), "", false},
		{"empty", nil, "", false},
		{"short", []byte{1, 2, 3}, "", false},
		{"bad offset", cat(word(1<<40), word(3)), "", false},
		{"length beyond data", cat(word(32), word(100), common.RightPadBytes([]byte("abc"), 32)), "", false},
		{"invalid utf8", cat(word(32), word(2), common.RightPadBytes([]byte{0xff, 0xfe}, 32)), "", false},
	} {
		got, ok := abiString(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %q,%v want %q,%v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestAddressParsing(t *testing.T) {
	p := AddressParser{}
	const checksummed = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	for _, s := range []string{checksummed, strings.ToLower(checksummed), "0x" + strings.ToUpper(checksummed[2:]), "0X" + strings.ToLower(checksummed[2:]), strings.ToLower(checksummed[2:])} {
		d, err := p.AddrDescFromAddress(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if hex.EncodeToString(d) != strings.ToLower(checksummed[2:]) {
			t.Fatalf("%s: desc %x", s, d)
		}
		addrs, searchable, err := p.AddressesFromAddrDesc(d)
		if err != nil || !searchable || len(addrs) != 1 || addrs[0] != checksummed {
			t.Fatalf("%s: rendered %v %v %v", s, addrs, searchable, err)
		}
	}
	for _, s := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", // wrong checksum
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae",  // 39 digits
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed00",
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaeg", // not hex
		"", "0x", "hello", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	} {
		if _, err := p.AddrDescFromAddress(s); !errors.Is(err, bchain.ErrInvalidAddress) {
			t.Errorf("%q: err %v, want ErrInvalidAddress", s, err)
		}
	}
	if _, _, err := p.AddressesFromAddrDesc(bchain.AddrDesc{1, 2, 3}); !errors.Is(err, bchain.ErrInvalidAddress) {
		t.Errorf("short descriptor: %v", err)
	}
}

func loadTraces(t *testing.T, name string) []traceResult {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var res []traceResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCallTracer(t *testing.T) {
	res := loadTraces(t, "trace_nested.json")
	hashes := []bchain.Hash{{0x11}, {0x22}, {0x33}}
	for i := range hashes {
		hashes[i] = bchain.Hash(*res[i].TxHash)
	}
	data, err := internalFromTraces(res, hashes)
	if err != nil {
		t.Fatal(err)
	}
	tr := func(typ bchain.EthInternalType, f, to string, v int64) bchain.EthInternalTransfer {
		return bchain.EthInternalTransfer{Type: typ, From: addr(f), To: addr(to), Value: big.NewInt(v)}
	}
	// Tx 1: the top-level value is not internal; the reverted frame's own
	// value and its child's are dropped; DELEGATECALL/STATICCALL move
	// nothing; CREATE2 is recorded with its contract; a zero-value
	// selfdestruct is not a transfer.
	checkInternal(t, "nested", data[0], bchain.EthInternalCall, "", []bchain.EthAddress{addr("0xc000000000000000000000000000000000000001")},
		[]bchain.EthInternalTransfer{
			tr(bchain.EthInternalCall, "0x5555555555555555555555555555555555555555", "0xb000000000000000000000000000000000000001", 500000000000000000),
			tr(bchain.EthInternalCall, "0x6666666666666666666666666666666666666666", "0xb000000000000000000000000000000000000002", 1000),
			tr(bchain.EthInternalCreate, "0x5555555555555555555555555555555555555555", "0xc000000000000000000000000000000000000001", 0),
			tr(bchain.EthInternalSelfDestruct, "0x8888888888888888888888888888888888888888", "0xb000000000000000000000000000000000000007", 7),
		})
	// Tx 2: a creation that creates another contract.
	checkInternal(t, "create", data[1], bchain.EthInternalCreate, "",
		[]bchain.EthAddress{addr("0xc000000000000000000000000000000000000002"), addr("0xc000000000000000000000000000000000000003")},
		[]bchain.EthInternalTransfer{tr(bchain.EthInternalCreate, "0xc000000000000000000000000000000000000002", "0xc000000000000000000000000000000000000003", 2)})
	// Tx 3: the whole tx reverted, so nothing moved.
	checkInternal(t, "reverted", data[2], bchain.EthInternalCall, "execution reverted", nil, nil)

	// A trace for other txs is refused.
	if _, err := internalFromTraces(res, []bchain.Hash{{1}, {2}, {3}}); !errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("mismatched hashes: %v", err)
	}
	if _, err := internalFromTraces(res, hashes[:2]); !errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("mismatched count: %v", err)
	}
}

func TestCallTracerPartialFailure(t *testing.T) {
	res := loadTraces(t, "trace_partial.json")
	hashes := []bchain.Hash{{0x11}, bchain.Hash(*res[1].TxHash)}
	data, err := internalFromTraces(res, hashes)
	if err == nil || !strings.Contains(err.Error(), "execution timeout") {
		t.Fatalf("err = %v, want the failed tx's error", err)
	}
	if data[0] == nil || data[1] != nil {
		t.Fatalf("data = %+v, want the first tx decoded and the second missing", data)
	}
}

func checkInternal(t *testing.T, name string, d *bchain.EthInternalData, typ bchain.EthInternalType, errMsg string, contracts []bchain.EthAddress, transfers []bchain.EthInternalTransfer) {
	t.Helper()
	if d == nil {
		t.Fatalf("%s: no data", name)
	}
	if d.Type != typ || d.Error != errMsg {
		t.Errorf("%s: type %v error %q, want %v %q", name, d.Type, d.Error, typ, errMsg)
	}
	if len(d.Contracts) != len(contracts) {
		t.Errorf("%s: contracts %v, want %v", name, d.Contracts, contracts)
	} else {
		for i := range contracts {
			if d.Contracts[i] != contracts[i] {
				t.Errorf("%s: contract %d = %v, want %v", name, i, d.Contracts[i], contracts[i])
			}
		}
	}
	if len(d.Transfers) != len(transfers) {
		t.Fatalf("%s: transfers %+v, want %+v", name, d.Transfers, transfers)
	}
	for i, w := range transfers {
		g := d.Transfers[i]
		if g.Type != w.Type || g.From != w.From || g.To != w.To || g.Value.Cmp(w.Value) != 0 {
			t.Errorf("%s: transfer %d = %+v, want %+v", name, i, g, w)
		}
	}
}
