package db

import (
	"bytes"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func ethAddr(b byte) bchain.AddrDesc { return bytes.Repeat([]byte{b}, EthAddrLen) }

func bigOf(s string) *big.Int {
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return x
}

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

func sampleEthAddrTxs() []EthAddrTx {
	return []EthAddrTx{
		{Txid: bchain.Hash{9}, Roles: []EthRole{{Kind: EthRoleTx, From: true}, {Kind: EthRoleToken, Index: 3}}},
		{Txid: bchain.Hash{8}, Roles: []EthRole{{Kind: EthRoleInternal, From: true, Index: 70000}, {Kind: EthRoleCreated}}},
	}
}

func sampleAddrContracts() *AddrContracts {
	return &AddrContracts{Txs: 12, NonTokenTxs: 5, InternalTxs: 2, Contracts: []AddrContract{
		{Contract: ethAddr(1), Standard: bchain.TokenERC20, Transfers: 4, Balance: bigOf("-1000000000000000000")},
		{Contract: ethAddr(2), Standard: bchain.TokenERC721, Transfers: 2, Values: []TokenValue{{ID: big.NewInt(0), Value: big.NewInt(1)}, {ID: maxUint256, Value: big.NewInt(1)}}},
		{Contract: ethAddr(3), Standard: bchain.TokenERC1155, Transfers: 1, Values: []TokenValue{{ID: big.NewInt(7), Value: big.NewInt(100)}}},
		{Contract: ethAddr(4), Standard: bchain.TokenUnknown, Transfers: 1},
	}}
}

func sampleInternalData() *InternalData {
	return &InternalData{Kind: bchain.EthInternalCreate, Created: ethAddr(5), Error: "execution reverted",
		Transfers: []InternalTransfer{
			{Kind: bchain.EthInternalCall, From: ethAddr(5), To: ethAddr(6), Value: bigOf("123456789012345678901234567890")},
			{Kind: bchain.EthInternalSelfDestruct, From: ethAddr(7), To: ethAddr(6), Value: big.NewInt(0)},
		}}
}

func TestEthRowsRoundTrip(t *testing.T) {
	txs := sampleEthAddrTxs()
	if got, err := unpackEthAddrTxs(packEthAddrTxs(txs)); err != nil || !reflect.DeepEqual(got, txs) {
		t.Errorf("addresses: %+v, %v", got, err)
	}
	ac := sampleAddrContracts()
	got, err := unpackAddrContracts(packAddrContracts(ac))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(packAddrContracts(got), packAddrContracts(ac)) || got.Contracts[0].Balance.Cmp(ac.Contracts[0].Balance) != 0 ||
		got.Contracts[1].Values[1].ID.Cmp(maxUint256) != 0 || got.Contracts[2].Values[0].Value.Int64() != 100 || got.Txs != 12 {
		t.Errorf("addressContracts: %+v", got)
	}
	id := sampleInternalData()
	gotID, err := unpackInternalData(packInternalData(id))
	if err != nil || gotID.Error != id.Error || !bytes.Equal(gotID.Created, id.Created) || len(gotID.Transfers) != 2 ||
		gotID.Transfers[0].Value.Cmp(id.Transfers[0].Value) != 0 || gotID.Transfers[1].Kind != bchain.EthInternalSelfDestruct {
		t.Errorf("internalData: %+v, %v", gotID, err)
	}
	ci := &ContractInfo{Name: "Maker", Symbol: "MKR", Decimals: 18, Events: []ContractEvent{
		{Height: 100, Kind: ContractCreated}, {Height: 102, Kind: ContractSeen, Standard: bchain.TokenERC20},
		{Height: 150, Kind: ContractDestroyed}, {Height: 160, Kind: ContractCreated}}}
	gotCI, err := unpackContractInfo(packContractInfo(ci))
	if err != nil || !reflect.DeepEqual(gotCI, ci) {
		t.Errorf("contracts: %+v, %v", gotCI, err)
	}
	if created, destroyed := gotCI.Lifetime(); created != 160 || destroyed != 0 || gotCI.Standard() != bchain.TokenERC20 {
		t.Errorf("contracts: created %d destroyed %d standard %v", created, destroyed, gotCI.Standard())
	}
}

// Long texts are cut at a UTF-8 boundary rather than refused, so a token
// with an absurd name cannot stop the sync.
func TestEthRowsTruncateTexts(t *testing.T) {
	name := strings.Repeat("é", 200) // 400 bytes
	got, err := unpackContractInfo(packContractInfo(&ContractInfo{Name: name}))
	if err != nil || len(got.Name) != 256 || !strings.HasPrefix(name, got.Name) {
		t.Errorf("name of %d bytes, %v", len(got.Name), err)
	}
	long := &InternalData{Error: strings.Repeat("x", 5000)}
	if got, err := unpackInternalData(packInternalData(long)); err != nil || len(got.Error) != maxErrorLen {
		t.Errorf("error of %d bytes, %v", len(got.Error), err)
	}
}

func TestEthRowsRejectNonCanonicalIntegers(t *testing.T) {
	for name, b := range map[string][]byte{
		"leading zero": {2, 0, 0, 1},
		"bad sign":     {1, 2, 1},
		"too long":     append([]byte{33, 0}, bytes.Repeat([]byte{1}, 33)...),
		"truncated":    {4, 0, 1},
	} {
		d := newDecoder("test", b)
		d.bigInt()
		if err := d.done(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
