package api_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// ScriptQueries over the fixture, against apitest's replay of the raw
// chain (confirmed part) and the pending txs with chaingen's prevouts
// (mempool part).

// pendingOracle is what the pending txs do to one descriptor.
type pendingOracle struct {
	txids               []string // in Pending's order
	funded, spent       int64
	fundedSum, spentSum int64
	unspent             map[string]int64 // "txid:vout" → value, not spent by another pending tx
	childOfPending      map[string]bool
}

func pendingFor(t *testing.T, f *apitest.Fixture, desc []byte) *pendingOracle {
	t.Helper()
	o := &pendingOracle{unspent: map[string]int64{}, childOfPending: map[string]bool{}}
	pendingIDs := map[string]bool{}
	spentByPending := map[wire.OutPoint]bool{}
	for _, tx := range f.Pending {
		pendingIDs[tx.TxHash().String()] = true
		for _, in := range tx.TxIn {
			spentByPending[in.PreviousOutPoint] = true
		}
	}
	for _, tx := range f.Pending {
		txid := tx.TxHash().String()
		prevs, err := f.Gen.Prevouts(tx, f.Pending...)
		if err != nil {
			t.Fatal(err)
		}
		touched := false
		for i, p := range prevs {
			if pendingIDs[tx.TxIn[i].PreviousOutPoint.Hash.String()] {
				o.childOfPending[txid] = true
			}
			if string(f.Parser.OutputAddrDesc(p.PkScript)) == string(desc) {
				o.spent++
				o.spentSum += p.Value
				touched = true
			}
		}
		for i, out := range tx.TxOut {
			if string(f.Parser.OutputAddrDesc(out.PkScript)) != string(desc) {
				continue
			}
			o.funded++
			o.fundedSum += out.Value
			touched = true
			if !spentByPending[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}] {
				o.unspent[fmt.Sprintf("%s:%d", txid, i)] = out.Value
			}
		}
		if touched {
			o.txids = append(o.txids, txid)
		}
	}
	return o
}

func TestScriptQueriesEveryDescriptor(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	s := newService(f)
	q := s.Capabilities().Scripts
	ctx := context.Background()
	spentByPending := map[string]bool{}
	for _, tx := range f.Pending {
		for _, in := range tx.TxIn {
			spentByPending[fmt.Sprintf("%s:%d", in.PreviousOutPoint.Hash, in.PreviousOutPoint.Index)] = true
		}
	}
	descs := f.Descs(func(b []byte) []byte { return f.Parser.OutputAddrDesc(b) })
	if len(descs) < 50 {
		t.Fatalf("only %d descriptors in the fixture", len(descs))
	}
	withPending, withChild, withSpent := 0, 0, 0
	for _, desc := range descs {
		hist, utxos := f.ScriptLedger(func(b []byte) []byte { return f.Parser.OutputAddrDesc(b) }, desc)
		pend := pendingFor(t, f, desc)
		if len(pend.txids) > 0 {
			withPending++
		}
		for _, id := range pend.txids {
			if pend.childOfPending[id] {
				withChild++
			}
		}
		for _, h := range hist {
			if h.Spent > 0 && h.Funded > 0 {
				withSpent++
			}
		}
		t.Run(fmt.Sprintf("%x", desc), func(t *testing.T) {
			got, found, err := q.ScriptByHash(ctx, sha256.Sum256(desc))
			if err != nil || !found || string(got) != string(desc) {
				t.Fatalf("ScriptByHash: %x %v %v", got, found, err)
			}
			checkScriptHistory(t, q, desc, hist, pend)
			checkScriptBalance(t, q, desc, hist, pend)
			var want []api.ScriptUtxo
			for _, u := range utxos {
				if !spentByPending[fmt.Sprintf("%s:%d", u.Txid, u.Vout)] {
					txid, _ := bchain.ParseHash(u.Txid)
					want = append(want, api.ScriptUtxo{Txid: txid, Vout: uint32(u.Vout), Height: uint32(u.Height), Value: u.Value})
				}
			}
			gotU, err := q.ScriptUtxos(ctx, desc)
			if err != nil {
				t.Fatal(err)
			}
			if len(gotU) != len(want)+len(pend.unspent) {
				t.Fatalf("%d utxos, want %d confirmed and %d pending", len(gotU), len(want), len(pend.unspent))
			}
			if !slices.Equal(gotU[:len(want)], want) {
				t.Errorf("confirmed utxos %+v\nwant %+v", gotU[:len(want)], want)
			}
			for _, u := range gotU[len(want):] {
				if v, ok := pend.unspent[fmt.Sprintf("%s:%d", u.Txid, u.Vout)]; !ok || v != u.Value || u.Height != 0 {
					t.Errorf("pending utxo %+v not expected", u)
				}
			}
		})
	}
	// The fixture must exercise the mempool parts and txs paying and
	// spending one descriptor at once.
	if withPending < 4 || withChild == 0 || withSpent == 0 {
		t.Errorf("fixture too thin: %d descriptors with pending txs, %d pending children, %d self-paying txs", withPending, withChild, withSpent)
	}
}

func checkScriptHistory(t *testing.T, q api.ScriptQueries, desc []byte, hist []apitest.ScriptTxRef, pend *pendingOracle) {
	t.Helper()
	ctx := context.Background()
	got, err := q.ScriptHistory(ctx, desc, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(hist)+len(pend.txids) {
		t.Fatalf("%d txs, want %d confirmed and %d pending", len(got), len(hist), len(pend.txids))
	}
	for i, h := range hist {
		if g := got[i]; g.Txid.String() != h.Txid || int(g.Height) != h.Height || g.Pos != h.Pos || g.FirstSeen != 0 {
			t.Fatalf("tx %d: %+v, want %+v", i, g, h)
		}
	}
	pending := got[len(hist):]
	for i, g := range pending {
		if !slices.Contains(pend.txids, g.Txid.String()) || g.Height != 0 || g.Pos != -1 || g.FirstSeen == 0 || g.Fee <= 0 {
			t.Errorf("pending %+v not expected (%v)", g, pend.txids)
		}
		if g.UnconfirmedInputs != pend.childOfPending[g.Txid.String()] {
			t.Errorf("pending %s: unconfirmed inputs %v", g.Txid, g.UnconfirmedInputs)
		}
		if i > 0 && (g.FirstSeen < pending[i-1].FirstSeen ||
			g.FirstSeen == pending[i-1].FirstSeen && g.Txid.String() < pending[i-1].Txid.String()) {
			t.Errorf("pending txs out of order: %+v", pending)
		}
	}
	// The limit: exactly the count passes, one less fails before reading.
	n := len(got)
	if _, err := q.ScriptHistory(ctx, desc, n); err != nil {
		t.Errorf("limit %d: %v", n, err)
	}
	if _, err := q.ScriptHistory(ctx, desc, n-1); !errors.Is(err, api.ErrTooManyTxs) {
		t.Errorf("limit %d: %v, want ErrTooManyTxs", n-1, err)
	} else if _, ok := api.AsUserError(err); !ok {
		t.Errorf("limit error %v is not a user error", err)
	}
}

func checkScriptBalance(t *testing.T, q api.ScriptQueries, desc []byte, hist []apitest.ScriptTxRef, pend *pendingOracle) {
	t.Helper()
	var chain api.ScriptStats
	for _, h := range hist {
		chain.TxCount++
		chain.FundedTxoCount += int64(h.Funded)
		chain.FundedTxoSum += h.FundedSum
		chain.SpentTxoCount += int64(h.Spent)
		chain.SpentTxoSum += h.SpentSum
	}
	mem := api.ScriptStats{TxCount: int64(len(pend.txids)), FundedTxoCount: pend.funded, FundedTxoSum: pend.fundedSum,
		SpentTxoCount: pend.spent, SpentTxoSum: pend.spentSum}
	got, err := q.ScriptBalance(context.Background(), desc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Chain != chain || got.Mempool != mem {
		t.Errorf("balance %+v, want chain %+v mempool %+v", got, chain, mem)
	}
	if got.Confirmed() != chain.FundedTxoSum-chain.SpentTxoSum || got.Unconfirmed() != mem.FundedTxoSum-mem.SpentTxoSum {
		t.Errorf("confirmed %d unconfirmed %d", got.Confirmed(), got.Unconfirmed())
	}
}
