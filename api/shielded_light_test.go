package api_test

import (
	"context"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// shieldedParser is the fixture's parser saying, as Zcash's does, that its
// txs may move value to or from shielded pools.
type shieldedParser struct{ *btc.Parser }

func (shieldedParser) HasShieldedPools() bool { return true }

// TestLightTxsWithShieldedPools: details=txslight is built from the index,
// which does not keep a tx's shielded value balance, so for such coins it
// shows valueIn but no fee; the full tx (which has the balance) keeps it.
func TestLightTxsWithShieldedPools(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	b := *f.Backend
	b.Utxo = shieldedParser{f.Parser}
	cfg := api.Config{BlockFilters: f.BlockFilters, MempoolFilters: apitest.MempoolFilters, Log: apitest.Quiet(), TxCache: f.DB}
	svc := api.NewUtxoService(f.DB, &b, nil, cfg)
	plain := newService(f)
	ctx := context.Background()
	q := api.AddressQuery{Details: api.DetailsTxsLight, Filter: api.NoFilter}
	light, err := svc.Address(ctx, f.DemoAddress, q)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := plain.Address(ctx, f.DemoAddress, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(light.Transactions) == 0 || len(light.Transactions) != len(ref.Transactions) {
		t.Fatalf("%d txs, plain service %d", len(light.Transactions), len(ref.Transactions))
	}
	checked := 0
	for i, tx := range light.Transactions {
		r := ref.Transactions[i]
		if r.Fees == nil || r.Fees.String() == "0" && r.ValueIn.String() == "0" {
			continue // coinbase
		}
		checked++
		if tx.Fees != nil || tx.ValueIn == nil || tx.ValueIn.String() != r.ValueIn.String() {
			t.Errorf("%s: fees %v valueIn %v; want no fee and valueIn %v", tx.Txid, tx.Fees, tx.ValueIn, r.ValueIn)
		}
	}
	if checked == 0 {
		t.Fatal("no non-coinbase tx in the demo address's list")
	}
	full, err := svc.Address(ctx, f.DemoAddress, api.AddressQuery{Details: api.DetailsTxs, Filter: api.NoFilter})
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range full.Transactions {
		if r := ref.Transactions[i]; r.Fees != nil && (tx.Fees == nil || tx.Fees.String() != r.Fees.String()) {
			t.Errorf("%s: full tx fee %v, want %v", tx.Txid, tx.Fees, r.Fees)
		}
	}
}
