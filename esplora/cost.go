package esplora

import (
	"net/http"
	"strings"
)

// RequestCost weighs an Esplora request for the per-client budget (the
// listener kit's limiter), in the public port's units: a plain answer
// costs 1; a page of txs with their prevouts (an address's or a block's)
// 3; an address's UTXO set, up to MaxUtxos outputs, 3.
func RequestCost(r *http.Request) int {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/utxo"), strings.Contains(p, "/txs"):
		return 3
	}
	return 1
}
