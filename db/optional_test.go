package db

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// testOptional is an optional index that reads the node's block: a row
// per tx input of the block (the input's spent txid, as the node's block
// says, and its position), in the pushdata family.
type testOptional struct{ fail bool }

func (testOptional) Name() string         { return "testOptional" }
func (testOptional) CFs() []CF            { return []CF{CFPushdata} }
func (testOptional) ReadsNodeBlock() bool { return true }

func (o testOptional) rows(b *OptionalBlock, row func(k []byte)) error {
	if o.fail {
		return errors.New("refused")
	}
	if b.Block == nil {
		return errors.New("no block")
	}
	for i, tx := range b.Block.Txs {
		for j, in := range tx.Vin {
			k := binary.BigEndian.AppendUint32(append([]byte(nil), in.PrevTxid[:]...), b.Indexed.Height)
			row(binary.AppendUvarint(binary.AppendUvarint(k, uint64(i)), uint64(j)))
		}
	}
	return nil
}

func (o testOptional) ConnectBlock(w RowWriter, b *OptionalBlock) error {
	return o.rows(b, func(k []byte) { w.Put(CFPushdata, k, nil) })
}

func (o testOptional) DisconnectBlock(w RowWriter, b *OptionalBlock) error {
	return o.rows(b, func(k []byte) { w.Delete(CFPushdata, k) })
}

func newOptionalIndex(t *testing.T, keep int) *UtxoIndex {
	t.Helper()
	x := newTestIndex(t, openTestDB(t), keep, filterVariants[1].p)
	if on, err := x.EnableOptional(testOptional{}, true); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	return x
}

// The manager writes an optional index's rows in the block's batch and
// bulk round, and undoes them exactly with the node's block fetched again.
func TestOptionalIndexConnectDisconnect(t *testing.T) {
	chain := newSynthChain(21)
	for range 40 {
		chain.next("")
	}
	x := newOptionalIndex(t, 10)
	connectAll(t, x, chain.blocks)
	if n := countRows(t, x.db, CFPushdata); n == 0 {
		t.Fatal("no rows")
	}
	for range 15 {
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	ref := newOptionalIndex(t, 10)
	connectAll(t, ref, chain.blocks[:25])
	assertIdentical(t, x.db, ref.db)

	bulk := newOptionalIndex(t, 10)
	bulkConnect(t, bulk, chain.blocks[:25], BulkOptions{RoundBytes: 8 << 10, CacheBytes: 1})
	assertIdentical(t, bulk.db, ref.db)
}

// A failing optional index fails the connect, which writes nothing; a
// disconnect without the node's block, or with another block, fails
// before writing.
func TestOptionalIndexFailuresWriteNothing(t *testing.T) {
	chain := newSynthChain(22)
	for range 6 {
		chain.next("")
	}
	x := newOptionalIndex(t, 10)
	connectAll(t, x, chain.blocks[:5])
	failing := newTestIndex(t, x.db, 10, filterVariants[1].p)
	if on, err := failing.EnableOptional(testOptional{fail: true}, true); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	if err := failing.ConnectBlock(chain.blocks[5]); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("connect: %v", err)
	}
	other := func(h uint32, _ bchain.Hash) (*bchain.Block, error) { return chain.blocks[h-1], nil }
	for _, refill := range []RefillFunc{nil, other} {
		if _, _, err := x.DisconnectTip(refill); err == nil {
			t.Fatal("disconnected without the right block")
		}
	}
	ref := newOptionalIndex(t, 10)
	connectAll(t, ref, chain.blocks[:5])
	assertIdentical(t, x.db, ref.db)
}

// testOptionalV2 is testOptional whose rows changed after it shipped.
type testOptionalV2 struct{ testOptional }

func (testOptionalV2) RowsVersion() byte { return 2 }

// A datadir marked by another version of an index's rows refuses it (its
// earlier blocks lack the new rows), whichever way the versions differ;
// the same version opens again.
func TestOptionalVersionMismatchRefused(t *testing.T) {
	d := openTestDB(t)
	x := newTestIndex(t, d, 10, filterVariants[1].p)
	if on, err := x.EnableOptional(testOptional{}, true); err != nil || !on {
		t.Fatalf("enable version 1: %v %v", on, err)
	}
	y := newTestIndex(t, d, 10, filterVariants[1].p)
	if _, err := y.EnableOptional(testOptionalV2{}, true); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("version 2 over a version 1 datadir: %v, want ErrIncompatible", err)
	}
	if on, err := y.EnableOptional(testOptional{}, true); err != nil || !on {
		t.Fatalf("version 1 again: %v %v", on, err)
	}
}
