package tron

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain/calldata"
)

// Tron's contract calls are the EVM's ABI; their address parameters show
// as Tron addresses, as Blockbook shows them. The calls are Tron mainnet
// txs' data (Blockbook's tron dataparser_test vectors), decoded with the
// addresses rendered by EncodeAddress, as the API's Tron service does.
func TestCallDataTronAddresses(t *testing.T) {
	addr := func(a [20]byte) string { return EncodeAddress(a[:]) }
	sig := func(s string) calldata.Signature {
		t.Helper()
		g, err := calldata.ParseSignature(s)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		name, data, sig string
		want            *calldata.Decoded
	}{
		{"TRC-20 transfer",
			"0xa9059cbb000000000000000000000000d54f9e3b484b372f83aecd67b3772368af4268be0000000000000000000000000000000000000000000000000000000000a7d8c0",
			"transfer(address,uint256)",
			&calldata.Decoded{MethodID: "0xa9059cbb", Name: "Transfer", Function: "transfer(address, uint256)", Params: []calldata.Param{
				{Type: "address", Values: []string{"TVR6Jt3bTZhpsQer2DoH2RMDHoe5LS61Kz"}},
				{Type: "uint256", Values: []string{"11000000"}},
			}}},
		{"TRC-1155 safeTransferFrom",
			"0xf242432a00000000000000000000000046f67edfe3080971e39c7e099d50ec5d86f2cb060000000000000000000000008227ecc55945f98c3dd10a8f461a4d7db126fdba000000000000000000000000000000000000000019efcdb92505463d0bebd400000000000000000000000000000000000000000000000000000000000000000100000000000000000000000000000000000000000000000000000000000000a00000000000000000000000000000000000000000000000000000000000000000",
			"safeTransferFrom(address,address,uint256,uint256,bytes)",
			&calldata.Decoded{MethodID: "0xf242432a", Name: "Safe Transfer From", Function: "safeTransferFrom(address, address, uint256, uint256, bytes)", Params: []calldata.Param{ //nolint:dupword // the signature has two uint256 parameters
				{Type: "address", Values: []string{"TGSRbJTwpyNtjnefQJG1ZwVF1CSDaGYGDy"}},
				{Type: "address", Values: []string{"TMqQg2W2UEEB8cdR35AvpEfU7QbVMihiRn"}},
				{Type: "uint256", Values: []string{"8027030016865780586704000000"}},
				{Type: "uint256", Values: []string{"1"}},
				{Type: "bytes", Values: []string{""}},
			}}},
		{"returnEnergy",
			"0xdab0fe27000000000000000000000000e18657b3968394ae9a68f7dc93c110d84f2b079e000000000000000000000000000000000000000000000000000000016139cc53",
			"returnEnergy(address,uint256)",
			&calldata.Decoded{MethodID: "0xdab0fe27", Name: "Return Energy", Function: "returnEnergy(address, uint256)", Params: []calldata.Param{
				{Type: "address", Values: []string{"TWXfyWNZCeewDCpATk7i6E3X5CwGrFEkg6"}},
				{Type: "uint256", Values: []string{"5926145107"}},
			}}},
	} {
		data, err := hex.DecodeString(strings.TrimPrefix(tc.data, "0x"))
		if err != nil {
			t.Fatal(err)
		}
		got := calldata.Decode(data, []calldata.Signature{sig(tc.sig)}, addr)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
