package main

import (
	"fmt"
	"time"
)

// issueTargets are what issue 46's queries ask about on a chain: the
// busiest address (page 1 of its history), the address whose UTXO list
// is timed as the whale's (with its lower bound, see utxoBound), the
// address whose UTXO count is nearest utxoTarget, and the txs to look up.
type issueTargets struct {
	busiest             string
	utxoWhale, utxoName string
	utxoBound           func(warm int) ([]time.Duration, error)
	near                string
	nearUtxos           int
	extra               []query // after the UTXO lists (scale mode: the address with the most UTXOs)
	txName              string
	txPaths             []string
}

// issueQueries is issue 46's list of queries, whale and scale modes' alike
// (their names are what -only matches): the busiest address's page 1 with
// details=txids (1,000 per page), details=txs (1,000 and 25 per page) and
// details=txslight (50 per page), the two UTXO lists and the tx lookup.
// xpub, if set, goes after the pages (scale mode's HD account).
func issueQueries(t issueTargets, xpub []query) []query {
	w := "/api/v2/address/" + t.busiest + "?page=1"
	qs := []query{
		{Name: "address page 1 (details=txids, 1000 per page)", Paths: []string{w}},
		{Name: "address page 1 (details=txs, 1000 per page)", Paths: []string{w + "&pageSize=1000&details=txs"}},
		{Name: "address page 1 (details=txs, 25 per page)", Paths: []string{w + "&pageSize=25&details=txs"}},
		{Name: "address page 1 (details=txslight, 50 per page)", Paths: []string{w + "&pageSize=50&details=txslight"}},
	}
	return append(append(append(qs, xpub...),
		query{Name: t.utxoName, Paths: []string{"/api/v2/utxo/" + t.utxoWhale}, Bound: t.utxoBound},
		query{Name: fmt.Sprintf("utxo of an address with %d", t.nearUtxos), Paths: []string{"/api/v2/utxo/" + t.near}}),
		append(t.extra, query{Name: t.txName, Paths: t.txPaths})...)
}
