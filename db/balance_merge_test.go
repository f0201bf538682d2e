package db

import (
	"errors"
	"fmt"
	"testing"
)

func TestBalanceMerge(t *testing.T) {
	stored := packAddrBalance(&AddrBalance{Txs: 3, Sent: 50, Balance: 70, Utxos: 2})
	ops := [][]byte{
		packBalanceChange(&balanceDelta{txs: 2, sent: 20, received: 5, utxos: -1}),
		packBalanceChange(&balanceDelta{txs: 1, received: 1000, utxos: 1}),
	}
	got, err := mergeBalance(stored, ops)
	if err != nil {
		t.Fatal(err)
	}
	want := &AddrBalance{Txs: 6, Sent: 70, Balance: 1055, Utxos: 2}
	if b, err := unpackAddrBalance(got); err != nil || *b != *want {
		t.Fatalf("merged %+v %v, want %+v", b, err, want)
	}
	// No stored row: the operands alone.
	got, err = mergeBalance(nil, ops[1:])
	if b, _ := unpackAddrBalance(got); err != nil || *b != (AddrBalance{Txs: 1, Balance: 1000, Utxos: 1}) {
		t.Fatalf("merged onto nothing: %+v %v", b, err)
	}
	// A balance below zero, a damaged operand or stored row: corruption.
	for name, c := range map[string]struct {
		stored []byte
		op     []byte
	}{
		"underflow":       {stored, packBalanceChange(&balanceDelta{txs: 1, sent: 71})},
		"truncated":       {stored, ops[0][:2]},
		"trailing bytes":  {stored, append(append([]byte{}, ops[0]...), 0)},
		"bad stored row":  {[]byte{0x80}, ops[0]},
		"too many utxos":  {stored, packBalanceChange(&balanceDelta{txs: 1, utxos: 1 << 32})},
		"negative txs":    {stored, packBalanceChange(&balanceDelta{txs: -4})},
		"empty operand":   {stored, []byte{}},
		"overlong varint": {stored, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		if _, err := mergeBalance(c.stored, [][]byte{c.op}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want a corruption error", name, err)
		}
	}
}

func FuzzUnpackBalanceChange(f *testing.F) {
	f.Add(packBalanceChange(&balanceDelta{txs: 1, sent: -5, received: 1 << 40, utxos: -2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := unpackBalanceChange(b)
		checkCanonical(t, b, err, func() []byte { return packBalanceChange(d) })
	})
}

// restagingEngine plays a kill that falls between the ingestion of a run
// of merge operands and the removal of its staged copy: the first such
// ingestion succeeds, the run is staged again as it was written, and the
// call fails.
type restagingEngine struct {
	Engine
	runs   map[string]*[]runRow // the rows of each merging run
	killed bool
}

type runRow struct {
	key, value []byte
	merge      bool
}

type recordingRun struct {
	RunWriter
	rows *[]runRow
}

func (r recordingRun) Add(key, value []byte, del bool) error {
	if del {
		return fmt.Errorf("a deletion in a merging run")
	}
	*r.rows = append(*r.rows, runRow{key: append([]byte{}, key...), value: append([]byte{}, value...)})
	return r.RunWriter.Add(key, value, false)
}

func (r recordingRun) Merge(key, operand []byte) error {
	*r.rows = append(*r.rows, runRow{key: append([]byte{}, key...), value: append([]byte{}, operand...), merge: true})
	return r.RunWriter.Merge(key, operand)
}

func (e *restagingEngine) NewRun(cf CF, name string) (RunWriter, error) {
	w, err := e.Engine.NewRun(cf, name)
	if err != nil || cf.Merger() == nil {
		return w, err
	}
	rows := new([]runRow)
	e.runs[name] = rows
	return recordingRun{w, rows}, nil
}

func (e *restagingEngine) IngestRun(cf CF, name string) (bool, error) {
	ok, err := e.Engine.IngestRun(cf, name)
	if err != nil || !ok || e.killed || cf.Merger() == nil {
		return ok, err
	}
	e.killed = true
	w, err := e.Engine.NewRun(cf, name)
	if err != nil {
		return true, err
	}
	for _, r := range *e.runs[name] {
		if r.merge {
			err = w.Merge(r.key, r.value)
		} else {
			err = w.Add(r.key, r.value, false)
		}
		if err != nil {
			return true, err
		}
	}
	if err := w.Finish(); err != nil {
		return true, err
	}
	if err := e.Engine.SyncRuns(); err != nil {
		return true, err
	}
	return true, errors.New("killed before the staged copy was removed")
}

// A run of balance changes found still staged after its ingestion is not
// ingested again: the balances count each change once.
func TestMergeRunIsIngestedOnce(t *testing.T) {
	chain := newSynthChain(7)
	for range 40 {
		chain.next("")
	}
	for _, open := range []func(Options) (*DB, error){OpenMemDB, OpenRocksDB} {
		onEngine(open, func() {
			ref := newTestIndex(t, openTestDB(t), 7, filterVariants[1].p)
			connectAll(t, ref, chain.blocks)

			eng := &restagingEngine{runs: map[string]*[]runRow{}}
			x := indexOver(t, func(e Engine) Engine { eng.Engine = e; return eng })
			half := len(chain.blocks) / 2
			connectAll(t, x, chain.blocks[:half])
			// A session on a non-empty index knows no stored balance: every
			// address the first blocks paid gets a merge operand.
			l, err := x.NewBulkLoader(BulkOptions{RoundBytes: 1 << 30, CacheBytes: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range chain.blocks[half:] {
				if err := l.ConnectBlock(b); err != nil {
					t.Fatal(err)
				}
			}
			if st, err := l.Finish(); err == nil || !eng.killed || st.BalanceMerged == 0 {
				t.Fatalf("the session ended with %v, killed %v, %d balances merged", err, eng.killed, st.BalanceMerged)
			}
			if err := x.db.resumePending(); err != nil { // what the next open does
				t.Fatal(err)
			}
			if v, _ := x.db.get(CFAddressBalance, mergeRunMark(chain.blocks[len(chain.blocks)-1].Height)); v != nil {
				t.Fatal("the run's mark outlived its round")
			}
			assertIdentical(t, x.db, ref.db)
		})
	}
}
