package e2e

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// checkLedger requires the API to report, for every address the chain
// touched, exactly what the generator's ledger says: balances, totals, tx
// count, txid order (newest first) and the UTXO set.
func checkLedger(t *testing.T, base string, l *chaingen.Ledger) {
	t.Helper()
	if len(l.Addresses) < 50 {
		t.Fatalf("ledger has only %d addresses", len(l.Addresses))
	}
	for addr, want := range l.Addresses {
		var got api.Address
		var txids []string
		for page := 1; ; page++ {
			getJSON(t, fmt.Sprintf("%s/api/v2/address/%s?pageSize=100&page=%d", base, url.PathEscape(addr), page), 200, &got)
			confirmed := got.Txids
			if page == 1 {
				// Pending txs (e.g. put back by a reorg) come first on page 1;
				// the ledger holds the chain only.
				confirmed = confirmed[min(got.UnconfirmedTxs, len(confirmed)):]
			}
			txids = append(txids, confirmed...)
			if page >= got.TotalPages {
				break
			}
		}
		if got.Address != addr || got.Balance.String() != fmt.Sprint(want.Balance) ||
			got.TotalReceived.String() != fmt.Sprint(want.Received) || got.TotalSent.String() != fmt.Sprint(want.Sent) ||
			got.Txs != want.TxCount() {
			t.Errorf("%s: got balance %s received %s sent %s txs %d; ledger %d %d %d %d",
				addr, got.Balance, got.TotalReceived, got.TotalSent, got.Txs, want.Balance, want.Received, want.Sent, want.TxCount())
		}
		if !slices.Equal(txids, want.Txids) {
			t.Errorf("%s: txids\n got %v\nwant %v", addr, txids, want.Txids)
		}
		var utxos []api.Utxo
		getJSON(t, base+"/api/v2/utxo/"+url.PathEscape(addr)+"?confirmed=true", 200, &utxos)
		gotSet := make([]string, len(utxos))
		for i, u := range utxos {
			gotSet[i] = fmt.Sprintf("%s:%d:%s:%d:%v", u.Txid, u.Vout, u.Value, u.Height, u.Coinbase)
		}
		wantSet := make([]string, len(want.Utxos))
		for i, u := range want.Utxos {
			wantSet[i] = fmt.Sprintf("%s:%d:%d:%d:%v", u.Txid, u.Vout, u.Value, u.Height, u.Coinbase)
		}
		slices.Sort(gotSet)
		slices.Sort(wantSet)
		if !slices.Equal(gotSet, wantSet) {
			t.Errorf("%s: utxos\n got %v\nwant %v", addr, gotSet, wantSet)
		}
		if t.Failed() {
			t.FailNow() // one address's details are enough to debug
		}
	}
}

// The demo chain (every script type, address reuse, many-input and
// many-output txs, chains of unconfirmed parents) synced from btcd gives, for
// every address, what the generator knows it did.
func TestE2ELedger(t *testing.T) {
	st := startDemoStack(t, nil)
	g, inst := st.g, st.inst
	checkLedger(t, inst.base, g.Ledger())

	// A valid address the chain never touched answers zeros, not an error.
	unused, err := g.Address(chaingen.P2WPKH, 999_999)
	if err != nil {
		t.Fatal(err)
	}
	var a api.Address
	getJSON(t, inst.base+"/api/v2/address/"+unused, 200, &a)
	if a.Balance.String() != "0" || a.Txs != 0 || len(a.Txids) != 0 {
		t.Fatalf("unused address: %+v", a)
	}

	// Every tx of the ledger renders with fees equal to what the generator paid.
	l := g.Ledger()
	checked := 0
	for txid, info := range l.Txs {
		if checked >= 60 && !strings.HasPrefix(txid, "0") {
			continue // a sample plus all txids starting with 0 keeps this quick
		}
		var tx api.Tx
		getJSON(t, inst.base+"/api/v2/tx/"+txid, 200, &tx)
		if tx.BlockHeight != int64(info.Height) || tx.Fees.String() != fmt.Sprint(info.Fee) {
			t.Errorf("tx %s: height %d fees %s, ledger %d %d", txid, tx.BlockHeight, tx.Fees, info.Height, info.Fee)
		}
		checked++
	}
}
