package e2e

import (
	"path/filepath"
	"testing"
)

// checkPricesGoldens writes the goldens of mempool.space's prices and
// historical-price (testdata/mempoolspace-prices), which `make test-wire`
// type-checks against mempool's ApiPrice and Conversion
// (tools/js/check-goldens.mjs); the current ticker's time is the clock's.
func checkPricesGoldens(t *testing.T, esplora string) {
	t.Helper()
	gs := newGoldenSet(t, filepath.Join(goldenDir, "mempoolspace-prices"), "TestE2EFiatRates")
	gs.check("prices", normalizeMpWS(t, fetchGolden(t, esplora+"/api/v1/prices", 200)))
	gs.check("historical-price", fetchGolden(t, esplora+"/api/v1/historical-price?timestamp=1700092800", 200))
	gs.check("historical-price-currency", fetchGolden(t, esplora+"/api/v1/historical-price?timestamp=1700000000&currency=EUR", 200))
	gs.check("error-historical-price", fetchGolden(t, esplora+"/api/v1/historical-price?timestamp=yesterday", 400))
	gs.finish()
}
