package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// filterChain is the node as the filter calls see it: it knows the heights
// of the indexed blocks and of one orphaned block.
type filterChain struct {
	bchain.BlockChain // other methods are not called
	heights           map[bchain.Hash]uint32
}

func (c *filterChain) BlockHeight(_ context.Context, h bchain.Hash) (uint32, error) {
	if height, ok := c.heights[h]; ok {
		return height, nil
	}
	return 0, fmt.Errorf("%w: %s", bchain.ErrBlockNotFound, h)
}

type scriptClassifier struct{}

func (scriptClassifier) OutputAddrDesc(s []byte) bchain.AddrDesc { return s }

var prodFilters = db.FilterParams{P: 20, Scripts: db.FilterScriptsTaprootNoOrdinals, ZeroedKey: true}

// filterFixture indexes six blocks whose coinbases pay a P2TR script on even
// heights and a P2WPKH script on odd ones (so odd blocks have no filter).
type filterFixture struct {
	svc    *UtxoService
	d      *db.DB
	hashes []bchain.Hash
	orphan bchain.Hash
}

func newFilterFixture(t *testing.T, indexed, served db.FilterParams) *filterFixture {
	t.Helper()
	d := apitest.OpenStore(t, db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	x, err := db.NewUtxoIndex(d, scriptClassifier{}, 10, indexed)
	if err != nil {
		t.Fatal(err)
	}
	f := &filterFixture{d: d, orphan: sha256.Sum256([]byte("orphan"))}
	chain := &filterChain{heights: map[bchain.Hash]uint32{f.orphan: 1}}
	for h := uint32(0); h < 6; h++ {
		script := []byte{0x00, 0x14, byte(h)}
		if h%2 == 0 {
			script = append([]byte{0x51, 0x20}, bytes.Repeat([]byte{byte(h)}, 32)...)
		}
		blk := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: h, Hash: sha256.Sum256([]byte{byte(h)})}}
		if h > 0 {
			blk.Prev = f.hashes[h-1]
		}
		blk.Txs = []bchain.Tx{{Txid: sha256.Sum256([]byte{'c', byte(h)}), Vin: []bchain.Vin{{Coinbase: true}}, Vout: []bchain.Vout{{Value: 50, Script: script}}}}
		if err := x.ConnectBlock(blk); err != nil {
			t.Fatal(err)
		}
		f.hashes = append(f.hashes, blk.Hash)
		chain.heights[blk.Hash] = h
	}
	f.svc = NewUtxoService(d, &bchain.Backend{Type: bchain.ChainBitcoinType, Chain: chain}, nil, Config{BlockFilters: served})
	return f
}

func (f *filterFixture) filterHex(t *testing.T, h int) string {
	t.Helper()
	b, err := db.ReadBlockFilter(f.d, f.hashes[h])
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// wantUserErr requires a user-facing error (HTTP 400) with msg.
func wantUserErr(t *testing.T, err error, msg string) {
	t.Helper()
	ue, ok := AsUserError(err)
	if !ok || ue.Msg != msg {
		t.Fatalf("got error %v, want user error %q", err, msg)
	}
}

func TestBlockFilter(t *testing.T) {
	f := newFilterFixture(t, prodFilters, prodFilters)
	ctx := context.Background()
	if f.filterHex(t, 2) == "" || f.filterHex(t, 1) != "" {
		t.Fatalf("fixture: filters %q (block 2) and %q (block 1)", f.filterHex(t, 2), f.filterHex(t, 1))
	}
	for _, tc := range []struct {
		name, hash, want string
		m                uint64
	}{
		{"with filter", f.hashes[2].String(), f.filterHex(t, 2), 0},
		{"upper case hash", strings.ToUpper(f.hashes[4].String()), f.filterHex(t, 4), 0},
		{"empty filter", f.hashes[1].String(), "", 0},
		// Blockbook answers an unknown (or orphaned) block with an empty filter.
		{"unknown block", strings.Repeat("ab", 32), "", 0},
		// The client's M is ignored: the answer states the index's M.
		{"other M", f.hashes[2].String(), f.filterHex(t, 2), 1 << 19},
	} {
		r, err := f.svc.BlockFilter(ctx, "taproot-noordinals", tc.hash, tc.m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if *r != (BlockFilterResult{P: 20, M: 1 << 20, ZeroedKey: true, BlockFilter: tc.want}) {
			t.Fatalf("%s: %+v, want filter %q", tc.name, r, tc.want)
		}
	}
	_, err := f.svc.BlockFilter(ctx, "taproot", f.hashes[2].String(), 0)
	wantUserErr(t, err, "Unsupported script type taproot")
	_, err = f.svc.BlockFilter(ctx, "", f.hashes[2].String(), 0)
	wantUserErr(t, err, "Unsupported script type ")
	_, err = f.svc.BlockFilter(ctx, "taproot-noordinals", "xyz", 0)
	wantUserErr(t, err, "Invalid block hash 'xyz'")

	// Filters disabled: like Blockbook, an empty scriptType (the default
	// block_filter_scripts) answers P 0, M 1 and no filter; Trezor's
	// default scriptType is refused.
	off := newFilterFixture(t, db.FilterParams{}, db.FilterParams{})
	r, err := off.svc.BlockFilter(ctx, "", off.hashes[2].String(), 0)
	if err != nil || *r != (BlockFilterResult{P: 0, M: 1}) {
		t.Fatalf("disabled: %+v %v", r, err)
	}
	_, err = off.svc.BlockFilter(ctx, "taproot-noordinals", off.hashes[2].String(), 0)
	wantUserErr(t, err, "Unsupported script type taproot-noordinals")
}

func TestBlockFiltersBatch(t *testing.T) {
	f := newFilterFixture(t, prodFilters, prodFilters)
	ctx := context.Background()
	entry := func(h int) string { return fmt.Sprintf("%d:%s:%s", h, f.hashes[h], f.filterHex(t, h)) }
	for _, tc := range []struct {
		name     string
		best     string
		pageSize int
		want     []string
	}{
		{"default page size", f.hashes[0].String(), 0, []string{entry(1), entry(2), entry(3), entry(4), entry(5)}},
		{"negative page size is the default", f.hashes[3].String(), -5, []string{entry(4), entry(5)}},
		{"page", f.hashes[1].String(), 2, []string{entry(2), entry(3)}},
		{"max page size", f.hashes[4].String(), 10000, []string{entry(5)}},
		{"up to date", f.hashes[5].String(), 0, []string{}},
		// An orphaned block the node knows counts as its height (Blockbook).
		{"orphaned best known block", f.orphan.String(), 1, []string{entry(2)}},
	} {
		r, err := f.svc.BlockFiltersBatch(ctx, "taproot-noordinals", tc.best, tc.pageSize, 123)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.P != 20 || r.M != 1<<20 || !r.ZeroedKey || fmt.Sprint(r.BlockFiltersBatch) != fmt.Sprint(tc.want) || r.BlockFiltersBatch == nil {
			t.Fatalf("%s: %+v, want %v", tc.name, r, tc.want)
		}
	}
	if !strings.HasSuffix(entry(1), ":") || strings.Count(entry(2), ":") != 2 {
		t.Fatalf("entry format: %q %q", entry(1), entry(2))
	}
	if b, _ := json.Marshal(mustBatch(t, f, f.hashes[5].String())); !strings.Contains(string(b), `"blockFiltersBatch":[]`) {
		t.Fatalf("up to date answer %s", b)
	}
	_, err := f.svc.BlockFiltersBatch(ctx, "taproot-noordinals", f.hashes[0].String(), 10001, 0)
	wantUserErr(t, err, "pageSize max 10000")
	_, err = f.svc.BlockFiltersBatch(ctx, "taproot-noordinals", strings.Repeat("cd", 32), 0, 0)
	wantUserErr(t, err, "Block not found")
	_, err = f.svc.BlockFiltersBatch(ctx, "taproot-noordinals", "nothex", 0, 0)
	wantUserErr(t, err, "Invalid block hash 'nothex'")
	_, err = f.svc.BlockFiltersBatch(ctx, "taproot", f.hashes[0].String(), 0, 0)
	wantUserErr(t, err, "Unsupported script type taproot")

	off := newFilterFixture(t, db.FilterParams{}, db.FilterParams{})
	_, err = off.svc.BlockFiltersBatch(ctx, "", off.hashes[0].String(), 0, 0)
	wantUserErr(t, err, "Not supported")
	_, err = off.svc.BlockFiltersBatch(ctx, "taproot-noordinals", off.hashes[0].String(), 0, 0)
	wantUserErr(t, err, "Unsupported script type taproot-noordinals")
}

func mustBatch(t *testing.T, f *filterFixture, best string) *BlockFiltersBatchResult {
	t.Helper()
	r, err := f.svc.BlockFiltersBatch(context.Background(), "taproot-noordinals", best, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBlockFiltersREST(t *testing.T) {
	f := newFilterFixture(t, prodFilters, prodFilters)
	ctx := context.Background()
	e := func(h int) BlockFilterEntry {
		return BlockFilterEntry{BlockHash: f.hashes[h].String(), Filter: f.filterHex(t, h)}
	}
	none := BlockFilterEntry{}
	for _, tc := range []struct {
		name, lastN, from, to string
		want                  map[int]BlockFilterEntry
	}{
		{"lastN", "2", "", "", map[int]BlockFilterEntry{4: e(4), 5: e(5)}},
		{"lastN beyond the chain", "8", "", "", map[int]BlockFilterEntry{-2: none, -1: none, 0: e(0), 1: e(1), 2: e(2), 3: e(3), 4: e(4), 5: e(5)}},
		{"lastN wins over from-to", "1", "0", "2", map[int]BlockFilterEntry{5: e(5)}},
		{"from-to", "", "1", "2", map[int]BlockFilterEntry{1: e(1), 2: e(2)}},
		{"to defaults to the tip", "", "-1", "", map[int]BlockFilterEntry{-1: none, 0: e(0), 1: e(1), 2: e(2), 3: e(3), 4: e(4), 5: e(5)}},
		{"to beyond the tip", "", "5", "7", map[int]BlockFilterEntry{5: e(5), 6: none, 7: none}},
		{"garbage lastN is absent", "x", "3", "3", map[int]BlockFilterEntry{3: e(3)}},
		{"negative lastN is absent", "-3", "3", "4", map[int]BlockFilterEntry{3: e(3), 4: e(4)}},
	} {
		r, err := f.svc.BlockFilters(ctx, "taproot-noordinals", tc.lastN, tc.from, tc.to)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.P != 20 || r.M != 1<<20 || !r.ZeroedKey || fmt.Sprint(r.BlockFilters) != fmt.Sprint(tc.want) {
			t.Fatalf("%s: %+v, want %v", tc.name, r, tc.want)
		}
	}
	for _, tc := range []struct{ scriptType, lastN, from, to, msg string }{
		{"taproot", "1", "", "", "Invalid scriptType taproot. Use taproot-noordinals"},
		{"", "1", "", "", "Invalid scriptType . Use taproot-noordinals"},
		{"taproot-noordinals", "", "", "", "Missing parameters"},
		{"taproot-noordinals", "0", "abc", "1e3", "Missing parameters"},
		{"taproot-noordinals", "", "3", "2", "Invalid parameters - from > to"},
		// As in Blockbook, from without to is compared with to = 0.
		{"taproot-noordinals", "", "3", "", "Invalid parameters - from > to"},
		{"taproot-noordinals", "10001", "", "", "Too many blocks requested, at most 10000; use a narrower from-to range or a smaller lastN"},
		{"taproot-noordinals", "", "-9223372036854775808", "9223372036854775807", "Too many blocks requested, at most 10000; use a narrower from-to range or a smaller lastN"},
	} {
		_, err := f.svc.BlockFilters(ctx, tc.scriptType, tc.lastN, tc.from, tc.to)
		wantUserErr(t, err, tc.msg)
	}
	r, err := f.svc.BlockFilters(ctx, "taproot-noordinals", "10000", "", "")
	if err != nil || len(r.BlockFilters) != 10000 {
		t.Fatalf("10000 blocks: %d %v", len(r.BlockFilters), err)
	}
	// Heights are object keys on the wire, in Go's (string) order.
	r, _ = f.svc.BlockFilters(ctx, "taproot-noordinals", "2", "", "")
	b, _ := json.Marshal(r)
	want := fmt.Sprintf(`{"P":20,"M":1048576,"zeroedKey":true,"blockFilters":{"4":{"blockHash":"%s","filter":"%s"},"5":{"blockHash":"%s","filter":""}}}`,
		f.hashes[4], f.filterHex(t, 4), f.hashes[5])
	if string(b) != want {
		t.Fatalf("wire %s\nwant %s", b, want)
	}

	off := newFilterFixture(t, db.FilterParams{}, db.FilterParams{})
	r, err = off.svc.BlockFilters(ctx, "", "1", "", "")
	if err != nil || r.P != 0 || r.M != 1 || r.ZeroedKey || len(r.BlockFilters) != 1 || r.BlockFilters[5].Filter != "" || r.BlockFilters[5].BlockHash == "" {
		t.Fatalf("disabled: %+v %v", r, err)
	}
	if _, err := off.svc.BlockFilters(ctx, "taproot-noordinals", "1", "", ""); !errors.As(err, new(*Error)) {
		t.Fatalf("disabled, Trezor's scriptType: %v", err)
	}
}
