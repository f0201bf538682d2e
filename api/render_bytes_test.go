package api

import (
	"encoding/hex"
	"math"
	"math/big"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// The one-allocation renderings of amounts, scripts and hashes write the
// bytes the library functions write (answers must not change).
func TestRenderingsMatchTheLibrary(t *testing.T) {
	amounts := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(546),
		new(big.Int).SetUint64(math.MaxUint64), new(big.Int).Lsh(big.NewInt(1), 64), new(big.Int).Lsh(big.NewInt(-3), 70)}
	for _, b := range amounts {
		got, err := (*Amount)(b).MarshalJSON()
		if want := `"` + b.String() + `"`; err != nil || string(got) != want {
			t.Errorf("amount %s: %s %v, want %s", b, got, err, want)
		}
	}
	if got, _ := (*Amount)(nil).MarshalJSON(); string(got) != `"0"` {
		t.Errorf("nil amount: %s", got)
	}
	script := make([]byte, 300)
	for i := range script {
		script[i] = byte(i * 7)
	}
	for n := range len(script) {
		if got, want := hexString(script[:n]), hex.EncodeToString(script[:n]); got != want {
			t.Fatalf("%d bytes: %s, want %s", n, got, want)
		}
	}
	h := bchain.Hash(script[:32])
	if got, want := h.String(), hex.EncodeToString(h[:]); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}

// appendHashStrings writes what Hash.String writes, after what dst held.
func TestAppendHashStrings(t *testing.T) {
	hs := []bchain.Hash{{1, 2, 3}, {0xff, 0xee}, {}}
	got := appendHashStrings([]string{"pending"}, hs)
	if len(got) != 1+len(hs) || got[0] != "pending" {
		t.Fatalf("%v", got)
	}
	for i, h := range hs {
		if got[1+i] != h.String() {
			t.Errorf("hash %d: %s, want %s", i, got[1+i], h)
		}
	}
	if got := appendHashStrings(nil, nil); got != nil {
		t.Errorf("no hashes: %v, want nil", got)
	}
}
