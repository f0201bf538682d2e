package eth

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/trie"
)

// The withdrawals of Ethereum mainnet block 17,826,409 (as the node sends
// them in eth_getBlockBy*) decode to what the block's withdrawalsRoot
// commits to: re-encoded, they hash to that root.
func TestDecodeMainnetWithdrawals(t *testing.T) {
	ws, err := os.ReadFile("testdata/withdrawals_17826409.json")
	if err != nil {
		t.Fatal(err)
	}
	raw := fmt.Sprintf(`{"hash":"0x%064x","number":"0x1100269","transactions":[],"withdrawals":%s}`, 1, ws)
	p, err := decodePending("eth_getBlockByHash", json.RawMessage(raw), types.LatestSignerForChainID(big.NewInt(1)))
	if err != nil {
		t.Fatal(err)
	}
	got := p.block().Eth.Withdrawals
	if len(got) != 16 {
		t.Fatalf("%d withdrawals, want 16", len(got))
	}
	back := make(types.Withdrawals, len(got))
	var gwei uint64
	for i, w := range got {
		back[i] = &types.Withdrawal{Index: w.Index, Validator: w.Validator, Address: common.Address(w.Address), Amount: w.Amount}
		gwei += w.Amount
	}
	root := types.DeriveSha(back, trie.NewStackTrie(nil))
	if want := common.HexToHash("0x38cd9ae992a22b94a1582e7d0691dbef56a90cdb36bf7b11d98373f80b102c8f"); root != want {
		t.Errorf("withdrawals root %s, the block's is %s", root.Hex(), want.Hex())
	}
	if got[0].Index != 0xc13ad8 || got[0].Validator != 0xa2f00 || gwei != 273_750_264 {
		t.Errorf("first %+v, total %d Gwei", got[0], gwei)
	}
}
