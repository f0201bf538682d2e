package api_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// Query tests over apitest's fixture: a chaingen regtest chain indexed by
// the real index code, an in-memory node and the real mempool. Expected
// values come from chaingen's ledgers and the raw chain, never from the
// code under test. Calls go to the concrete *api.UtxoService.

func TestMain(m *testing.M) {
	code := m.Run()
	apitest.CloseShared()
	os.Exit(code)
}

// newService builds the Bitcoin-type query service over a fixture; mods
// adjust its configuration.
func newService(f *apitest.Fixture, mods ...func(*api.Config)) *api.UtxoService {
	cfg := api.Config{
		BlockFilters: f.BlockFilters, MempoolFilters: apitest.MempoolFilters, Log: apitest.Quiet(),
		Build: api.BuildInfo{Version: "test", Host: "apitest"}, TxCache: f.DB,
	}
	if f.Mempool != nil { // a nil *Mempool in the interface would not be nil
		cfg.Mempool = f.Mempool
	}
	for _, m := range mods {
		m(&cfg)
	}
	return api.NewUtxoService(f.DB, f.Backend, nil, cfg)
}

// withLimits sets the service's limits.
func withLimits(l api.Limits) func(*api.Config) { return func(c *api.Config) { c.Limits = l } }

// wantUserError requires a user-facing error (HTTP 400) whose message
// starts with prefix.
func wantUserError(t *testing.T, err error, prefix string) {
	t.Helper()
	ue, ok := api.AsUserError(err)
	if !ok || !strings.HasPrefix(ue.Msg, prefix) {
		t.Fatalf("got error %v, want a user error starting %q", err, prefix)
	}
}

// wantAmount compares an amount with a ledger value.
func wantAmount(t *testing.T, what string, got *api.Amount, want int64) {
	t.Helper()
	if got.String() != strconv.FormatInt(want, 10) {
		t.Errorf("%s = %s, want %d", what, got, want)
	}
}

// wantPaging compares the paging fields of an answer.
func wantPaging(t *testing.T, what string, got api.Paging, page, totalPages, itemsOnPage int) {
	t.Helper()
	if want := (api.Paging{Page: page, TotalPages: totalPages, ItemsOnPage: itemsOnPage}); got != want {
		t.Errorf("%s: paging %+v, want %+v", what, got, want)
	}
}

// pageOf is the slice page (1-based) of size of list.
func pageOf[T any](list []T, page, size int) []T {
	start := min((page-1)*size, len(list))
	return list[start:min(start+size, len(list))]
}

// pages is the number of pages of size over n items.
// pages is the page count Blockbook reports: at least one.
func pages(n, size int) int { return max((n+size-1)/size, 1) }

func jsonNumber(v int64) json.Number { return json.Number(strconv.FormatInt(v, 10)) }

func chainhashOf(s string) (chainhash.Hash, error) {
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		return chainhash.Hash{}, err
	}
	return *h, nil
}
