package mesh_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/tools/meshcheck"
)

type searchAnswer struct {
	Transactions []struct {
		BlockIdentifier blockID     `json:"block_identifier"`
		Transaction     transaction `json:"transaction"`
	} `json:"transactions"`
	TotalCount int64  `json:"total_count"`
	NextOffset *int64 `json:"next_offset"`
}

// search pages through a search 7 txs at a time and returns the txids in
// the order answered.
func search(t *testing.T, f *fixture, q map[string]any) []string {
	t.Helper()
	var out []string
	offset := int64(0)
	for {
		body := map[string]any{"offset": offset, "limit": 7}
		for k, v := range q {
			body[k] = v
		}
		var a searchAnswer
		if err := f.client.Call("/search/transactions", body, &a); err != nil {
			t.Fatal(err)
		}
		for _, bt := range a.Transactions {
			ref := f.Tx(bt.Transaction.TransactionIdentifier.Hash)
			if ref == nil || bt.BlockIdentifier != (blockID{Index: int64(ref.Height), Hash: f.BlockHash(ref.Height)}) {
				t.Fatalf("search %v: tx %s in block %v", q, bt.Transaction.TransactionIdentifier.Hash, bt.BlockIdentifier)
			}
			out = append(out, bt.Transaction.TransactionIdentifier.Hash)
		}
		if a.NextOffset == nil {
			if int64(len(out)) != a.TotalCount {
				t.Fatalf("search %v: %d txs paged, total_count %d", q, len(out), a.TotalCount)
			}
			return out
		}
		if *a.NextOffset != offset+int64(len(a.Transactions)) || len(a.Transactions) != 7 {
			t.Fatalf("search %v: next_offset %d after %d+%d", q, *a.NextOffset, offset, len(a.Transactions))
		}
		offset = *a.NextOffset
	}
}

// newestFirst checks the order: heights never increase.
func newestFirst(t *testing.T, f *fixture, txids []string) {
	t.Helper()
	for i := 1; i < len(txids); i++ {
		if f.Tx(txids[i]).Height > f.Tx(txids[i-1]).Height {
			t.Errorf("tx %s (height %d) after %s (height %d)", txids[i], f.Tx(txids[i]).Height, txids[i-1], f.Tx(txids[i-1]).Height)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestSearchTransactions(t *testing.T) {
	f := newFixture(t)
	addr := f.DemoAddress
	led := f.Ledger.Addresses[addr]
	byAccount := search(t, f, map[string]any{"account_identifier": map[string]any{"address": addr}})
	if !slices.Equal(sorted(byAccount), sorted(led.Txids)) {
		t.Fatalf("account search %v, the ledger's txs %v", byAccount, led.Txids)
	}
	newestFirst(t, f, byAccount)
	if byAddress := search(t, f, map[string]any{"address": addr}); !slices.Equal(byAddress, byAccount) {
		t.Errorf("address search %v differs from the account search", byAddress)
	}

	// max_block keeps the txs up to that block.
	maxBlock := f.Tx(byAccount[len(byAccount)/2]).Height
	var want []string
	for _, id := range byAccount {
		if f.Tx(id).Height <= maxBlock {
			want = append(want, id)
		}
	}
	if got := search(t, f, map[string]any{"address": addr, "max_block": maxBlock}); !slices.Equal(got, want) {
		t.Errorf("max_block %d: %v, want %v", maxBlock, got, want)
	}

	// A coin: the tx creating it and the one spending it.
	spent := byAccount[len(byAccount)-1] // the oldest: its outputs to addr are spent by now
	var coinVout = -1
	for vout, out := range f.Tx(spent).Tx.TxOut {
		if f.Address(out.PkScript) == addr {
			if _, ok := f.SpentBy(spent, vout); ok {
				coinVout = vout
				break
			}
		}
	}
	if coinVout < 0 {
		t.Fatalf("the oldest tx of %s has no spent output to it", addr)
	}
	sp, _ := f.SpentBy(spent, coinVout)
	coin := map[string]any{"identifier": fmt.Sprintf("%s:%d", spent, coinVout)}
	if got := search(t, f, map[string]any{"coin_identifier": coin}); !slices.Equal(sorted(got), sorted([]string{spent, sp.Txid})) {
		t.Errorf("coin search %v, want %s and %s", got, spent, sp.Txid)
	}

	// Operators: and (the default) intersects, or joins.
	other := f.Block(1).Transactions[0].TxHash().String()
	txq := map[string]any{"hash": other}
	if got := search(t, f, map[string]any{"address": addr, "transaction_identifier": txq}); len(got) != 0 {
		t.Errorf("and of disjoint filters: %v", got)
	}
	if got := search(t, f, map[string]any{"address": addr, "transaction_identifier": map[string]any{"hash": spent}}); !slices.Equal(got, []string{spent}) {
		t.Errorf("and: %v, want %s", got, spent)
	}
	if got := search(t, f, map[string]any{"operator": "or", "address": addr, "transaction_identifier": txq}); !slices.Equal(sorted(got), sorted(append(slices.Clone(byAccount), other))) {
		t.Errorf("or: %d txs, want %d", len(got), len(byAccount)+1)
	}
	// Status and success: every confirmed operation succeeded.
	if got := search(t, f, map[string]any{"address": addr, "success": false}); len(got) != 0 {
		t.Errorf("success false: %v", got)
	}
	if got := search(t, f, map[string]any{"address": addr, "status": "SUCCESS"}); len(got) != len(byAccount) {
		t.Errorf("status SUCCESS: %d txs, want %d", len(got), len(byAccount))
	}
	// Type: the coinbases among a miner's txs.
	miner := f.Address(f.Block(1).Transactions[0].TxOut[0].PkScript)
	var coinbases []string
	for _, id := range f.Ledger.Addresses[miner].Txids {
		if f.Tx(id).Tx.TxIn[0].PreviousOutPoint.Index == ^uint32(0) {
			coinbases = append(coinbases, id)
		}
	}
	if got := search(t, f, map[string]any{"address": miner, "type": "COINBASE"}); !slices.Equal(sorted(got), sorted(coinbases)) || len(got) == 0 {
		t.Errorf("coinbases of %s: %d, want %d", miner, len(got), len(coinbases))
	}

	// An offset past the end is an empty page, however large.
	for _, off := range []int64{int64(len(byAccount)), 1 << 62, 1<<63 - 1} {
		var a struct {
			Transactions []any `json:"transactions"`
			TotalCount   int64 `json:"total_count"`
		}
		if err := f.client.Call("/search/transactions", map[string]any{"address": addr, "offset": off}, &a); err != nil || len(a.Transactions) != 0 || a.TotalCount != int64(len(byAccount)) {
			t.Errorf("offset %d: %d txs of %d, %v", off, len(a.Transactions), a.TotalCount, err)
		}
	}
	for name, c := range map[string]struct {
		body map[string]any
		code int
	}{
		"no filter":    {map[string]any{}, 12},
		"bad operator": {map[string]any{"operator": "xor", "address": addr}, 2},
		"bad coin":     {map[string]any{"coin_identifier": map[string]any{"identifier": "abc"}}, 2},
		"bad address":  {map[string]any{"address": "nope"}, 7},
		"bad limit":    {map[string]any{"address": addr, "limit": -1}, 2},
	} {
		err := f.client.Call("/search/transactions", c.body, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != c.code {
			t.Errorf("%s: %v, want Mesh error %d", name, err, c.code)
		}
	}
}
