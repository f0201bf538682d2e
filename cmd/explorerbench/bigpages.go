package main

import (
	"bytes"
	"fmt"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Wallet indexes of the big pages' coins (the whale is 4242).
const (
	blockCoinsIndex = 4243
	inputCoinsIndex = 4244
	coinValue       = 20_000
	fanOutMax       = 2_000 // outputs per fan-out tx: a standard tx stays under 100 kvB
)

// addBigPages adds a block of nBlock txs (and its coinbase) and a tx of
// nIn inputs to g: fan-outs pay nBlock coins to one address and nIn to
// another, the next block spends each of the first coins in a tx of its
// own, and the block after it spends the second coins in one tx. fan is
// the first fan-out (min(nBlock, fanOutMax) outputs).
func addBigPages(g *chaingen.Generator, nBlock, nIn int) (height int32, txid, fan string, err error) {
	var fans []*wire.MsgTx
	for _, f := range []struct {
		index uint64
		n     int
	}{{blockCoinsIndex, nBlock}, {inputCoinsIndex, nIn}} {
		addr, err := g.Address(chaingen.P2WPKH, f.index)
		if err != nil {
			return 0, "", "", err
		}
		for left := f.n; left > 0; left -= fanOutMax {
			outs := make([]chaingen.Output, min(left, fanOutMax))
			for i := range outs {
				outs[i] = chaingen.Output{Address: addr, Value: coinValue}
			}
			tx, err := g.CreatePayment(outs, 1)
			if err != nil {
				return 0, "", "", fmt.Errorf("fan-out to %s: %w", addr, err)
			}
			fans = append(fans, tx)
		}
	}
	if _, err := g.AddBlock(fans...); err != nil {
		return 0, "", "", err
	}
	blockCoins, err := coinsTo(g, fans, blockCoinsIndex)
	if err != nil {
		return 0, "", "", err
	}
	inputCoins, err := coinsTo(g, fans, inputCoinsIndex)
	if err != nil {
		return 0, "", "", err
	}
	// The block's txs pay to 100 addresses of their own.
	dests := make([][]byte, 100)
	for i := range dests {
		if dests[i], err = g.PkScript(chaingen.P2WPKH, uint64(5000+i)); err != nil {
			return 0, "", "", err
		}
	}
	txs, err := g.SpendEach(blockCoins, dests, 1)
	if err != nil {
		return 0, "", "", err
	}
	if _, err := g.AddBlock(txs...); err != nil {
		return 0, "", "", err
	}
	height = g.Height()
	to, err := g.Address(chaingen.P2WPKH, 4999)
	if err != nil {
		return 0, "", "", err
	}
	big, err := g.Spend(inputCoins, []chaingen.Output{{Address: to, Value: int64(nIn) * coinValue / 2}}, 1)
	if err != nil {
		return 0, "", "", err
	}
	if _, err := g.AddBlock(big); err != nil {
		return 0, "", "", err
	}
	return height, big.TxHash().String(), fans[0].TxHash().String(), nil
}

// coinsTo returns the outputs of txs paying to the wallet's P2WPKH
// address of index.
func coinsTo(g *chaingen.Generator, txs []*wire.MsgTx, index uint64) ([]chaingen.Coin, error) {
	script, err := g.PkScript(chaingen.P2WPKH, index)
	if err != nil {
		return nil, err
	}
	var out []chaingen.Coin
	for _, tx := range txs {
		for _, c := range g.Coins(tx) {
			if bytes.Equal(c.PkScript, script) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}
