package api

import (
	"math/big"
	"testing"
)

func TestAmountV1(t *testing.T) {
	big1 := new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil)
	for _, c := range []struct {
		a    *Amount
		d    int
		want string
	}{
		{nil, 8, ""},
		{NewAmount(0), 8, "0"},
		{NewAmount(1), 8, "0.00000001"},
		{NewAmount(12345), 8, "0.00012345"},
		{NewAmount(150_000_000), 8, "1.5"},
		{NewAmount(5_000_000_000), 8, "50"},
		{NewAmount(2_100_000_000_000_000), 8, "21000000"},
		{(*Amount)(big.NewInt(-250_000_000)), 8, "-2.5"},
		{NewAmount(42), 0, "42"},
		{(*Amount)(big1), 18, "1000000000000"},
		{(*Amount)(new(big.Int).Add(big1, big.NewInt(1))), 18, "1000000000000.000000000000000001"},
	} {
		if got := AmountV1(c.a, c.d); got != c.want {
			t.Errorf("AmountV1(%v, %d) = %q, want %q", c.a, c.d, got, c.want)
		}
	}
}

// The conversion keeps every number of the v2 answer, in coins.
func TestV1Tx(t *testing.T) {
	tx := &Tx{Txid: "ab", Version: 2, LockTime: 7, BlockHash: "cd", BlockHeight: 5, Confirmations: 3, BlockTime: 1700000000,
		Size: 225, Value: NewAmount(90_000), ValueIn: NewAmount(100_000), Fees: NewAmount(10_000), Hex: "0200",
		Vin: []Vin{{Txid: "ef", Vout: 1, Sequence: 4294967295, N: 0, Addresses: []string{"a1"}, IsAddress: true,
			Value: NewAmount(100_000), Hex: "4830"}},
		Vout: []Vout{{Value: NewAmount(90_000), N: 0, Spent: true, SpentTxID: "12", SpentIndex: 2, SpentHeight: 9,
			Hex: "0014", Addresses: []string{"a2"}, IsAddress: true}}}
	v := V1{Decimals: 8}.Tx(tx)
	if v.Txid != "ab" || v.Locktime != 7 || v.Blockhash != "cd" || v.Blockheight != 5 || v.Time != v.Blocktime ||
		v.ValueOut != "0.0009" || v.ValueIn != "0.001" || v.Fees != "0.0001" || v.Hex != "0200" || v.Size != 225 {
		t.Errorf("tx %+v", v)
	}
	in, out := v.Vin[0], v.Vout[0]
	if in.Txid != "ef" || in.Vout != 1 || in.Value != "0.001" || in.ScriptSig.Hex != "4830" || in.Addresses[0] != "a1" {
		t.Errorf("vin %+v", in)
	}
	if out.Value != "0.0009" || !out.Spent || out.SpentTxID != "12" || out.ScriptPubKey.Hex != "0014" || out.ScriptPubKey.Addresses[0] != "a2" {
		t.Errorf("vout %+v", out)
	}
	a := V1{Decimals: 8}.Address(&Address{Address: "a1", Balance: NewAmount(1), Txs: 3, UnconfirmedTxs: 1})
	if a.AddrStr != "a1" || a.Balance != "0.00000001" || a.UnconfirmedBalance != "0" || a.TxApperances != 3 || a.UnconfirmedTxApperances != 1 {
		t.Errorf("address %+v", a)
	}
	us := V1{Decimals: 8}.Utxos([]Utxo{{Txid: "ab", Vout: 1, Value: NewAmount(123), Height: 4, Confirmations: 2}})
	if us[0].Amount != "0.00000123" || us[0].Satoshis != "123" || us[0].Height != 4 {
		t.Errorf("utxo %+v", us[0])
	}
}
