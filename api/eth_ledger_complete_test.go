package api

import (
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// A block is answered only when every tx's balance changes are known.
func TestLedgerComplete(t *testing.T) {
	withStatus := func(st int) *bchain.EthTx {
		return &bchain.EthTx{Receipt: &bchain.EthReceipt{Status: st}}
	}
	cases := []struct {
		name           string
		traced         bool
		traceErr       string
		txTraced       bool
		status         int
		wantIncomplete bool
	}{
		{"traced tx", true, "", true, bchain.EthStatusSuccess, false},
		{"block not traced", false, "", false, bchain.EthStatusSuccess, true},
		{"trace failed, index not amended", true, "timeout", false, bchain.EthStatusSuccess, true},
		{"trace failed, index amended", true, "timeout", true, bchain.EthStatusSuccess, false},
		{"no status, no trace", true, "", false, bchain.EthStatusUnknown, true},
		{"no status, traced", true, "", true, bchain.EthStatusUnknown, false},
		{"status, no internal data", true, "", false, bchain.EthStatusFailure, false},
	}
	for _, c := range cases {
		blk := &bchain.Block{Eth: &bchain.EthBlock{Traced: c.traced, TraceError: c.traceErr}}
		err := ledgerComplete(blk, &EthLedgerTx{Tx: withStatus(c.status), Traced: c.txTraced})
		if got := errors.Is(err, ErrLedgerIncomplete); got != c.wantIncomplete {
			t.Errorf("%s: %v, want incomplete %v", c.name, err, c.wantIncomplete)
		}
	}
}
