package server

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
)

func TestQRPath(t *testing.T) {
	q := newQR("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080")
	if q == nil {
		t.Fatal("no QR code")
	}
	// Version v has 17+4v modules a side, plus the 4-module quiet zone.
	if (q.Size-8-17)%4 != 0 || q.Size < 21+8 {
		t.Fatalf("size %d is no QR version with its quiet zone", q.Size)
	}
	// The finder patterns' top rows: 7 dark modules at the three corners.
	for _, want := range []string{"M4 4h7v1h-7z", "M" + itoa(q.Size-11) + " 4h7v1h-7z", "M4 " + itoa(q.Size-11) + "h7v1h-7z"} {
		if !strings.Contains(q.Path, want) {
			t.Errorf("path lacks the finder row %q", want)
		}
	}
	if newQR(strings.Repeat("x", 4000)) != nil {
		t.Error("a text too long for a QR code gave one")
	}
}

func itoa(n int) string { return fmtF(float64(n)) }

func TestHistRows(t *testing.T) {
	got := histRows([][2]uint64{{7, 100}, {3, 0}, {1, 50}, {0, 10}})
	want := []histRow{{Lo: "4", Hi: "8", VSize: 100, W: 100}, {Lo: "1", Hi: "2", VSize: 50, W: 50}, {Lo: "0", Hi: "1", VSize: 10, W: 10}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestFlowProportional(t *testing.T) {
	sat := func(v uint64) *api.Amount { return api.NewAmount(v) }
	tx := &api.Tx{
		Vin:  []api.Vin{{Value: sat(300), Addresses: []string{"a"}, Txid: "x"}, {Value: sat(100), Addresses: []string{"b"}, Txid: "y"}},
		Vout: []api.Vout{{Value: sat(200)}, {Value: sat(190)}},
		Fees: sat(10), Value: sat(390), ValueIn: sat(400),
	}
	p := newFlow(tx, coinInfo{Shortcut: "BTC", Decimals: 8})
	if p == nil {
		t.Fatal("no flow")
	}
	var hs []float64
	for _, b := range p.Bands {
		hs = append(hs, b.H)
	}
	want := []float64{135, 45, 90, 85.5, 4.5} // 180 units for 400 sat
	for i := range want {
		if i >= len(hs) || math.Abs(hs[i]-want[i]) > 0.1 {
			t.Fatalf("band heights %v, want %v", hs, want)
		}
	}
	if p.Bands[4].Class != "fee" || len(p.Links) != 5 {
		t.Errorf("bands %+v", p.Bands)
	}
	tx.Vin[1].Value = nil // an unresolved input: no picture rather than a wrong one
	if newFlow(tx, coinInfo{}) != nil {
		t.Error("a flow with an unknown input value")
	}
}

func TestCapItems(t *testing.T) {
	items := make([]flowItem, 100)
	for i := range items {
		items[i] = flowItem{v: 1}
	}
	got := capItems(items, "inputs", "in")
	if len(got) != flowMaxSide || got[flowMaxSide-1].v != 100-flowMaxSide+1 || !strings.HasPrefix(got[flowMaxSide-1].title, "77 more") {
		t.Errorf("capped to %d, last %+v", len(got), got[len(got)-1])
	}
}

func TestChartLabels(t *testing.T) {
	for sec, want := range map[int64]string{3600: "hour", 21600: "6 hours", 86400: "day", 604800: "week", 28 * 86400: "4 weeks", 364 * 86400: "52 weeks"} {
		if got := periodName(sec); got != want {
			t.Errorf("periodName(%d) = %q, want %q", sec, got, want)
		}
	}
	for f, want := range map[float64]string{0: "0", 3050.0063459: "3050", 0.123456: "0.1235", 12345678: "12350000"} {
		if got := compactNum(f); got != want {
			t.Errorf("compactNum(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestPlotHistory(t *testing.T) {
	c := &balanceChart{GroupBy: 3600, Opening: api.NewAmount(100), Rows: []historyRow{
		{Time: 3600, Txs: 1, Received: api.NewAmount(300), Sent: api.NewAmount(0), Balance: api.NewAmount(400)},
		{Time: 7200, Txs: 1, Received: api.NewAmount(0), Sent: api.NewAmount(200), Balance: api.NewAmount(200)},
	}}
	p := plotHistory(c, 0, 4*3600, coinInfo{Shortcut: "BTC", Decimals: 0})
	// 720 wide over 4 hours; 400 (the top) at y=8, 0 at y=178.
	if want := "M0 135.5H180V8H360V93H720"; p.Line != want {
		t.Errorf("line %q, want %q", p.Line, want)
	}
	if len(p.Bars) != 2 || p.Bars[0].Class != "recv" || p.Bars[1].Class != "sent" || p.Bars[0].H != 56 || p.Bars[1].H != 37.3 {
		t.Errorf("bars %+v", p.Bars)
	}
	if p.YTicks[2].Label != "400 BTC" {
		t.Errorf("top label %q", p.YTicks[2].Label)
	}
}

// historyFake answers the chart's two questions; any other call panics
// (its api.Service is nil).
type historyFake struct {
	api.Service
	reads int
	err   error
}

func (f *historyFake) Blocks(context.Context, int, int) (*api.Blocks, error) {
	return &api.Blocks{Blocks: []api.BlockSummary{{Height: 9, Time: 100 * 86400}}}, nil
}

func (f *historyFake) BalanceHistory(_ context.Context, _ string, q api.BalanceHistoryQuery) ([]api.BalanceHistory, error) {
	f.reads++
	if q.MaxTxs != explorerChartTxs {
		return nil, errors.New("the chart read without its cap")
	}
	return nil, f.err
}

func TestChartTooLong(t *testing.T) {
	f := &historyFake{}
	e := &explorer{svc: f, log: slog.New(slog.DiscardHandler)}
	r := httptest.NewRequest("GET", "/address/x", nil)
	// The whole history of a whale: known too long from its tx count, so
	// not read at all.
	c, err := e.balanceHistory(r, "x", "/address/x", 0, api.NewAmount(5), explorerChartTxs+1)
	if err != nil || f.reads != 0 || !strings.Contains(c.Note, "2,000") || len(c.Ranges) != len(historyRanges) {
		t.Fatalf("whole history of a whale: %v, %d reads, %+v", err, f.reads, c)
	}
	// A range over the cap: the api's refusal becomes a note.
	f.err = &api.Error{Msg: "More than 2000 transactions in the range"}
	r = httptest.NewRequest("GET", "/address/x?range=day", nil)
	c, err = e.balanceHistory(r, "x", "/address/x", 0, api.NewAmount(5), explorerChartTxs+1)
	if err != nil || f.reads != 1 || !strings.Contains(c.Note, "shorter") || c.Plot != nil {
		t.Fatalf("a range over the cap: %v, %d reads, %+v", err, f.reads, c)
	}
	// Another failure fails the chart, not the page.
	f.err = errors.New("disk on fire")
	c, err = e.chartOrNote(e.balanceHistory(r, "x", "/address/x", 0, api.NewAmount(5), 10))
	if err != nil || c.Note == "" {
		t.Fatalf("a failing read: %v %+v", err, c)
	}
}
