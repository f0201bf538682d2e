package mesh

import (
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// A block's withdrawals are one pseudo-transaction: a credit per
// withdrawal, Gwei converted to wei, with the block hash and suffix as id.
func TestEthWithdrawalsTx(t *testing.T) {
	s := NewEth(fakeEthSvc{}, fakeEthLedger{}, Options{Blockchain: "Ethereum", Network: "test", Symbol: "ETH", Decimals: 18})
	lb := &api.EthLedgerBlock{Hash: bchain.Hash{31: 7}}
	if _, ok := s.ethWithdrawalsTx(lb); ok {
		t.Fatal("a block without withdrawals has a withdrawals transaction")
	}
	lb.Withdrawals = []bchain.EthWithdrawal{{Index: 9, Validator: 3, Address: addr(1), Amount: 0xe162d9}, {Index: 10, Address: addr(2), Amount: ^uint64(0)}}
	tx, ok := s.ethWithdrawalsTx(lb)
	if !ok || tx.TransactionIdentifier.Hash != "0x"+lb.Hash.String()+"-withdrawals" {
		t.Fatalf("%v %+v", ok, tx.TransactionIdentifier)
	}
	got := sums(t, tx)
	want := map[string]string{
		"0x" + addr(1).String()[2:] + " ETH": "14770905000000000",
		"0x" + addr(2).String()[2:] + " ETH": "18446744073709551615000000000",
	}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for k, v := range want {
		if got[k] == nil || got[k].String() != v {
			t.Errorf("%s: %v, want %s", k, got[k], v)
		}
	}
	if op := tx.Operations[0]; op.Type != opWithdrawal || op.Metadata["index"] != uint64(9) || op.Metadata["validator_index"] != uint64(3) {
		t.Errorf("%+v", op)
	}
}
