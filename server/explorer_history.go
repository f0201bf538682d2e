package server

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"

	"github.com/openexplorer/blockbook/api"
)

// The balance-history chart of address and account pages: the api's
// balance history (the same buckets as REST balancehistory), a range chosen
// by plain links (no script), drawn as SVG with a data table behind it.

// historyRange is one choice of the chart's span, ending at the tip's time
// (not the clock's: a chain whose last block is old still shows its end).
type historyRange struct {
	key, label string
	span       int64 // seconds; 0 for the whole history
}

var historyRanges = []historyRange{
	{"day", "24 hours", 86400}, {"week", "7 days", 7 * 86400}, {"month", "30 days", 30 * 86400},
	{"year", "1 year", 365 * 86400}, {"all", "All", 0},
}

// bucketWidths are the periods a chart may group by; each divides the
// next, and the api aligns buckets to multiples of the width since the
// epoch, so buckets of the finest width merge exactly into coarser ones.
var bucketWidths = []int64{3600, 6 * 3600, 86400, 7 * 86400, 28 * 86400, 364 * 86400}

// maxChartBuckets bounds the periods of a chart, for bars that stay visible.
const maxChartBuckets = 60

// explorerChartTxs caps the txs a chart reads: it is drawn on every view
// of a page, and reading a tx's values costs some 30 µs, so 2,000 keep the
// page near 60 ms at worst, where the REST cap (a quarter of a million)
// would take seconds. A longer history gets a note; a range may still fit.
const explorerChartTxs = 2_000

// chartWidth is the finest bucket width giving at most maxChartBuckets
// periods over span seconds.
func chartWidth(span int64) int64 {
	for _, w := range bucketWidths {
		if (span+w-1)/w <= maxChartBuckets {
			return w
		}
	}
	return bucketWidths[len(bucketWidths)-1]
}

// historyRow is one period of the chart's data table.
type historyRow struct {
	Time           int64
	Txs            uint32
	Received, Sent *api.Amount
	Balance        *api.Amount // after the period
	// Fiat is the balance after the period in the chosen currency at the
	// rate at the period's end, RateTime (explorer_chartfiat.go); "" when
	// that rate is unknown.
	Fiat     string
	RateTime int64
	fiat     float64
}

// balanceChart is what the templates draw.
type balanceChart struct {
	Ranges  []filterTab
	Label   string // the chosen range's label
	From    int64  // the balancehistory query the rows equal: from, groupBy
	GroupBy int64
	Opening *api.Amount // the balance before From
	Rows    []historyRow
	Note    string // why there is no chart (the history is too long to read)
	Plot    *chartPlot
	// FiatCode names the fiat column ("" without rates: no column);
	// OpeningFiat is the opening balance at the rate at From.
	FiatCode    string
	OpeningFiat string
	openingFiat float64
	fiatMax     string // the largest fiat value, "" when none
}

// balanceHistory builds the chart of descriptor (an address, xpub or
// descriptor) for the range the request names; base is the page's path,
// balance and txs the confirmed balance and tx count the page shows.
func (e *explorer) balanceHistory(r *http.Request, descriptor, base string, gap int, balance *api.Amount, txs int) (*balanceChart, error) {
	rng, tabs := rangeTabs(r.URL.Query(), base)
	c := &balanceChart{Label: rng.label, Opening: api.NewAmount(0), Ranges: tabs}
	if rng.span == 0 && txs > explorerChartTxs {
		// Known too long from the page's tx count: no read at all.
		c.Note = fmt.Sprintf("The whole history (%s transactions) is more than the chart reads on a page view (%s); choose a range above, or ask the API's balancehistory.",
			groupDigits(int64(txs)), groupDigits(explorerChartTxs))
		return c, nil
	}
	tip, err := e.tipTime(r.Context())
	if err != nil {
		return nil, err
	}
	hq := api.BalanceHistoryQuery{GroupBy: uint32(bucketWidths[0]), Gap: gap, REST: true, MaxTxs: explorerChartTxs}
	if rng.span > 0 {
		// A range reads only its own txs, at its own width.
		c.GroupBy = chartWidth(rng.span)
		c.From = tip - rng.span
		c.From -= c.From % c.GroupBy
		hq.From, hq.GroupBy = c.From, uint32(c.GroupBy)
	}
	hist, err := e.svc.BalanceHistory(r.Context(), descriptor, hq)
	if _, ok := api.AsUserError(err); ok && !api.IsNotFound(err) {
		c.Note = fmt.Sprintf("This range has more transactions than the chart reads on a page view (%s); choose a shorter one, or ask the API's balancehistory.",
			groupDigits(explorerChartTxs))
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	end := max(tip, c.From+1)
	if len(hist) > 0 {
		end = max(end, hist[len(hist)-1].Time+int64(hq.GroupBy))
	}
	bal := new(big.Int)
	if rng.span == 0 {
		// The whole history, read at the finest width and merged here
		// into periods that fit the chart.
		start := end - 1
		if len(hist) > 0 {
			start = hist[0].Time
		}
		c.GroupBy = chartWidth(end - start)
		c.From = start - start%c.GroupBy
	} else if balance != nil {
		// The balance before the range: the confirmed balance less what
		// the range moved.
		bal.Set(amountInt(balance))
		for _, h := range hist {
			bal.Sub(bal, amountInt(h.Received))
			bal.Add(bal, amountInt(h.Sent))
		}
	}
	amountInt(c.Opening).Set(bal)
	for _, h := range hist {
		bal.Add(bal, amountInt(h.Received))
		bal.Sub(bal, amountInt(h.Sent))
		t := h.Time - h.Time%c.GroupBy
		if n := len(c.Rows); n == 0 || c.Rows[n-1].Time != t {
			c.Rows = append(c.Rows, historyRow{Time: t, Received: api.NewAmount(0), Sent: api.NewAmount(0), Balance: api.NewAmount(0)})
		}
		row := &c.Rows[len(c.Rows)-1]
		row.Txs += h.Txs
		amountInt(row.Received).Add(amountInt(row.Received), amountInt(h.Received))
		amountInt(row.Sent).Add(amountInt(row.Sent), amountInt(h.Sent))
		amountInt(row.Balance).Set(bal)
	}
	e.chartFiat(r, c)
	c.Plot = plotHistory(c, c.From, max(end, c.From+c.GroupBy), e.loadedCoin())
	return c, nil
}

// rangeTabs returns the range the query names (all by default) and the
// links to every range, keeping the page's other parameters but its page.
func rangeTabs(q url.Values, base string) (historyRange, []filterTab) {
	rng := historyRanges[len(historyRanges)-1]
	for _, h := range historyRanges {
		if h.key == q.Get("range") {
			rng = h
		}
	}
	var tabs []filterTab
	for _, h := range historyRanges {
		lq := url.Values{}
		for k, v := range q {
			if k != "page" {
				lq[k] = v
			}
		}
		lq.Set("range", h.key)
		tabs = append(tabs, filterTab{Label: h.label, Href: base + "?" + lq.Encode() + "#history", Current: h.key == rng.key})
	}
	return rng, tabs
}

// tipTime is the best block's time (0 without blocks).
func (e *explorer) tipTime(ctx context.Context) (int64, error) {
	b, err := e.svc.Blocks(ctx, 1, 1)
	if err != nil {
		return 0, err
	}
	if len(b.Blocks) == 0 {
		return 0, nil
	}
	return b.Blocks[0].Time, nil
}

// chartOrNote keeps a page up when its chart fails: the chart's error
// becomes a note, except a cancelled or timed-out request, which fails the
// page as any other read would.
func (e *explorer) chartOrNote(c *balanceChart, err error) (*balanceChart, error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return c, err
	}
	e.log.Warn("balance chart failed", "err", err)
	return &balanceChart{Note: "The balance history is not available now."}, nil
}
