package api

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// hexAddrs renders descriptors as lowercase hex addresses.
type hexAddrs struct{}

func (hexAddrs) AddrDescFromAddress(string) (bchain.AddrDesc, error) {
	return nil, bchain.ErrInvalidAddress
}
func (hexAddrs) AddressesFromAddrDesc(d bchain.AddrDesc) ([]string, bool, error) {
	return []string{"0x" + hex.EncodeToString(d)}, true, nil
}

func renderEth(t *testing.T, tx *bchain.EthTx) (*Tx, map[string]any) {
	t.Helper()
	s := NewEthService(nil, &bchain.Backend{Addresses: hexAddrs{}}, nil, Config{})
	out, err := newEthRenderer(s, nil).render(tx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(&wire); err != nil {
		t.Fatal(err)
	}
	return out, wire
}

// An OP-stack tx shows the L1 fields with Blockbook's JSON types (l1Fee
// and l1GasUsed numbers, l1GasPrice a string, l1FeeScalar the node's
// text), and its fees include the L1 fee. The values are those of the
// recorded OP Mainnet receipt in bchain/coins/eth/testdata/chains.
func TestEthL1FeeOnTheWire(t *testing.T) {
	l1Fee, _ := new(big.Int).SetString("44700351261503", 10)
	tx := &bchain.EthTx{Type: bchain.EthTxDynamicFee, Value: new(big.Int), GasPrice: big.NewInt(191000), GasLimit: 300000,
		Receipt: &bchain.EthReceipt{Status: bchain.EthStatusSuccess, GasUsed: 228719, EffectiveGasPrice: big.NewInt(58),
			L1: &bchain.EthL1Fee{Fee: l1Fee, FeeScalar: "0.684", GasPrice: big.NewInt(15694378178), GasUsed: big.NewInt(4164)}}}
	out, wire := renderEth(t, tx)
	if out.Fees.String() != "44700364527205" { // 228719 × 58 + 44700351261503
		t.Errorf("fees %s", out.Fees.String())
	}
	es, _ := wire["ethereumSpecific"].(map[string]any)
	want := map[string]any{"l1Fee": json.Number("44700351261503"), "l1FeeScalar": "0.684", "l1GasPrice": "15694378178",
		"l1GasUsed": json.Number("4164"), "gasPrice": "58"}
	for k, v := range want {
		if es[k] != v {
			t.Errorf("ethereumSpecific.%s = %#v, want %#v", k, es[k], v)
		}
	}
	// Back from the tx cache, the same answer.
	var back Tx
	raw, _ := json.Marshal(out)
	if err := json.Unmarshal(raw, &back); err != nil || back.EthereumSpecific.L1Fee.String() != l1Fee.String() || back.EthereumSpecific.L1GasUsed != "4164" {
		t.Errorf("cached form: %v %+v", err, back.EthereumSpecific)
	}
}

// Elsewhere (Ethereum, Arbitrum, a deposit tx) no L1 field is shown and the
// fee is gas × effective price; after Ecotone the scalar is left out.
func TestEthNoL1FieldsWithoutL1Fee(t *testing.T) {
	tx := &bchain.EthTx{Value: new(big.Int), GasPrice: big.NewInt(20), GasLimit: 21000,
		Receipt: &bchain.EthReceipt{Status: bchain.EthStatusSuccess, GasUsed: 241033, EffectiveGasPrice: big.NewInt(10000000)}}
	out, wire := renderEth(t, tx)
	es, _ := wire["ethereumSpecific"].(map[string]any)
	for _, k := range []string{"l1Fee", "l1FeeScalar", "l1GasPrice", "l1GasUsed"} {
		if _, ok := es[k]; ok {
			t.Errorf("%s shown without an L1 fee", k)
		}
	}
	if out.Fees.String() != "2410330000000" {
		t.Errorf("fees %s", out.Fees.String())
	}
	tx.Receipt.L1 = &bchain.EthL1Fee{Fee: big.NewInt(0x105d4b2024), GasPrice: big.NewInt(0x5d749a07e), GasUsed: big.NewInt(0x800)}
	_, wire = renderEth(t, tx)
	es, _ = wire["ethereumSpecific"].(map[string]any)
	if _, ok := es["l1FeeScalar"]; ok || es["l1Fee"] != json.Number("70284681252") {
		t.Errorf("Ecotone receipt: %#v", es)
	}
}
