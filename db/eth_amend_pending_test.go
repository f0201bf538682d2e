package db

import (
	"context"
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// RetryTraces after a bulk round whose ingest failed finishes the round
// first, as a connect does: the round here holds block 27's trace-error
// row, so a retry that read around the round would miss that block, and
// its write would be refused while the round is pending.
func TestEthRetryTracesFinishesPendingRound(t *testing.T) {
	chain := newEthSynthChain(11, 30)
	eng := &failingIngest{}
	d := openEthTestDB(t)
	eng.Engine = d.eng
	d.eng = eng
	x := NewEthIndex(d, 300, testContractSource)
	for _, b := range chain.blocks {
		if b.Height == 27 {
			b = degrade(b)
		}
		connectEth(t, x, b)
	}
	key := heightKey(27)
	row, err := d.get(CFBlockInternalDataErrors, key)
	if err != nil || row == nil {
		t.Fatalf("trace-error row of block 27: %x, %v", row, err)
	}
	// Move the row into a staged run of a round whose ingest fails.
	b := d.NewBatch()
	b.del(CFBlockInternalDataErrors, key)
	if err := d.writeUncounted(b); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	f, err := d.newRun(CFBlockInternalDataErrors, "amendtest", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.add(d, key, row, opPut); err != nil {
		t.Fatal(err)
	}
	if err := f.finish(d); err != nil {
		t.Fatal(err)
	}
	if err := d.syncRuns(); err != nil {
		t.Fatal(err)
	}
	tip := chain.blocks[29]
	eng.armed.Store(true)
	r := &BulkRound{From: 29, To: 29, TipHash: tip.Hash, Files: []BulkFile{{CF: CFBlockInternalDataErrors, Name: "amendtest"}}}
	if err := d.commitRound(r); !errors.Is(err, errIngestFails) || !d.pendingRound.Load() {
		t.Fatalf("round ended with %v (pending %v), want the injected ingest failure", err, d.pendingRound.Load())
	}
	if n, err := x.RetryTraces(context.Background(), chain.refill); n != 1 || err != nil {
		t.Fatalf("retry over a pending round: %d amended, %v; want 1, nil", n, err)
	}
	if d.pendingRound.Load() {
		t.Fatal("round still pending after the retry")
	}
	fresh := newEthTestIndex(t, 300, chain.blocks)
	diffs, err := Diff(d, fresh.db, ColumnFamilies(bchain.ChainEthereumType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, df := range diffs {
		t.Error(df)
	}
}
