package dbtest

import (
	"encoding/binary"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// balanceChange is an addressBalance merge operand (docs/schema.md):
// zigzag varints of the changes of txs, sent, received and UTXOs.
func balanceChange(txs, sent, received, utxos int64) string {
	var b []byte
	for _, v := range []int64{txs, sent, received, utxos} {
		b = binary.AppendVarint(b, v)
	}
	return string(b)
}

func merge(k, operand string) kv { return kv{k: k, v: operand, merge: true} }

// Merge operands in runs: once ingested, every read (Get, GetMany,
// iteration, snapshots) sees the family's Merger applied to the stored
// value and the operands, in order; a later put replaces the sum; a
// family without a Merger refuses operands.
func testMergeRuns(t *testing.T, e db.Engine) {
	cf := db.CFAddressBalance
	m := cf.Merger()
	if m == nil {
		t.Fatal("addressBalance has no merger")
	}
	stored := string(binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 3), 50), 70), 2))
	ops := []string{balanceChange(2, 20, 5, -1), balanceChange(1, 0, 1000, 1), balanceChange(1, 0, 7, 1)}
	want := func(existing string, ops ...string) string {
		t.Helper()
		var ex []byte
		if existing != "" {
			ex = []byte(existing)
		}
		in := make([][]byte, len(ops))
		for i, o := range ops {
			in[i] = []byte(o)
		}
		v, err := m.Merge(ex, in)
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	write(t, e, cf, put("stored", stored))
	stageAndIngest(t, e, cf, "1.sst", merge("new", ops[2]), merge("stored", ops[0]))
	stageAndIngest(t, e, cf, "2.sst", merge("stored", ops[1]))
	wantStored, wantNew := want(stored, ops[0], ops[1]), want("", ops[2])
	expect(t, e, cf, "stored", wantStored, false)
	expect(t, e, cf, "new", wantNew, false)
	if g, ok := e.(db.MultiGetter); ok {
		vals, err := g.GetMany(cf, [][]byte{[]byte("stored"), []byte("absent"), []byte("new")})
		if err != nil || string(vals[0]) != wantStored || vals[1] != nil || string(vals[2]) != wantNew {
			t.Fatalf("GetMany: %q %v", vals, err)
		}
	}
	expectRows(t, "merged rows", rows(t, e, cf, nil, nil, false), "new="+wantNew, "stored="+wantStored)
	s, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	write(t, e, cf, put("stored", "replaced"))
	expect(t, s, cf, "stored", wantStored, false)
	s.Release()
	expect(t, e, cf, "stored", "replaced", false)

	w, err := e.NewRun(db.CFAddresses, "3.sst")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Merge([]byte("k"), []byte(ops[0])); err == nil {
		t.Fatal("a merge operand accepted for a family without a merger")
	}
}
