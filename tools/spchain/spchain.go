// Package spchain is the Silent Payments test chain the tweak index's
// tests share: a short demo chain (every script kind), chaingen's Silent
// Payments blocks on top (payments from every eligible input kind, txs
// BIP352 skips, spends), and a fork that replaces the spending block with
// two empty ones; as wire blocks, as the real parser reads them, and as
// generators that can submit them to a node.
package spchain

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/optindex"
)

// Chain is the test chain.
type Chain struct {
	G, F             *chaingen.Generator // the main chain and the fork
	Main, Fork       []*bchain.Block
	MainRaw, ForkRaw []*wire.MsgBlock
	SP               *chaingen.SPChain
	Receiver         *chaingen.SPReceiver
}

// Build makes the chain from seed (regtest).
func Build(seed string) (*Chain, error) {
	params := &chaincfg.RegressionNetParams
	c := &Chain{G: chaingen.New(params, seed), Receiver: chaingen.NewSPReceiver(seed)}
	if err := c.G.Demo(chaingen.DemoSpec{Blocks: 115, TxsPerBlock: 2}); err != nil {
		return nil, err
	}
	var err error
	if c.SP, err = c.G.SilentPayments(c.Receiver); err != nil {
		return nil, err
	}
	if c.F, err = c.G.Fork(c.SP.PayHeight, seed+"-fork"); err != nil {
		return nil, err
	}
	for range 2 {
		if _, err := c.F.AddBlock(); err != nil {
			return nil, err
		}
	}
	c.MainRaw, c.ForkRaw = c.G.Blocks(), c.F.Blocks()
	if c.Main, err = optindex.Parse(c.MainRaw); err != nil {
		return nil, err
	}
	if c.Fork, err = optindex.Parse(c.ForkRaw); err != nil {
		return nil, err
	}
	return c, nil
}

// Refill serves the blocks of both branches by hash, as a node keeping
// stale blocks does (db.RefillFunc).
func (c *Chain) Refill(height uint32, hash bchain.Hash) (*bchain.Block, error) {
	for _, branch := range [][]*bchain.Block{c.Main, c.Fork} {
		if int(height) < len(branch) && branch[height].Hash == hash {
			return branch[height], nil
		}
	}
	return nil, bchain.ErrBlockNotFound
}

// Position is the (height, index) of a tx of the main chain.
func (c *Chain) Position(txid [32]byte) (uint32, uint32, bool) {
	want := bchain.Hash(txid)
	for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
		want[i], want[j] = want[j], want[i] // wire order to display order
	}
	for h, b := range c.Main {
		for i := range b.Txs {
			if b.Txs[i].Txid == want {
				return uint32(h), uint32(i), true
			}
		}
	}
	return 0, 0, false
}
