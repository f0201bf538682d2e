package api_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// wantFilter is the taproot filter of a block built from the chain's own
// scripts with btcutil's gcs (zeroed key): "" for blocks without taproot.
func wantFilter(t *testing.T, f *apitest.Fixture, h int) string {
	t.Helper()
	scripts := f.TaprootScripts(h)
	if len(scripts) == 0 {
		return ""
	}
	p := apitest.BlockFilters
	fl, err := gcs.BuildGCSFilter(p.P, p.M(), [gcs.KeySize]byte{}, scripts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fl.NBytes()
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// Every block's filter, through the three filter calls.
func TestBlockFiltersOfTheChain(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	scripts := apitest.BlockFilters.Scripts
	tip := f.TipHeight()
	all, err := svc.BlockFilters(ctx, scripts, strconv.Itoa(tip+1), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all.BlockFilters) != tip+1 {
		t.Fatalf("%d filters for %d blocks", len(all.BlockFilters), tip+1)
	}
	withFilter := 0
	for h := 0; h <= tip; h++ {
		want := wantFilter(t, f, h)
		if want != "" {
			withFilter++
		}
		if e := all.BlockFilters[h]; e != (api.BlockFilterEntry{BlockHash: f.BlockHash(h), Filter: want}) {
			t.Fatalf("block-filters %d: %+v, want filter %q", h, e, want)
		}
		one, err := svc.BlockFilter(ctx, scripts, f.BlockHash(h), 0)
		if err != nil || one.BlockFilter != want {
			t.Fatalf("getBlockFilter %d: %+v %v", h, one, err)
		}
	}
	if withFilter < 5 || withFilter > tip-5 {
		t.Fatalf("fixture: %d of %d blocks have taproot scripts", withFilter, tip+1)
	}
	batch, err := svc.BlockFiltersBatch(ctx, scripts, f.BlockHash(110), 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range batch.BlockFiltersBatch {
		h := 111 + i
		if want := fmt.Sprintf("%d:%s:%s", h, f.BlockHash(h), wantFilter(t, f, h)); e != want {
			t.Fatalf("batch[%d] = %s, want %s", i, e, want)
		}
	}
	if len(batch.BlockFiltersBatch) != 5 {
		t.Fatalf("batch of %d", len(batch.BlockFiltersBatch))
	}
	last, err := svc.BlockFilters(ctx, scripts, "3", "", "")
	if err != nil || len(last.BlockFilters) != 3 || last.BlockFilters[tip].Filter != wantFilter(t, f, tip) {
		t.Fatalf("lastN 3: %+v %v", last, err)
	}
}

// An index built without filters answers empty filters and refuses
// batches, as Blockbook does.
func TestBlockFiltersDisabled(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{NoBlockFilters: true})
	svc := newService(f)
	ctx := context.Background()
	r, err := svc.BlockFilters(ctx, "", strconv.Itoa(f.TipHeight()+1), "", "")
	if err != nil {
		t.Fatal(err)
	}
	for h, e := range r.BlockFilters {
		if e.Filter != "" || e.BlockHash != f.BlockHash(h) {
			t.Fatalf("block %d: %+v", h, e)
		}
	}
	_, err = svc.BlockFiltersBatch(ctx, "", f.BlockHash(1), 0, 0)
	wantUserError(t, err, "Not supported")
	_, err = svc.BlockFilter(ctx, apitest.BlockFilters.Scripts, f.BlockHash(1), 0)
	wantUserError(t, err, "Unsupported script type")
}
