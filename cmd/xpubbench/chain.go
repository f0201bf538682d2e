package main

import (
	"fmt"
	"os"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/tools/benchindex"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

const (
	splitOuts  = 2000   // outputs of one coin-splitting tx
	coinValue  = 50_000 // value of each split output
	txsPerBlk  = 2000   // payments per block
	splitsPerB = 10     // splitting txs per block
)

// generate writes the benchmark chain unless it exists: coins split from
// coinbases, then one payment per coin, to the account's receive addresses
// 0..used-1 in turn (txs of them), then to the history address (histTxs).
func generate(path string, acct *chaingen.HDAccount, used, txs, histTxs int) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "generating the chain (once; cached in %s)\n", path)
	g := chaingen.New(params, "xpubbench")
	need := txs + histTxs
	if err := g.Extend(100+need/(splitOuts*splitsPerB)*2+20, 0); err != nil {
		return err
	}
	var coins []chaingen.Coin
	for len(coins) < need {
		var block []*wire.MsgTx
		for i := 0; i < splitsPerB && len(coins)+len(block)*splitOuts < need; i++ {
			outs := make([]chaingen.Output, splitOuts)
			for j := range outs {
				pk, err := g.PkScript(chaingen.P2WPKH, uint64(1000+j%16))
				if err != nil {
					return err
				}
				outs[j] = chaingen.Output{Script: pk, Value: coinValue}
			}
			tx, err := g.CreatePayment(outs, 1)
			if err != nil {
				return err
			}
			block = append(block, tx)
		}
		if _, err := g.AddBlock(block...); err != nil {
			return err
		}
		for _, tx := range block {
			for _, c := range g.Coins(tx) {
				if c.Value == coinValue {
					coins = append(coins, c)
				}
			}
		}
	}
	var dests [][]byte
	for i := range used {
		pk, err := acct.PkScript(0, uint32(i))
		if err != nil {
			return err
		}
		dests = append(dests, pk)
	}
	hist, err := acct.PkScript(1, 1_000_000)
	if err != nil {
		return err
	}
	if err := payEach(g, coins[:txs], dests); err != nil {
		return err
	}
	if err := payEach(g, coins[txs:need], [][]byte{hist}); err != nil {
		return err
	}
	return chaingen.WriteBlocksFile(path, g.Blocks())
}

// payEach mines one payment per coin to dests in turn, txsPerBlk a block.
func payEach(g *chaingen.Generator, coins []chaingen.Coin, dests [][]byte) error {
	for start := 0; start < len(coins); start += txsPerBlk {
		chunk := coins[start:min(start+txsPerBlk, len(coins))]
		// Rotate so that destination i%len(dests) continues across chunks.
		rot := make([][]byte, len(dests))
		for i := range dests {
			rot[i] = dests[(start+i)%len(dests)]
		}
		txs, err := g.SpendEach(chunk, rot, 1)
		if err != nil {
			return err
		}
		if _, err := g.AddBlock(txs...); err != nil {
			return err
		}
	}
	return nil
}

// buildIndex indexes the chain file into dir with the bulk loader, once.
func buildIndex(chainFile, dir string) error {
	chain, err := chaingen.ReadBlocksFile(chainFile)
	if err != nil {
		return err
	}
	return benchindex.Build(dir, btc.NewParser(params), chain)
}
