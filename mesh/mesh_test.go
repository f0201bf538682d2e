package mesh_test

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/meshcheck"
)

type (
	blockID     = meshcheck.BlockID
	transaction = meshcheck.Transaction
)

func TestNetwork(t *testing.T) {
	f := newFixture(t)
	var list struct {
		NetworkIdentifiers []map[string]any `json:"network_identifiers"`
	}
	if err := f.client.Call("/network/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.NetworkIdentifiers) != 1 || list.NetworkIdentifiers[0]["blockchain"] != "Bitcoin" || list.NetworkIdentifiers[0]["network"] != "regtest" {
		t.Errorf("network list %v", list.NetworkIdentifiers)
	}
	var opts struct {
		Version struct {
			RosettaVersion string `json:"rosetta_version"`
		} `json:"version"`
		Allow struct {
			OperationTypes []string `json:"operation_types"`
			Errors         []struct {
				Code      int    `json:"code"`
				Message   string `json:"message"`
				Retriable bool   `json:"retriable"`
			} `json:"errors"`
			HistoricalBalanceLookup bool `json:"historical_balance_lookup"`
		} `json:"allow"`
	}
	if err := f.client.Call("/network/options", nil, &opts); err != nil {
		t.Fatal(err)
	}
	if opts.Version.RosettaVersion != "1.5.1" || !opts.Allow.HistoricalBalanceLookup || len(opts.Allow.Errors) < 10 {
		t.Errorf("options %+v", opts)
	}
	codes, msgs := map[int]bool{}, map[string]bool{}
	for _, e := range opts.Allow.Errors {
		if codes[e.Code] || msgs[e.Message] {
			t.Errorf("error %d %q is not unique", e.Code, e.Message)
		}
		codes[e.Code], msgs[e.Message] = true, true
	}
	var st struct {
		Current   blockID `json:"current_block_identifier"`
		Timestamp int64   `json:"current_block_timestamp"`
		Genesis   blockID `json:"genesis_block_identifier"`
		Oldest    blockID `json:"oldest_block_identifier"`
	}
	if err := f.client.Call("/network/status", nil, &st); err != nil {
		t.Fatal(err)
	}
	tip := f.TipHeight()
	if st.Current != (blockID{Index: int64(tip), Hash: f.BlockHash(tip)}) || st.Genesis != (blockID{Index: 0, Hash: f.BlockHash(0)}) || st.Oldest != st.Genesis {
		t.Errorf("status %+v, want tip %d %s", st, tip, f.BlockHash(tip))
	}
	if want := f.Block(tip).Header.Timestamp.UnixMilli(); st.Timestamp != want {
		t.Errorf("tip timestamp %d, want %d", st.Timestamp, want)
	}
}

// TestBlockAndTx reads blocks by index, hash and both, and every tx of a
// block through /block/transaction, against the raw chain.
func TestBlockAndTx(t *testing.T) {
	f := newFixture(t)
	tip := f.TipHeight()
	for _, h := range []int{0, 1, tip / 2, tip} {
		hash := f.BlockHash(h)
		var byIndex, byHash, byBoth, byTip struct {
			Block struct {
				BlockIdentifier blockID       `json:"block_identifier"`
				Parent          blockID       `json:"parent_block_identifier"`
				Timestamp       int64         `json:"timestamp"`
				Transactions    []transaction `json:"transactions"`
			} `json:"block"`
		}
		for _, c := range []struct {
			id  map[string]any
			out any
		}{
			{map[string]any{"index": h}, &byIndex}, {map[string]any{"hash": strings.ToUpper(hash)}, &byHash},
			{map[string]any{"index": h, "hash": hash}, &byBoth},
		} {
			if err := f.client.Call("/block", map[string]any{"block_identifier": c.id}, c.out); err != nil {
				t.Fatal(err)
			}
		}
		b := byIndex.Block
		if b.BlockIdentifier != (blockID{Index: int64(h), Hash: hash}) || !reflect.DeepEqual(byHash, byIndex) || !reflect.DeepEqual(byBoth, byIndex) {
			t.Errorf("block %d: by index %v, by hash %v, by both %v", h, b.BlockIdentifier, byHash.Block.BlockIdentifier, byBoth.Block.BlockIdentifier)
		}
		wantParent := blockID{Index: int64(h), Hash: hash}
		if h > 0 {
			wantParent = blockID{Index: int64(h - 1), Hash: f.BlockHash(h - 1)}
		}
		raw := f.Block(h)
		if b.Parent != wantParent || b.Timestamp != raw.Header.Timestamp.UnixMilli() || len(b.Transactions) != len(raw.Transactions) {
			t.Errorf("block %d: parent %v, time %d, %d txs; want %v, %d, %d", h, b.Parent, b.Timestamp, len(b.Transactions),
				wantParent, raw.Header.Timestamp.UnixMilli(), len(raw.Transactions))
		}
		for i, tx := range b.Transactions {
			if tx.TransactionIdentifier.Hash != raw.Transactions[i].TxHash().String() {
				t.Errorf("block %d tx %d: %s", h, i, tx.TransactionIdentifier.Hash)
			}
			checkOps(t, tx, i == 0)
			var one struct {
				Transaction transaction `json:"transaction"`
			}
			err := f.client.Call("/block/transaction", map[string]any{"block_identifier": b.BlockIdentifier,
				"transaction_identifier": tx.TransactionIdentifier}, &one)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(one.Transaction, tx) {
				t.Errorf("block %d tx %d: /block/transaction differs from /block", h, i)
			}
		}
		if h == tip {
			if err := f.client.Call("/block", map[string]any{"block_identifier": map[string]any{}}, &byTip); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(byTip, byIndex) {
				t.Error("an empty block identifier is not the tip")
			}
		}
	}
}

// checkOps checks a confirmed tx's operations: consecutive indexes, all
// successful, the coinbase first in a coinbase tx, inputs spent with
// negative amounts before outputs created with positive ones.
func checkOps(t *testing.T, tx transaction, coinbase bool) {
	t.Helper()
	outputs := false
	for i, op := range tx.Operations {
		if op.OperationIdentifier.Index != int64(i) || op.Status != "SUCCESS" {
			t.Errorf("tx %s op %d: index %d status %q", tx.TransactionIdentifier.Hash, i, op.OperationIdentifier.Index, op.Status)
		}
		switch op.Type {
		case "COINBASE":
			if i != 0 || !coinbase || op.Amount != nil || op.Account != nil {
				t.Errorf("tx %s: coinbase operation %d", tx.TransactionIdentifier.Hash, i)
			}
		case "INPUT":
			if outputs || op.CoinChange == nil || op.CoinChange.CoinAction != "coin_spent" || !strings.HasPrefix(op.Amount.Value, "-") {
				t.Errorf("tx %s: input operation %d %+v", tx.TransactionIdentifier.Hash, i, op)
			}
		case "OUTPUT":
			outputs = true
			if op.CoinChange == nil || op.CoinChange.CoinAction != "coin_created" || strings.HasPrefix(op.Amount.Value, "-") ||
				!strings.HasPrefix(op.CoinChange.CoinIdentifier.Identifier, tx.TransactionIdentifier.Hash+":") {
				t.Errorf("tx %s: output operation %d %+v", tx.TransactionIdentifier.Hash, i, op)
			}
		default:
			t.Errorf("tx %s: operation type %q", tx.TransactionIdentifier.Hash, op.Type)
		}
	}
}

// TestMempoolAndCoins reads the pending txs and the coins of the address
// a pending tx pays, with and without the mempool.
func TestMempoolAndCoins(t *testing.T) {
	f := newFixture(t)
	var mp struct {
		TransactionIdentifiers []struct {
			Hash string `json:"hash"`
		} `json:"transaction_identifiers"`
	}
	if err := f.client.Call("/mempool", nil, &mp); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, id := range mp.TransactionIdentifiers {
		got = append(got, id.Hash)
	}
	for _, tx := range f.Pending {
		want = append(want, tx.TxHash().String())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("mempool %v, want %v", got, want)
	}
	payment := f.PendingPayment.TxHash().String()
	var one struct {
		Transaction transaction `json:"transaction"`
	}
	if err := f.client.Call("/mempool/transaction", map[string]any{"transaction_identifier": map[string]any{"hash": payment}}, &one); err != nil {
		t.Fatal(err)
	}
	paid := false
	for _, op := range one.Transaction.Operations {
		if op.Status != "" {
			t.Errorf("pending operation with status %q", op.Status)
		}
		if op.Type == "OUTPUT" && op.Account.Address == f.DemoAddress && op.Amount.Value == fmt.Sprint(f.PendingPaymentValue) {
			paid = true
		}
	}
	if !paid {
		t.Errorf("pending payment's operations %+v do not pay %s %d", one.Transaction.Operations, f.DemoAddress, f.PendingPaymentValue)
	}
	coins := func(withMempool bool) []string {
		var c struct {
			BlockIdentifier blockID `json:"block_identifier"`
			Coins           []struct {
				CoinIdentifier struct {
					Identifier string `json:"identifier"`
				} `json:"coin_identifier"`
			} `json:"coins"`
		}
		if err := f.client.Call("/account/coins", map[string]any{"account_identifier": map[string]any{"address": f.DemoAddress},
			"include_mempool": withMempool}, &c); err != nil {
			t.Fatal(err)
		}
		if c.BlockIdentifier.Index != int64(f.TipHeight()) {
			t.Errorf("coins at %v", c.BlockIdentifier)
		}
		var out []string
		for _, x := range c.Coins {
			out = append(out, x.CoinIdentifier.Identifier)
		}
		slices.Sort(out)
		return out
	}
	var confirmed []string
	for _, u := range f.Ledger.Addresses[f.DemoAddress].Utxos {
		confirmed = append(confirmed, fmt.Sprintf("%s:%d", u.Txid, u.Vout))
	}
	slices.Sort(confirmed)
	if got := coins(false); !slices.Equal(got, confirmed) {
		t.Errorf("confirmed coins %v, want %v", got, confirmed)
	}
	if got := coins(true); !slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, payment+":") }) {
		t.Errorf("coins with the mempool %v lack the pending payment %s", got, payment)
	}
}

// TestBadInput: every malformed or unknown request gets the Mesh error
// with its stable code, HTTP 500 as the specification requires.
func TestBadInput(t *testing.T) {
	f := newFixture(t)
	tip := f.TipHeight()
	confirmedTx := f.Block(1).Transactions[0].TxHash().String()
	acct := map[string]any{"address": f.DemoAddress}
	for name, c := range map[string]struct {
		path string
		body map[string]any
		code int
	}{
		"unknown network":       {"/network/status", map[string]any{"network_identifier": map[string]any{"blockchain": "Bitcoin", "network": "mainnet"}}, 1},
		"sub-network":           {"/block", map[string]any{"network_identifier": map[string]any{"blockchain": "Bitcoin", "network": "regtest", "sub_network_identifier": map[string]any{"network": "x"}}, "block_identifier": map[string]any{}}, 1},
		"no network":            {"/mempool", map[string]any{"network_identifier": nil}, 2},
		"unknown field":         {"/block", map[string]any{"block_identifier": map[string]any{"height": 1}}, 2},
		"wrong type":            {"/block", map[string]any{"block_identifier": map[string]any{"index": "1"}}, 2},
		"no block identifier":   {"/block", map[string]any{}, 2},
		"negative index":        {"/block", map[string]any{"block_identifier": map[string]any{"index": -1}}, 3},
		"bad hash":              {"/block", map[string]any{"block_identifier": map[string]any{"hash": "zz"}}, 3},
		"index past the tip":    {"/block", map[string]any{"block_identifier": map[string]any{"index": tip + 1}}, 4},
		"unknown hash":          {"/block", map[string]any{"block_identifier": map[string]any{"hash": strings.Repeat("ab", 32)}}, 4},
		"index and hash differ": {"/block", map[string]any{"block_identifier": map[string]any{"index": 1, "hash": f.BlockHash(2)}}, 3},
		"bad txid":              {"/mempool/transaction", map[string]any{"transaction_identifier": map[string]any{"hash": "12"}}, 5},
		"confirmed not pending": {"/mempool/transaction", map[string]any{"transaction_identifier": map[string]any{"hash": confirmedTx}}, 6},
		"tx in another block":   {"/block/transaction", map[string]any{"block_identifier": map[string]any{"index": 2, "hash": f.BlockHash(2)}, "transaction_identifier": map[string]any{"hash": confirmedTx}}, 6},
		"bad address":           {"/account/balance", map[string]any{"account_identifier": map[string]any{"address": "nope"}}, 7},
		"bad script account":    {"/account/balance", map[string]any{"account_identifier": map[string]any{"address": "script:zz"}}, 7},
		"unspendable":           {"/account/balance", map[string]any{"account_identifier": map[string]any{"address": "unspendable"}}, 7},
		"sub-account":           {"/account/balance", map[string]any{"account_identifier": map[string]any{"address": f.DemoAddress, "sub_account": map[string]any{"address": "x"}}}, 7},
		"balance past the tip":  {"/account/balance", map[string]any{"account_identifier": acct, "block_identifier": map[string]any{"index": tip + 5}}, 4},
		"other currency":        {"/account/balance", map[string]any{"account_identifier": acct, "currencies": []any{map[string]any{"symbol": "ETH", "decimals": 18}}}, 8},
		"coins without flag":    {"/account/coins", map[string]any{"account_identifier": acct}, 2},
		"unknown call method":   {"/call", map[string]any{"method": "x", "parameters": map[string]any{}}, 19},
		"negative event offset": {"/events/blocks", map[string]any{"offset": -1}, 2},
		"negative event limit":  {"/events/blocks", map[string]any{"limit": -1}, 2},
		"event offset string":   {"/events/blocks", map[string]any{"offset": "5"}, 2},
	} {
		err := f.client.Call(c.path, c.body, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != c.code || ae.Status != http.StatusInternalServerError {
			t.Errorf("%s: %v, want Mesh error %d with HTTP 500", name, err, c.code)
		}
	}
	// Bodies that are not a JSON object at all, and the wrong method.
	for _, body := range []string{"", "{", "[]", `{"network_identifier":{}} {}`, strings.Repeat(" ", 70<<10) + "{}"} {
		code, answer, _ := f.raw(http.MethodPost, "/network/list", []byte(body))
		if err := f.client.Checker.Check("/network/list", code, answer); err != nil || code != http.StatusInternalServerError ||
			!strings.Contains(string(answer), `"code":2`) {
			t.Errorf("body %.20q: %d %s (%v)", body, code, answer, err)
		}
	}
	if code, _, _ := f.raw(http.MethodGet, "/network/list", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d", code)
	}
	if code, _, _ := f.raw(http.MethodPost, "/nosuch", []byte("{}")); code != http.StatusNotFound {
		t.Errorf("an unknown endpoint answered %d", code)
	}
}
