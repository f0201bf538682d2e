package db

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// testNamer names descriptors "a<hex>", leaving those whose last byte is
// a multiple of 5 without an address (as scripts without one).
type testNamer struct{}

func (testNamer) DescAddress(desc bchain.AddrDesc) (string, bool) {
	if len(desc) == 0 || desc[len(desc)-1]%5 == 0 {
		return "", false
	}
	return "a" + hex.EncodeToString(desc), true
}

func newPrefixIndex(t *testing.T, keep int) *UtxoIndex {
	t.Helper()
	x := newTestIndex(t, openTestDB(t), keep, filterVariants[1].p)
	if on, err := x.EnableAddressPrefix(true, testNamer{}); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	return x
}

// checkPrefixRows requires one addressPrefix row per named descriptor
// with an addressBalance row, and no other.
func checkPrefixRows(t *testing.T, x *UtxoIndex) {
	t.Helper()
	var want, got []string
	if err := x.db.iterate(CFAddressBalance, nil, nil, func(k, _ []byte) (bool, error) {
		desc, err := unpackBalanceKey(k)
		if a, ok := (testNamer{}).DescAddress(desc); ok && err == nil {
			want = append(want, a)
		}
		return err == nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if err := x.db.iterate(CFAddressPrefix, nil, nil, func(k, v []byte) (bool, error) {
		a, err := unpackAddressPrefix(k, v)
		got = append(got, a)
		return true, err
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("addressPrefix rows %d, want %d", len(got), len(want))
	}
}

// A reorg with the rows kept ends byte-identical to a fresh sync of the
// new branch, and the rows match the balances at every step.
func TestAddressPrefixReorgExact(t *testing.T) {
	chain := newSynthChain(11)
	for i := 0; i < 30; i++ {
		chain.next("")
	}
	x := newPrefixIndex(t, 20)
	connectAll(t, x, chain.blocks)
	checkPrefixRows(t, x)
	branch := chain.fork(19, 77)
	for i := 0; i < 14; i++ {
		branch.next("b")
	}
	for {
		tip, _, _ := x.Tip()
		if tip.Height == 19 {
			break
		}
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	checkPrefixRows(t, x)
	connectAll(t, x, branch.blocks[20:])
	checkPrefixRows(t, x)
	fresh := newPrefixIndex(t, 20)
	connectAll(t, fresh, branch.blocks)
	assertIdentical(t, x.db, fresh.db)
}

// A bulk load writes the rows a per-block sync writes.
func TestAddressPrefixBulkEqualsPerBlock(t *testing.T) {
	chain := newSynthChain(12)
	for i := 0; i < 60; i++ {
		chain.next("")
	}
	ref := newPrefixIndex(t, 7)
	connectAll(t, ref, chain.blocks)
	for _, opts := range []BulkOptions{{RoundBytes: 8 << 10, CacheBytes: 1}, {RoundBytes: 1 << 30, CacheBytes: 1 << 30}} {
		x := newPrefixIndex(t, 7)
		bulkConnect(t, x, chain.blocks[:40], opts)
		connectAll(t, x, chain.blocks[40:])
		assertIdentical(t, x.db, ref.db)
		checkPrefixRows(t, x)
	}
}

func TestAddressPrefixSwitch(t *testing.T) {
	chain := newSynthChain(13)
	for i := 0; i < 5; i++ {
		chain.next("")
	}
	// Off: no rows, no mark.
	d := openTestDB(t)
	x := newTestIndex(t, d, 7, filterVariants[1].p)
	if on, err := x.EnableAddressPrefix(false, testNamer{}); err != nil || on {
		t.Fatalf("off: %v %v", on, err)
	}
	connectAll(t, x, chain.blocks)
	if n := countRows(t, d, CFAddressPrefix); n != 0 {
		t.Fatalf("%d rows with the switch off", n)
	}
	// An index with blocks but without the rows refuses the switch.
	if _, err := x.EnableAddressPrefix(true, testNamer{}); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("switching on a built index: %v", err)
	}
	// A marked index keeps them even when not asked.
	y := newPrefixIndex(t, 7)
	if on, err := y.EnableAddressPrefix(false, testNamer{}); err != nil || !on {
		t.Fatalf("marked index: %v %v", on, err)
	}
	connectAll(t, y, chain.blocks)
	checkPrefixRows(t, y)
}

func TestAddressesWithPrefix(t *testing.T) {
	chain := newSynthChain(14)
	for i := 0; i < 20; i++ {
		chain.next("")
	}
	x := newPrefixIndex(t, 7)
	connectAll(t, x, chain.blocks)
	var all []string
	if err := x.db.iterate(CFAddressPrefix, nil, nil, func(k, _ []byte) (bool, error) {
		all = append(all, string(k))
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"a", all[0][:4], all[len(all)-1], "b", "a0"} {
		got, err := AddressesWithPrefix(x.db, prefix, 10)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, a := range all {
			if strings.HasPrefix(a, prefix) && len(want) < 10 {
				want = append(want, a)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("prefix %q: %v, want %v", prefix, got, want)
		}
	}
	if got, err := AddressesWithPrefix(x.db, "", 10); err != nil || len(got) != 0 {
		t.Fatalf("empty prefix: %v %v", got, err)
	}
}
