package mesh

import (
	"math/big"

	"github.com/openexplorer/blockbook/api"
)

// Beacon withdrawals (EIP-4895) credit balances with no tx. Mesh puts a
// block's withdrawals in one pseudo-transaction of the block, after its
// txs, whose identifier is the block hash with withdrawalsSuffix (no tx
// hash has a suffix, so it cannot collide with a tx's).
const (
	opWithdrawal      = "WITHDRAWAL" // a beacon withdrawal, credited to its address
	withdrawalsSuffix = "-withdrawals"
)

// gwei is a withdrawal amount's unit in wei.
var gwei = big.NewInt(1_000_000_000)

// ethWithdrawalsTx is the pseudo-transaction of lb's withdrawals; false
// when the block has none.
func (s *Server) ethWithdrawalsTx(lb *api.EthLedgerBlock) (Transaction, bool) {
	if len(lb.Withdrawals) == 0 {
		return Transaction{}, false
	}
	t := Transaction{TransactionIdentifier: TransactionIdentifier{Hash: s.svc.HashString(lb.Hash) + withdrawalsSuffix},
		Operations: make([]Operation, 0, len(lb.Withdrawals))}
	for _, w := range lb.Withdrawals {
		v := new(big.Int).Mul(new(big.Int).SetUint64(w.Amount), gwei)
		t.Operations = append(t.Operations, Operation{OperationIdentifier: OperationIdentifier{Index: int64(len(t.Operations))},
			Type: opWithdrawal, Status: opSuccess, Account: s.ethAcct(w.Address), Amount: &Amount{Value: v.String(), Currency: s.cur},
			Metadata: map[string]any{"index": w.Index, "validator_index": w.Validator}})
	}
	return t, true
}
