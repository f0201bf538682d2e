package db

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"

	"github.com/openexplorer/blockbook/bchain"
)

// Every decoder of schema.go has a fuzz target with the same two
// properties: it never panics, and whatever it accepts re-encodes to exactly
// the input bytes (encodings are canonical, so a corrupt record cannot pass
// as a different valid one). Rejections must be ErrCorrupt.

func checkCanonical(t *testing.T, in []byte, err error, repack func() []byte) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error is not ErrCorrupt: %v", err)
		}
		return
	}
	if out := repack(); !bytes.Equal(out, in) {
		t.Fatalf("decoded %x, re-encoded %x", in, out)
	}
}

func sampleTxAddresses() *TxAddresses {
	return &TxAddresses{Height: 700000, Index: 1234, Coinbase: false,
		Prevouts: []Prevout{{Height: 699990, Index: 7, Vout: 1}, {Height: 700000, Index: 1233, Vout: 300}},
		Outputs:  []TxAddr{{Desc: []byte{0x51}, Value: 1}, {Desc: []byte{}, Value: 0}}}
}

func FuzzUnpackTip(f *testing.F) {
	f.Add(packTip(Tip{Height: 5, Hash: bchain.Hash{1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackTip(b)
		checkCanonical(t, b, err, func() []byte { return packTip(v) })
	})
}

func FuzzUnpackBlockMeta(f *testing.F) {
	f.Add(packBlockMeta(&BlockMeta{Hash: bchain.Hash{2}, Time: 1700000000, TxCount: 3000, Size: 1 << 20}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackBlockMeta(b)
		checkCanonical(t, b, err, func() []byte { return packBlockMeta(v) })
	})
}

func FuzzUnpackHeightKey(f *testing.F) {
	f.Add(heightKey(123))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackHeightKey(b)
		checkCanonical(t, b, err, func() []byte { return heightKey(v) })
	})
}

func FuzzUnpackAddressesKey(f *testing.F) {
	f.Add(addressesKey([]byte{0x76, 0xa9, 0x14}, 800000))
	f.Fuzz(func(t *testing.T, b []byte) {
		desc, h, err := unpackAddressesKey(b)
		checkCanonical(t, b, err, func() []byte { return addressesKey(desc, h) })
	})
}

func FuzzUnpackAddrTxs(f *testing.F) {
	f.Add(packAddrTxs([]AddrTx{{Index: 300, Indexes: []int32{0, ^int32(2), 7}}, {Index: 0, Indexes: []int32{^int32(0)}}}))
	// Txs must come newest first, one entry each: not canonical otherwise.
	f.Add(packAddrTxs([]AddrTx{{Index: 3, Indexes: []int32{0}}, {Index: 3, Indexes: []int32{1}}}))
	f.Add(packAddrTxs([]AddrTx{{Index: 1, Indexes: []int32{0}}, {Index: 2, Indexes: []int32{1}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackAddrTxs(b)
		checkCanonical(t, b, err, func() []byte { return packAddrTxs(v) })
	})
}

func FuzzUnpackAddrBalance(f *testing.F) {
	f.Add(packAddrBalance(&AddrBalance{Txs: 10, Sent: 5000, Balance: 100, Utxos: 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackAddrBalance(b)
		checkCanonical(t, b, err, func() []byte { return packAddrBalance(v) })
	})
}

func FuzzUnpackUtxo(f *testing.F) {
	u := &Utxo{Height: 9, Txid: bchain.Hash{5}, Vout: 3, Value: 99, Coinbase: true}
	f.Add(utxoKey([]byte{0x00, 0x14}, u), packUtxoValue(u))
	f.Fuzz(func(t *testing.T, key, val []byte) {
		var v Utxo
		desc, err := unpackUtxo(key, val, &v)
		checkCanonical(t, append(append([]byte{}, key...), val...), err, func() []byte {
			return append(utxoKey(desc, &v), packUtxoValue(&v)...)
		})
	})
}

func FuzzUnpackTxAddresses(f *testing.F) {
	f.Add(packTxAddresses(sampleTxAddresses()))
	f.Add(packTxAddresses(&TxAddresses{Height: 1, Coinbase: true, Prevouts: []Prevout{{}}, Outputs: []TxAddr{{Desc: []byte{1}, Value: 50e8}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackTxAddresses(b)
		checkCanonical(t, b, err, func() []byte { return packTxAddresses(v) })
	})
}

func FuzzUnpackSpend(f *testing.F) {
	f.Add(spendKey(6, 1, 1), packSpend(&Spend{Index: 7, Vin: 2, Height: 3}))
	f.Add(spendKey(800000, 3000, 200), packSpend(&Spend{Index: 129, Vin: 300, Height: 800001}))
	f.Fuzz(func(t *testing.T, key, val []byte) {
		h, i, vout, err := unpackSpendKey(key)
		checkCanonical(t, key, err, func() []byte { return spendKey(h, i, vout) })
		s, err := unpackSpend(val)
		checkCanonical(t, val, err, func() []byte { return packSpend(s) })
	})
}

func FuzzUnpackBlockUndo(f *testing.F) {
	f.Add(packBlockUndo(BlockUndo{{}, {Prevouts: []Prevout{{Vout: 4, Height: 2, Index: 0, Coinbase: true}, {Vout: 200, Height: 700000, Index: 1500}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackBlockUndo(b)
		checkCanonical(t, b, err, func() []byte { return packBlockUndo(v) })
	})
}

// Round trips of typical values, as a quick non-fuzz check.
func TestSchemaRoundTrips(t *testing.T) {
	ta := sampleTxAddresses()
	got, err := unpackTxAddresses(packTxAddresses(ta))
	if err != nil || got.Height != ta.Height || !slices.Equal(got.Prevouts, ta.Prevouts) || len(got.Outputs) != 2 || !bytes.Equal(got.Outputs[0].Desc, ta.Outputs[0].Desc) {
		t.Fatalf("txAddresses round trip: %+v %v", got, err)
	}
	later := *ta
	later.Prevouts = []Prevout{{Height: ta.Height + 1}}
	if _, err := unpackTxAddresses(packTxAddresses(&later)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("input spending a later block accepted: %v", err)
	}
	if _, err := unpackTxAddresses(append(packTxAddresses(ta), 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte accepted: %v", err)
	}
	if _, err := unpackAddrBalance([]byte{0x80, 0x00, 0, 0, 0}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("non-minimal varint accepted: %v", err)
	}
	// A count claiming more items than bytes remain must not allocate.
	if _, err := unpackBlockUndo([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge count accepted: %v", err)
	}
	for _, bad := range [][]byte{nil, {0}, {1}, {0xfd, 0x01, 0x00, 0xff}, {9, 0xff}} {
		if _, err := unpackBlockFilter(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("filter %x accepted: %v", bad, err)
		}
	}
}

func FuzzUnpackFilterParams(f *testing.F) {
	f.Add(packFilterParams(FilterParams{P: 20, Scripts: FilterScriptsTaprootNoOrdinals, ZeroedKey: true}))
	f.Add(packFilterParams(FilterParams{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackFilterParams(b)
		checkCanonical(t, b, err, func() []byte { return packFilterParams(v) })
	})
}

func FuzzUnpackBlockFilter(f *testing.F) {
	fb := NewFilterBuilder(FilterParams{P: 20, Scripts: FilterScriptsAll}, bchain.Hash{7})
	fb.Add(&bchain.Tx{}, []byte{0x51, 0x20, 1}, []byte{0x00, 0x14, 2})
	valid, err := fb.Filter()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte{0xfd, 0x01, 0x00, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := unpackBlockFilter(b)
		// The value is served as stored: accepted bytes re-encode to
		// themselves; what matters is that N was read canonically.
		checkCanonical(t, b, err, func() []byte { return b })
		if err == nil {
			gf, gerr := gcs.FromNBytes(20, 1<<20, b)
			if gerr != nil || uint64(gf.N()) != n {
				t.Fatalf("accepted %x: N %d, gcs: %v", b, n, gerr)
			}
		}
	})
}

func sampleFiatTicker() *FiatTicker {
	return &FiatTicker{Time: 1700006400, Rates: map[string]float64{"usd": 43210.5, "eur": 39876.25, "btc": 1, "vef": 0}}
}

func FuzzUnpackFiatTickerKey(f *testing.F) {
	f.Add(fiatTickerKey(1700006400))
	f.Add([]byte("c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := unpackFiatTickerKey(b)
		checkCanonical(t, b, err, func() []byte { return fiatTickerKey(ts) })
	})
}

func FuzzUnpackFiatRates(f *testing.F) {
	f.Add(packFiatRates(sampleFiatTicker()))
	f.Add(packFiatRates(&FiatTicker{Rates: map[string]float64{"usd": 1}, TokenRates: map[string]float64{"0xdac17f958d2ee523a2206206994597c13d831ec7": 0.00002}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackFiatRates(b)
		checkCanonical(t, b, err, func() []byte { return packFiatRates(v) })
	})
}

func FuzzUnpackFiatCurrent(f *testing.F) {
	f.Add(packFiatCurrent(sampleFiatTicker()))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackFiatCurrent(b)
		checkCanonical(t, b, err, func() []byte { return packFiatCurrent(v) })
	})
}

// Fiat tickers round-trip, and the decoder refuses what would make two
// encodings of one ticker or a rate no provider sends.
func TestFiatSchemaRoundTrip(t *testing.T) {
	ft := sampleFiatTicker()
	got, err := unpackFiatCurrent(packFiatCurrent(ft))
	if err != nil || got.Time != ft.Time || len(got.Rates) != 4 || got.Rates["usd"] != 43210.5 || got.TokenRates != nil {
		t.Fatalf("current round trip: %+v %v", got, err)
	}
	item := func(name string, rate float64) []byte {
		e := encoder{}
		e.lenBytes([]byte(name))
		e.f64be(rate)
		return e.b
	}
	rates := func(items ...[]byte) []byte {
		b := []byte{byte(len(items))}
		for _, it := range items {
			b = append(b, it...)
		}
		return append(b, 0) // no token rates
	}
	for name, bad := range map[string][]byte{
		"unsorted":  rates(item("usd", 1), item("eur", 1)),
		"duplicate": rates(item("usd", 1), item("usd", 2)),
		"empty":     rates(item("", 1)),
		"negative":  rates(item("usd", -1)),
		"NaN":       rates(item("usd", math.NaN())),
		"infinite":  rates(item("usd", math.Inf(1))),
		"too long":  rates(item(strings.Repeat("x", maxFiatCurrencyLen+1), 1)),
		"truncated": rates(item("usd", 1))[:8],
	} {
		if _, err := unpackFiatRates(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s rates accepted: %v", name, err)
		}
	}
	if _, err := unpackFiatTickerKey([]byte{'x', 0, 0, 0, 1}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("unknown key kind accepted: %v", err)
	}
}
