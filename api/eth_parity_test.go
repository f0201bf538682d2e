package api

import (
	"math/big"
	"net/url"
	"testing"
)

// confirmedNonce is read as Blockbook reads it (strconv.ParseBool).
func TestParseAddressQueryConfirmedNonce(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "1": true, "T": true, "false": false, "yes": false, "": false} {
		if got := ParseAddressQuery(url.Values{"confirmedNonce": {v}}).ConfirmedNonce; got != want {
			t.Errorf("confirmedNonce=%q: %v, want %v", v, got, want)
		}
	}
}

// Zero amounts are left out (unconfirmedSending/Receiving), others kept.
func TestAmountOrNil(t *testing.T) {
	if amountOrNil(nil) != nil || amountOrNil(new(big.Int)) != nil {
		t.Fatal("zero amount not left out")
	}
	if a := amountOrNil(big.NewInt(-7)); a == nil || a.String() != "-7" {
		t.Fatalf("amountOrNil(-7) = %v", a)
	}
}
