package api

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/syncer"
)

// The index and the sync worker satisfy the interfaces api declares for
// them (checked here: db and syncer must not import api).
var (
	_ Store      = (*db.DB)(nil)
	_ TxCache    = (*db.DB)(nil)
	_ SyncStatus = (*syncer.Syncer)(nil)
)

// fixedFees is a node estimator answering one rate.
type fixedFees int64

func (f fixedFees) EstimateFee(context.Context, int, bool) (int64, error) { return int64(f), nil }

// anyXpubs stands for a coin parser that reads accounts (never called).
type anyXpubs struct{ bchain.XpubParser }

// has lists which capabilities a set offers, by Capability.
func has(c Capabilities) map[Capability]bool {
	return map[Capability]bool{
		CapAccounts: c.Accounts != nil, CapUtxos: c.Utxos != nil, CapBlockFilters: c.BlockFilters != nil,
		CapMempoolFilters: c.MempoolFilters != nil, CapRawBlocks: c.RawBlocks != nil, CapRawTxs: c.RawTxs != nil,
		CapTxSpecific: c.TxSpecific != nil, CapContracts: c.Contracts != nil, CapRPCCall: c.RPCCall != nil,
		CapFeeEstimates: c.FeeEstimates != nil, CapFeeStats: c.FeeStats != nil, CapScripts: c.Scripts != nil,
		CapProjectedFees: c.ProjectedFees != nil,
		CapPushdata:      c.Pushdata != nil,
		CapRunes:         c.Runes != nil,
		CapChainStats:    c.ChainStats != nil,
		CapReplacements:  c.Replacements != nil,
		CapTweaks:        c.Tweaks != nil,
	}
}

// Each chain type offers what it has; accounts and fee estimation follow
// the parser and the node.
func TestCapabilitiesOfServices(t *testing.T) {
	utxoAlways := []Capability{CapUtxos, CapBlockFilters, CapMempoolFilters, CapRawBlocks, CapRawTxs, CapTxSpecific, CapFeeStats, CapScripts, CapPushdata, CapChainStats, CapRunes, CapTweaks}
	ethAlways := []Capability{CapContracts, CapRPCCall}
	for _, tc := range []struct {
		name  string
		svc   Service
		chain bchain.ChainType
		want  []Capability
	}{
		{"bitcoin-type bare", NewUtxoService(nil, &bchain.Backend{}, nil, Config{}), bchain.ChainBitcoinType, utxoAlways},
		{"bitcoin-type full", NewUtxoService(nil, &bchain.Backend{Xpub: anyXpubs{}, Fees: fixedFees(1000)}, nil, Config{}),
			bchain.ChainBitcoinType, append([]Capability{CapAccounts, CapFeeEstimates}, utxoAlways...)},
		{"ethereum-type bare", NewEthService(nil, &bchain.Backend{}, nil, Config{}), bchain.ChainEthereumType, ethAlways},
		{"ethereum-type with fees", NewEthService(nil, &bchain.Backend{Fees: fixedFees(1)}, nil, Config{}),
			bchain.ChainEthereumType, append([]Capability{CapFeeEstimates}, ethAlways...)},
	} {
		caps := tc.svc.Capabilities()
		if caps.Chain != tc.chain {
			t.Errorf("%s: chain %v", tc.name, caps.Chain)
		}
		got := has(caps)
		want := map[Capability]bool{}
		for _, c := range tc.want {
			want[c] = true
		}
		for c, ok := range got {
			if ok != want[c] {
				t.Errorf("%s: %s offered %v, want %v", tc.name, c, ok, want[c])
			}
		}
	}
	// has covers every field of Capabilities but Chain.
	if n := reflect.TypeOf(Capabilities{}).NumField() - 1; n != len(has(Capabilities{})) || n != len(capabilityNames) {
		t.Errorf("Capabilities has %d optional parts, has() knows %d, names %d", n, len(has(Capabilities{})), len(capabilityNames))
	}
}

// The not-supported answers are the wire texts clients have always seen;
// each capability a chain type can lack has its own.
func TestNotSupportedTexts(t *testing.T) {
	eth, btc := Capabilities{Chain: bchain.ChainEthereumType}, Capabilities{Chain: bchain.ChainBitcoinType}
	for _, tc := range []struct {
		caps Capabilities
		c    Capability
		want string
	}{
		{eth, CapAccounts, "Xpubs and descriptors are not supported for Ethereum-type coins"},
		{eth, CapUtxos, "UTXOs are not supported for Ethereum-type coins"},
		{eth, CapBlockFilters, "Block filters are not supported for Ethereum-type coins"},
		{eth, CapMempoolFilters, "Mempool filters are not supported for Ethereum-type coins"},
		{eth, CapRawBlocks, "Raw blocks are not supported for Ethereum-type coins"},
		{eth, CapRawTxs, "Raw transactions are not supported for Ethereum-type coins"},
		{eth, CapTxSpecific, "Node-specific tx data is not supported for Ethereum-type coins"},
		{eth, CapFeeStats, "Fee stats are not supported for Ethereum-type coins"},
		{eth, CapFeeEstimates, "Fee estimation is not supported for this coin"},
		{btc, CapContracts, "getContractInfo is not supported on this coin"},
		{btc, CapRPCCall, "rpcCall is not supported for Bitcoin-type coins"},
		{btc, CapAccounts, "XPUB functionality is not supported"},
		{btc, CapFeeEstimates, "Fee estimation is not supported for this coin"},
		{btc, CapUtxos, "utxos not supported for this coin"}, // never missing there
	} {
		err := tc.caps.NotSupported(tc.c)
		ue, ok := AsUserError(err)
		if !ok || ue.Msg != tc.want || !errors.Is(err, ErrNotSupported) {
			t.Errorf("%v %s: %v (user error %v), want %q", tc.caps.Chain, tc.c, err, ok, tc.want)
		}
		if IsNotAccount(err) != (tc.c == CapAccounts) {
			t.Errorf("%v %s: IsNotAccount %v", tc.caps.Chain, tc.c, IsNotAccount(err))
		}
	}
	// Every capability an actual service lacks has its own text.
	for _, svc := range []Service{NewUtxoService(nil, &bchain.Backend{}, nil, Config{}), NewEthService(nil, &bchain.Backend{}, nil, Config{})} {
		caps := svc.Capabilities()
		for c, ok := range has(caps) {
			if _, text := notSupportedTexts[c][caps.Chain]; !ok && !text {
				t.Errorf("%v lacks %s but has no text for it", caps.Chain, c)
			}
		}
	}
}

// Fee targets are checked the chain type's way before any estimator is
// asked; the estimate itself comes from the node.
func TestFeeTargetsAndEstimates(t *testing.T) {
	ctx := context.Background()
	utxo := NewUtxoService(nil, &bchain.Backend{Params: bchain.CoinParams{Decimals: 8}, Fees: fixedFees(1500)}, nil, Config{})
	if err := utxo.CheckFeeTargets([]int{1, 1008}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]int{{0}, {1, 1009}, {-1}} {
		if err := utxo.CheckFeeTargets(bad); err == nil {
			t.Errorf("targets %v accepted", bad)
		}
	}
	eth := NewEthService(nil, &bchain.Backend{}, nil, Config{})
	if err := eth.CheckFeeTargets([]int{0, -5, 100000}); err != nil {
		t.Errorf("ethereum-type targets: %v", err)
	}
	for _, s := range []string{"0", "1009", "x", ""} {
		if _, err := ParseFeeBlocks(s); err == nil {
			t.Errorf("estimatefee/%q accepted", s)
		}
	}
	n, err := ParseFeeBlocks("6")
	if err != nil || n != 6 {
		t.Fatalf("ParseFeeBlocks(6) = %d, %v", n, err)
	}
	fees := utxo.Capabilities().FeeEstimates
	res, err := fees.EstimateFee(ctx, n, true)
	if err != nil || res.Result != "0.000015" {
		t.Errorf("EstimateFee = %+v, %v", res, err)
	}
	est, err := fees.FeeEstimates(ctx, []int{1, 2}, FeeQuery{TxSize: 200})
	if err != nil || len(est) != 2 || est[1].FeePerUnit != "1500" || est[1].FeePerTx != "300" {
		t.Errorf("FeeEstimates = %+v, %v", est, err)
	}
}
