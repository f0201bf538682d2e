package server

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// evmData is null for Bitcoin-type, pre-London and block-less tips, and
// carries the block's base fee and gas figures otherwise.
func TestNewBlockEvmData(t *testing.T) {
	for _, blk := range []*bchain.Block{nil, {}, {Eth: &bchain.EthBlock{GasUsed: 1, GasLimit: 2}}} {
		if d := newBlockEvmData(blk); d != nil {
			t.Fatalf("evmData of %+v: %+v, want nil", blk, d)
		}
	}
	blk := &bchain.Block{Eth: &bchain.EthBlock{BaseFee: big.NewInt(875000000), GasUsed: 21000, GasLimit: 30000000}}
	got, err := json.Marshal(newBlockEvmData(blk))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"baseFeePerGas":"875000000","blockGasUsed":"21000","blockGasLimit":"30000000"}`; string(got) != want {
		t.Fatalf("evmData %s, want %s", got, want)
	}
}
