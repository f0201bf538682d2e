package server

import (
	"fmt"
	"html/template"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/api"
)

// The explorer's template functions: amounts in coin units with the coin's
// decimals, UTC times with relative age, shortened hashes, numbers.

func (e *explorer) funcs() template.FuncMap {
	return template.FuncMap{
		"asset":     e.assets.url,
		"chainRows": chainExtraRows,
		"l1Rows":    e.l1Rows,
		"aliasOf":   aliasOf,
		"integrity": e.assets.integrity,
		"amount": func(a *api.Amount) string {
			d, _ := e.decimals()
			return formatAmount(amountInt(a), d)
		},
		"coin": func(a *api.Amount) string {
			d, unit := e.decimals()
			return withUnit(formatAmount(amountInt(a), d), unit)
		},
		"signedCoin": func(a *api.Amount) string {
			d, unit := e.decimals()
			return withUnit(formatSigned(amountInt(a), d), unit)
		},
		"delta": func(tx any) *deltaView { // a tx or a fiatTx
			v, ok := ownDelta(txOf(tx))
			if !ok {
				return nil
			}
			d, unit := e.decimals()
			return &deltaView{Neg: v.Sign() < 0, Text: withUnit(formatSigned(v, d), unit), Value: (*api.Amount)(v)}
		},
		// token renders a token amount with the token's decimals.
		"token": func(a *api.Amount, decimals int, symbol string) string {
			return withUnit(formatAmount(amountInt(a), decimals), symbol)
		},
		// amount1 renders an integer as is (token ids, ERC1155 counts).
		"amount1": func(a *api.Amount) string { return amountInt(a).String() },
		// gwei renders a wei-per-gas price in Gwei.
		"gwei":         func(a *api.Amount) string { return formatAmount(amountInt(a), 9) + " Gwei" },
		"coinbase":     func(tx any) bool { return isCoinbase(txOf(tx)) },
		"runeAmount":   runeAmount,
		"specific":     specificRows,
		"specificLine": specificLine,
		"feeRate":      formatFeeRate,
		"utc":          formatUTC,
		"iso":          func(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) },
		"age":          func(t int64) string { return formatAge(time.Now(), t) },
		"span":         func(sec any) string { return formatSpan(time.Duration(toInt64(sec)) * time.Second) },
		"short":        shortHash,
		"num":          func(v any) string { return groupDigits(toInt64(v)) },
		"bytes":        func(v any) string { return formatBytes(toInt64(v)) },
		"period":       periodName,
		"rate":         rate,
		"mul":          func(a, b any) int64 { return toInt64(a) * toInt64(b) },
		"add":          func(a, b any) int64 { return toInt64(a) + toInt64(b) },
		"sub":          func(a, b any) int64 { return toInt64(a) - toInt64(b) },
		"pagerAt": func(p *pager, label string) *pager {
			if p == nil {
				return nil
			}
			c := *p
			c.Label = label
			return &c
		},
	}
}

// decimals returns the coin's decimals and shortcut for amounts.
func (e *explorer) decimals() (int, string) {
	c := e.loadedCoin()
	return c.Decimals, c.Shortcut
}

// isCoinbase tells coinbase txs, also in the index-only form of address
// lists, which has no coinbase data but a zero input value and fee.
func isCoinbase(tx *api.Tx) bool {
	if len(tx.Vin) != 1 {
		return false
	}
	in := tx.Vin[0]
	return in.Coinbase != "" || in.Txid == "" && in.Value == nil && tx.ValueIn != nil && amountInt(tx.ValueIn).Sign() == 0
}

// deltaView is what a tx changed for the address (or account) of the page.
type deltaView struct {
	Neg   bool
	Text  string
	Value *api.Amount
}

// ownDelta sums the tx's outputs to the page's address minus its inputs
// from it (the api marks them isOwn); false when the tx has none.
func ownDelta(tx *api.Tx) (*big.Int, bool) {
	d, own := new(big.Int), false
	for i := range tx.Vin {
		if tx.Vin[i].IsOwn {
			own = true
			d.Sub(d, amountInt(tx.Vin[i].Value))
		}
	}
	for i := range tx.Vout {
		if tx.Vout[i].IsOwn {
			own = true
			d.Add(d, amountInt(tx.Vout[i].Value))
		}
	}
	return d, own
}

func amountInt(a *api.Amount) *big.Int {
	if a == nil {
		return new(big.Int)
	}
	return (*big.Int)(a)
}

// formatAmount renders base units in coin units: 150000000 with 8 decimals
// is "1.5"; trailing zeros are dropped.
func formatAmount(v *big.Int, decimals int) string {
	s := new(big.Int).Abs(v).String()
	if decimals > 0 {
		if len(s) <= decimals {
			s = strings.Repeat("0", decimals-len(s)+1) + s
		}
		s = strings.TrimRight(s[:len(s)-decimals]+"."+s[len(s)-decimals:], "0")
		s = strings.TrimSuffix(s, ".")
	}
	if v.Sign() < 0 {
		return "-" + s
	}
	return s
}

// formatSigned is formatAmount with a "+" on positive values.
func formatSigned(v *big.Int, decimals int) string {
	if v.Sign() > 0 {
		return "+" + formatAmount(v, decimals)
	}
	return formatAmount(v, decimals)
}

func withUnit(s, unit string) string {
	if unit == "" {
		return s
	}
	return s + " " + unit
}

// formatFeeRate renders a fee over a virtual size in base units per vbyte
// (sat/vB), rounded to two decimals.
func formatFeeRate(fee *api.Amount, vsize int) string {
	if vsize <= 0 {
		return ""
	}
	f, _ := new(big.Float).SetInt(amountInt(fee)).Float64()
	return strconv.FormatFloat(math.Round(f/float64(vsize)*100)/100, 'f', -1, 64) + " sat/vB"
}

func formatUTC(t int64) string {
	return time.Unix(t, 0).UTC().Format("2006-01-02 15:04:05")
}

// formatAge is how long before now t was, in the largest whole unit.
func formatAge(now time.Time, t int64) string {
	d := now.Sub(time.Unix(t, 0))
	if d < 0 {
		return "in the future"
	}
	return formatSpan(d) + " ago"
}

// formatSpan renders a duration in its largest whole unit: "3 hours".
func formatSpan(d time.Duration) string {
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name
		}
		return fmt.Sprintf("%d %ss", n, name)
	}
	switch {
	case d < time.Minute:
		return unit(int64(d/time.Second), "second")
	case d < time.Hour:
		return unit(int64(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return unit(int64(d/time.Hour), "hour")
	case d < 60*24*time.Hour:
		return unit(int64(d/(24*time.Hour)), "day")
	case d < 730*24*time.Hour:
		return unit(int64(d/(30*24*time.Hour)), "month")
	}
	return unit(int64(d/(365*24*time.Hour)), "year")
}

// shortHash keeps the first and last 8 characters of a long hash.
func shortHash(h string) string {
	if len(h) <= 20 {
		return h
	}
	return h[:8] + "…" + h[len(h)-8:]
}

// groupDigits renders 1234567 as "1,234,567".
func groupDigits(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// formatBytes renders a size: exact below 10 kB, else in kB, MB or GB.
func formatBytes(n int64) string {
	if n < 10_000 {
		return groupDigits(n) + " bytes"
	}
	f, units := float64(n)/1000, []string{"kB", "MB", "GB", "TB"}
	i := 0
	for ; f >= 1000 && i < len(units)-1; i++ {
		f /= 1000
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
}

// toInt64 converts the integer types the api uses.
func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case int64:
		return n
	case uint32:
		return int64(n)
	case uint64:
		return int64(min(n, math.MaxInt64))
	case uint:
		return int64(min(n, math.MaxInt64))
	case *uint64: // optional fields (gasUsed)
		if n != nil {
			return toInt64(*n)
		}
		return 0
	case *int64: // optional fields (etaSeconds)
		if n != nil {
			return *n
		}
		return 0
	}
	panic(fmt.Sprintf("explorer: not an integer: %T", v)) // a template bug, recovered as a 500
}
