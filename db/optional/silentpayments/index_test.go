package silentpayments

import (
	"slices"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/internal/bip352"
	"github.com/openexplorer/blockbook/tools/optindex"
	"github.com/openexplorer/blockbook/tools/spchain"
)

var (
	chainOnce sync.Once
	chain     *spchain.Chain
	chainErr  error
)

// spChains is the shared test chain (tools/spchain), built once.
func spChains(t testing.TB) *spchain.Chain {
	t.Helper()
	chainOnce.Do(func() { chain, chainErr = spchain.Build("silentpayments") })
	if chainErr != nil {
		t.Fatal(chainErr)
	}
	return chain
}

func newIndex(t *testing.T, keep int) *db.UtxoIndex { return optindex.New(t, Index{}, keep) }

func connect(t *testing.T, x *db.UtxoIndex, blocks []*bchain.Block) { optindex.Connect(t, x, blocks) }

func requireIdentical(t *testing.T, a, b *db.UtxoIndex) { optindex.RequireIdentical(t, a, b) }

// oracleRows computes every row from the wire blocks, independently of
// the index's prevout resolution: the spent outputs' scripts are looked up
// among the chain's earlier outputs.
func oracleRows(t *testing.T, blocks []*wire.MsgBlock) []Row {
	t.Helper()
	outs := map[wire.OutPoint][]byte{}
	var rows []Row
	for h, mb := range blocks {
		for i, tx := range mb.Transactions {
			r := Row{Height: uint32(h), Index: uint32(i)}
			for n, o := range tx.TxOut {
				outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o.PkScript
				if bip352.IsP2TR(o.PkScript) {
					r.Outputs = append(r.Outputs, Output{Vout: uint32(n), Value: uint64(o.Value)})
				}
			}
			if i == 0 || len(r.Outputs) == 0 {
				continue
			}
			ins := make([]bip352.Input, len(tx.TxIn))
			for j, in := range tx.TxIn {
				prev, ok := outs[in.PreviousOutPoint]
				if !ok {
					t.Fatalf("block %d tx %d input %d: unknown prevout", h, i, j)
				}
				txid := in.PreviousOutPoint.Hash
				slices.Reverse(txid[:])
				ins[j] = bip352.Input{PrevTxid: txid, PrevVout: in.PreviousOutPoint.Index, ScriptSig: in.SignatureScript,
					Witness: in.Witness, PrevScript: prev}
			}
			var ok bool
			if r.Tweak, ok = bip352.Tweak(ins); ok {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

func storedRows(t *testing.T, x *db.UtxoIndex) []Row {
	t.Helper()
	var rows []Row
	if err := db.Iterate(x.DB(), db.CFSilentPayments, nil, nil, func(k, v []byte) (bool, error) {
		r, err := unpackRow(k, v)
		rows = append(rows, r)
		return true, err
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

// position finds a txid in the main chain.
func position(t *testing.T, c *spchain.Chain, txid chainhash.Hash) (uint32, uint32) {
	t.Helper()
	h, i, ok := c.Position(txid)
	if !ok {
		t.Fatalf("tx %s not in the chain", txid)
	}
	return h, i
}
