package doge

import (
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// MinFeeRate is Dogecoin's recommended minimum fee, 0.01 DOGE per 1000
// bytes in koinu (1 DOGE = 1e8 koinu), since Dogecoin Core 1.14.4. Lower
// rates are relayed by some nodes but wallets and miners use this one, so
// estimates never go below it.
const MinFeeRate = 1_000_000

// adjust fits the backend to Dogecoin Core: its fee estimation, and BIP44
// accounts only, as Dogecoin has no SegWit.
//
// Dogecoin Core 1.14's estimatesmartfee takes only a block count and its
// estimator is often empty on a chain with Dogecoin's low fees: the
// estimate is estimatefee's when it has one, else the node's relay fee,
// and never less than MinFeeRate.
func adjust(b *bchain.Backend, node *btc.Node, _ *bchain.Config) error {
	b.Fees = &btc.LegacyFeeEstimator{Node: node, Floor: MinFeeRate, Default: MinFeeRate}
	b.Xpub = btc.P2PKHAccounts(b.Xpub)
	return nil
}
