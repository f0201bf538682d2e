package db

// Every decoder of schema_eth.go has a fuzz target, with the properties of
// those of schema.go (schema_fuzz_test.go): no panic on any bytes, only
// ErrCorrupt as the error, and whatever decodes re-encodes to exactly the
// input. Seeds are records of the shapes the index writes.

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func FuzzUnpackEthAddrTxs(f *testing.F) {
	f.Add(packEthAddrTxs(sampleEthAddrTxs()))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackEthAddrTxs(b)
		checkCanonical(t, b, err, func() []byte { return packEthAddrTxs(v) })
	})
}

func FuzzUnpackAddrContracts(f *testing.F) {
	f.Add(packAddrContracts(sampleAddrContracts()))
	f.Add(packAddrContracts(&AddrContracts{Txs: 1, NonTokenTxs: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackAddrContracts(b)
		checkCanonical(t, b, err, func() []byte { return packAddrContracts(v) })
	})
}

func FuzzUnpackInternalData(f *testing.F) {
	f.Add(packInternalData(sampleInternalData()))
	f.Add(packInternalData(&InternalData{Kind: bchain.EthInternalCall, Error: "execution reverted"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackInternalData(b)
		checkCanonical(t, b, err, func() []byte { return packInternalData(v) })
	})
}

func FuzzUnpackContractInfo(f *testing.F) {
	f.Add(packContractInfo(&ContractInfo{Name: "Tether USD", Symbol: "USDT", Decimals: 6,
		Events: []ContractEvent{{Height: 4634748, Kind: ContractCreated}, {Height: 4634750, Kind: ContractSeen, Standard: bchain.TokenERC20}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackContractInfo(b)
		checkCanonical(t, b, err, func() []byte { return packContractInfo(v) })
	})
}

// sampleEthBlockUndo has a record of each shape: a plain transfer, a
// creation that creates another contract and selfdestructs a third, and
// token transfers of every standard (a mint, a uint256 id and amount).
func sampleEthBlockUndo() *EthBlockUndo {
	return &EthBlockUndo{Txs: []EthTxRecord{
		{Txid: bchain.Hash{1}, From: ethAddr(1), To: ethAddr(2)},
		{Txid: bchain.Hash{2}, From: ethAddr(1), Created: ethAddr(5), Internal: []InternalTransfer{
			{Kind: bchain.EthInternalCreate, From: ethAddr(5), To: ethAddr(6), Value: new(big.Int)},
			{Kind: bchain.EthInternalCall, From: ethAddr(5), To: ethAddr(2), Value: bigOf("1000000000000000000")},
			{Kind: bchain.EthInternalSelfDestruct, From: ethAddr(6), To: ethAddr(1), Value: big.NewInt(7)},
		}},
		{Txid: bchain.Hash{3}, From: ethAddr(2), To: ethAddr(9), Tokens: []EthTokenTransfer{
			{Standard: bchain.TokenERC20, Contract: ethAddr(9), From: ethAddr(2), To: ethAddr(3), Value: maxUint256, ID: new(big.Int)},
			{Standard: bchain.TokenERC721, Contract: ethAddr(8), From: ethAddr(0), To: ethAddr(2), Value: big.NewInt(1), ID: maxUint256},
			{Standard: bchain.TokenERC1155, Contract: ethAddr(7), From: ethAddr(2), To: ethAddr(2), Value: big.NewInt(3), ID: big.NewInt(42)},
		}},
	}}
}

func FuzzUnpackEthBlockUndo(f *testing.F) {
	f.Add(packEthBlockUndo(sampleEthBlockUndo()))
	f.Add(packEthBlockUndo(&EthBlockUndo{}))
	// Whole blocks of the synthetic chain the index tests sync.
	chain := newEthSynthChain(13, 12)
	for _, h := range []int{0, 5, 11} {
		f.Add(packEthBlockUndo(&EthBlockUndo{Txs: ethTxRecords(chain.blocks[h].Eth)}))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackEthBlockUndo(b)
		checkCanonical(t, b, err, func() []byte { return packEthBlockUndo(v) })
	})
}

// The undo record round-trips field by field, and refuses what no writer
// produces: unknown kinds and standards, a bad address flag, a short tail.
func TestEthBlockUndoRoundTrip(t *testing.T) {
	u := sampleEthBlockUndo()
	raw := packEthBlockUndo(u)
	got, err := unpackEthBlockUndo(raw)
	if err != nil || len(got.Txs) != 3 || got.Txs[0].Created != nil || !bytes.Equal(got.Txs[1].Created, ethAddr(5)) ||
		got.Txs[1].Internal[2].Kind != bchain.EthInternalSelfDestruct || got.Txs[1].Internal[1].Value.Cmp(u.Txs[1].Internal[1].Value) != 0 ||
		got.Txs[2].Tokens[1].ID.Cmp(maxUint256) != 0 || got.Txs[2].Tokens[2].Standard != bchain.TokenERC1155 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	one := func(r EthTxRecord) []byte { return packEthBlockUndo(&EthBlockUndo{Txs: []EthTxRecord{r}}) }
	internalKind := one(EthTxRecord{From: ethAddr(1), Internal: []InternalTransfer{{From: ethAddr(1), To: ethAddr(2)}}})
	standard := one(EthTxRecord{From: ethAddr(1), Tokens: []EthTokenTransfer{{Contract: ethAddr(3), From: ethAddr(1), To: ethAddr(2)}}})
	flag := one(EthTxRecord{From: ethAddr(1)})
	// Offsets: uv(1) ‖ txid(32) ‖ from(20) ‖ opt to(1) ‖ opt created(1) ‖
	// uv(#internal) ‖ [kind] ... ‖ uv(#tokens) ‖ [standard] ...
	internalKind[1+32+20+2+1] = byte(numInternalKinds)
	standard[1+32+20+2+2] = byte(numTokenStandards)
	flag[1+32+20] = 2
	for name, bad := range map[string][]byte{
		"internal kind":  internalKind,
		"token standard": standard,
		"address flag":   flag,
		"truncated":      raw[:len(raw)-1],
		"trailing byte":  append(packEthBlockUndo(u), 0),
		"huge count":     {0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		if _, err := unpackEthBlockUndo(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}
