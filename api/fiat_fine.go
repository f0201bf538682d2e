package api

import (
	"github.com/openexplorer/blockbook/db"
)

// Finer tickers (fiat/fine.go stores them): Blockbook's rule for the coin's
// rates at a time that is not a day's start (00:00 UTC) is the 5-minute
// ticker when the time lies within the 5-minute series, else the hourly
// one within the hourly series, else the daily rule (tickersAt). The finer
// tickers hold only usd; the other currencies are the usd rate times the
// currency's ratio to usd in the daily ticker of the point's day (rounded
// to the nearest day, the first stored at or after it), else in the
// current ticker, as Blockbook derives them. A ticker still without the one
// requested currency is passed over. Token rates never come from them (they
// have none): Blockbook prices tokens by the daily and current tickers.

// fineSeries are tried finest first.
var fineSeries = [...]db.FiatSeries{db.FiatFiveMinutes, db.FiatHourly}

const fineVs = "usd"

// fineTickers sets out[i] to the finer ticker of timestamps[i] where there
// is one with currency ("" any).
func fineTickers(r db.Reader, timestamps []int64, currency string, out []*db.FiatTicker) error {
	var first [len(fineSeries)]int64
	var has [len(fineSeries)]bool
	some := false
	for j, s := range fineSeries {
		f, ok, err := db.FiatSeriesFirst(r, s)
		if err != nil {
			return err
		}
		first[j], has[j] = f, ok
		some = some || ok
	}
	if !some {
		return nil
	}
	d := fineDeriver{r: r, days: map[int64]*db.FiatTicker{}}
	for i, t := range timestamps {
		if t%fiatDaySeconds == 0 {
			continue // a day's start takes the daily close
		}
		for j, s := range fineSeries {
			if !has[j] {
				continue
			}
			ft, err := db.FindFiatSeriesTicker(r, s, t, first[j])
			if err != nil {
				return err
			}
			if ft == nil {
				continue
			}
			if err := d.derive(ft); err != nil {
				return err
			}
			if ft.Has(currency) {
				out[i] = ft
				break
			}
		}
	}
	return nil
}

const fiatDaySeconds = 86400

// fineDeriver adds the other currencies to finer tickers, reading each
// day's ticker once.
type fineDeriver struct {
	r       db.Reader
	days    map[int64]*db.FiatTicker
	current *db.FiatTicker
	curRead bool
}

func (d *fineDeriver) derive(ft *db.FiatTicker) error {
	usd := ft.Rates[fineVs]
	if usd <= 0 {
		return nil
	}
	day := (ft.Time + fiatDaySeconds/2) / fiatDaySeconds * fiatDaySeconds
	ref, ok := d.days[day]
	if !ok {
		found, err := db.FindFiatTickers(d.r, []int64{day}, "")
		if err != nil {
			return err
		}
		ref = found[0]
		if ref == nil {
			if !d.curRead {
				if d.current, err = db.ReadFiatCurrent(d.r); err != nil {
					return err
				}
				d.curRead = true
			}
			ref = d.current
		}
		d.days[day] = ref
	}
	if ref == nil || ref.Rates[fineVs] <= 0 {
		return nil
	}
	refUsd := ref.Rates[fineVs]
	for c, r := range ref.Rates {
		if c != fineVs {
			ft.Rates[c] = usd * r / refUsd
		}
	}
	return nil
}
