package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// seed derives the generator's keys.
const seed = "electrumbench"

// p2wpkh returns a P2WPKH output script of a 20-byte program derived from
// name: a destination with no key (nothing ever spends it), so its outputs
// stay unspent and its history grows only by the payments made to it.
func p2wpkh(name string) []byte {
	h := sha256.Sum256([]byte("electrumbench|" + name))
	return append([]byte{0x00, 0x14}, h[:20]...)
}

// The measured scripts: one paid by histTxs txs, one holding utxos
// outputs (paid by the first utxos of those txs).
var (
	histScript = p2wpkh("history")
	utxoScript = p2wpkh("utxos")
)

// subScript is the script of subscription slot of connection conn.
func subScript(conn, slot int) []byte { return p2wpkh(fmt.Sprintf("sub/%d/%d", conn, slot)) }

// chainSpec sizes the chain.
type chainSpec struct {
	histTxs  int // txs paying histScript
	utxos    int // of them, also paying utxoScript
	perBlock int // payments per block (and fan-out outputs)
}

// buildChain generates the chain: coinbase blocks until coins mature, a
// fan-out of perBlock coins, then blocks of perBlock payments each paying
// histScript (and utxoScript for the first utxos), funded from the
// fan-out and the previous block's change.
func buildChain(s chainSpec) (*chaingen.Generator, error) {
	payBlocks := (s.histTxs + s.perBlock - 1) / s.perBlock
	const step = time.Minute
	total := 110 + 1 + payBlocks
	// A recent tip (btcd keeps mined txs in its mempool while its tip is
	// over a day old), with room for the blocks the notification rounds mine.
	g := chaingen.New(&chaincfg.RegressionNetParams, seed,
		chaingen.WithTimestamps(time.Now().Add(-time.Duration(total+30)*step), step))
	if err := g.Extend(110, 0); err != nil {
		return nil, err
	}
	fan, err := g.Address(chaingen.P2WPKH, 7)
	if err != nil {
		return nil, err
	}
	outs := make([]chaingen.Output, s.perBlock)
	for i := range outs {
		outs[i] = chaingen.Output{Address: fan, Value: 1_000_000}
	}
	tx, err := g.CreatePayment(outs, 1)
	if err != nil {
		return nil, fmt.Errorf("fan-out: %w", err)
	}
	if _, err := g.AddBlock(tx); err != nil {
		return nil, err
	}
	done := 0
	for done < s.histTxs {
		n := min(s.perBlock, s.histTxs-done)
		txs := make([]*wire.MsgTx, 0, n)
		for range n {
			to := []chaingen.Output{{Script: histScript, Value: 1_000}}
			if done < s.utxos {
				to = append(to, chaingen.Output{Script: utxoScript, Value: 1_000})
			}
			tx, err := g.CreatePayment(to, 1)
			if err != nil {
				return nil, fmt.Errorf("payment %d: %w", done, err)
			}
			txs = append(txs, tx)
			done++
		}
		if _, err := g.AddBlock(txs...); err != nil {
			return nil, err
		}
		fmt.Printf("  generated block %d: %d of %d payments\n", g.Height(), done, s.histTxs)
	}
	return g, nil
}

// submitBlock is submitblock alone, so that its return time is the node's
// acceptance (regtest's SubmitBlock verifies with a second call).
func submitBlock(ctx context.Context, node *regtest.Node, b *wire.MsgBlock) error {
	var buf []byte
	w := hexBuf{&buf}
	if err := b.Serialize(w); err != nil {
		return err
	}
	var r *string
	if err := node.CallResult(ctx, &r, "submitblock", string(buf)); err != nil {
		return err
	}
	if r != nil {
		return fmt.Errorf("submitblock: %s", *r)
	}
	return nil
}

type hexBuf struct{ b *[]byte }

func (h hexBuf) Write(p []byte) (int, error) {
	const digits = "0123456789abcdef"
	for _, c := range p {
		*h.b = append(*h.b, digits[c>>4], digits[c&15])
	}
	return len(p), nil
}
