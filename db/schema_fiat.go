package db

// fiatRates: exchange rates of the coin downloaded from a rate provider
// (fiat). Off-chain: no block connect or disconnect touches the column
// family, dumps and the byte-identity guarantee leave it out, and opening adds
// it to an index that lacks it. Part of schema.go, kept apart for size.
//
//	't' ‖ u32be(unix seconds) → rates      a ticker of that time (daily
//	                                        history: 00:00 UTC)
//	'c'                       → uv(unix seconds) ‖ rates   the current ticker
//	'h' ‖ u32be(slot)         → uv(unix seconds) ‖ rates   hourly points, 90 days
//	'f' ‖ u32be(slot)         → uv(unix seconds) ‖ rates   5-minute points, 1 day
//                                                         (fiat_fine.go)
//	'b'                       → u8(complete) ‖ uv(attempts)  the history
//	                                        bootstrap marker (fiat_bootstrap.go)
//
// rates = uv(#rates) ‖ #rates × (lb(currency) ‖ f64be(rate))
//         ‖ uv(#tokenRates) ‖ #tokenRates × (lb(token) ‖ f64be(rate))
//
// Names are sorted ascending without duplicates (so every ticker has one
// encoding), currencies are 1..maxFiatCurrencyLen bytes, tokens (Ethereum-
// type chains: the contract as lowercase 0x hex; empty elsewhere)
// 1..maxFiatTokenLen, rates finite and not negative. A token's rate is in
// units of the coin (how many coins one whole token is worth), converted
// from the provider's platformVsCurrency when it is stored.

import (
	"encoding/binary"
	"math"
	"slices"
)

const (
	fiatKindTicker  = 't'
	fiatKindCurrent = 'c'

	maxFiatCurrencyLen = 32
	maxFiatTokenLen    = 128
	// maxFiatTime bounds stored times (u32 seconds: the year 2106).
	maxFiatTime = math.MaxUint32
)

// FiatTicker is a set of exchange rates of the coin at one time: how many
// units of each currency (lowercase, as the provider names them: "usd",
// "eur", "btc") one coin is worth.
type FiatTicker struct {
	Time       int64 // unix seconds, UTC
	Rates      map[string]float64
	TokenRates map[string]float64 // Ethereum-type chains: contract → rate in coins
}

// Has reports whether the ticker has a rate for currency; "" matches any
// ticker.
func (t *FiatTicker) Has(currency string) bool {
	if currency == "" {
		return true
	}
	_, ok := t.Rates[currency]
	return ok
}

// IsOffChain reports whether the column family holds data from outside the
// chain (fiat rates, function signatures): rocksdb.Open adds it to an
// index that lacks it.
func (c CF) IsOffChain() bool { return c == CFFiatRates || c == CFFunctionSignatures }

// Mirrored reports whether the column family is covered by the
// connect/disconnect byte-identity guarantee (and by dumps): neither caches
// nor off-chain data are.
func (c CF) Mirrored() bool { return !c.IsCache() && !c.IsOffChain() }

var fiatCurrentKey = []byte{fiatKindCurrent}

// fiatTickerPrefix is the common prefix of history ticker keys.
var fiatTickerPrefix = []byte{fiatKindTicker}

func fiatTickerKey(t int64) []byte {
	e := encoder{b: []byte{fiatKindTicker}}
	e.u32be(uint32(min(max(t, 0), maxFiatTime)))
	return e.b
}

func unpackFiatTickerKey(k []byte) (int64, error) {
	d := newDecoder("fiatRates key", k)
	if p := d.bytes(1); p != nil && p[0] != fiatKindTicker {
		d.fail("unknown key kind %#x", p[0])
	}
	t := d.u32be()
	return int64(t), d.done()
}

func (e *encoder) f64be(v float64) { e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(v)) }

func (d *decoder) f64be() float64 {
	p := d.bytes(8)
	if p == nil {
		return 0
	}
	return math.Float64frombits(binary.BigEndian.Uint64(p))
}

func (e *encoder) fiatRates(m map[string]float64) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	e.uvarint(uint64(len(names)))
	for _, n := range names {
		e.lenBytes([]byte(n))
		e.f64be(m[n])
	}
}

func (d *decoder) fiatRates(maxName int) map[string]float64 {
	n := d.count(10)
	if n == 0 {
		return nil
	}
	m := make(map[string]float64, n)
	prev := ""
	for i := 0; i < n && d.e == nil; i++ {
		name := string(d.lenBytes(maxName))
		rate := d.f64be()
		switch {
		case d.e != nil:
		case name == "" || (i > 0 && name <= prev):
			d.fail("rate names not sorted, unique and non-empty at %q", name)
		case math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0:
			d.fail("rate %v of %q out of range", rate, name)
		}
		m[name], prev = rate, name
	}
	return m
}

// packFiatRates encodes a ticker's rates (the value of a history key).
func packFiatRates(t *FiatTicker) []byte {
	e := encoder{b: make([]byte, 0, 2+len(t.Rates)*16)}
	e.fiatRates(t.Rates)
	e.fiatRates(t.TokenRates)
	return e.b
}

func unpackFiatRates(b []byte) (*FiatTicker, error) {
	d := newDecoder("fiatRates", b)
	t := &FiatTicker{Rates: d.fiatRates(maxFiatCurrencyLen), TokenRates: d.fiatRates(maxFiatTokenLen)}
	return t, d.done()
}

// packFiatCurrent encodes the current ticker: its time, then its rates.
func packFiatCurrent(t *FiatTicker) []byte {
	e := encoder{b: make([]byte, 0, 8+len(t.Rates)*16)}
	e.uvarint(uint64(min(max(t.Time, 0), maxFiatTime)))
	e.fiatRates(t.Rates)
	e.fiatRates(t.TokenRates)
	return e.b
}

func unpackFiatCurrent(b []byte) (*FiatTicker, error) {
	d := newDecoder("fiatRates current", b)
	ts := d.uvarint()
	if ts > maxFiatTime {
		d.fail("time %d out of range", ts)
	}
	t := &FiatTicker{Time: int64(ts), Rates: d.fiatRates(maxFiatCurrencyLen), TokenRates: d.fiatRates(maxFiatTokenLen)}
	return t, d.done()
}
