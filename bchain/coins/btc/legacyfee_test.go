package btc

import (
	"encoding/json"
	"testing"
)

// CoinsToBase is exact where a float product is not, rounds half away
// from zero, keeps the sign of "no estimate" answers and refuses what is
// not an amount or would not fit.
func TestCoinsToBase(t *testing.T) {
	for _, c := range []struct {
		in   string
		unit int64
		want int64
		ok   bool
	}{
		{"0.00001000", 1e8, 1000, true},
		{"1.23456789", 1e8, 123_456_789, true},
		{"0.000012345", 1e8, 1235, true}, // exactly 1234.5: half rounds up
		{"0.000012344", 1e8, 1234, true},
		{"-1", 1e8, -100_000_000, true},
		{"-0.000000005", 1e8, -1, true},
		{"10.00", 100, 1000, true},
		{"1e-5", 1e8, 1000, true},
		{"9999999999", 1e8, 999_999_999_900_000_000, true},
		{"10000000001", 1e8, 0, false},
		{"", 1e8, 0, false},
		{"abc", 1e8, 0, false},
	} {
		got, err := CoinsToBase(json.Number(c.in), c.unit)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("CoinsToBase(%q, %d) = %d, %v; want %d ok=%v", c.in, c.unit, got, err, c.want, c.ok)
		}
	}
}
