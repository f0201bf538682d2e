package server

import (
	"bytes"
	"encoding/hex"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// restCase is one request: a 200 answer checked by ok, or a 400 whose
// JSON error starts with errPrefix.
type restCase struct {
	method, path, body string
	ok                 func(t *testing.T, body []byte)
	errPrefix          string
}

// txHex serializes a tx with its witness.
func txHex(t *testing.T, tx *wire.MsgTx) string {
	t.Helper()
	var b bytes.Buffer
	if err := tx.Serialize(&b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b.Bytes())
}

// amountIs compares a wire amount with a ledger value.
func amountIs(a *api.Amount, v int64) bool { return a.String() == strconv.FormatInt(v, 10) }

// One answer per route family, and user mistakes as 400 with a JSON body;
// nothing is ever 500.
func TestRESTRoutesOnFixture(t *testing.T) {
	s := newServed(t)
	cases := append(append(restChainCases(s.f), restAccountCases(s.f)...), restOtherCases(t, s.f)...)
	for _, tc := range cases {
		method := tc.method
		if method == "" {
			method = "GET"
		}
		code, ctype, body := s.do(t, method, tc.path, tc.body)
		if ctype != "application/json; charset=utf-8" {
			t.Errorf("%s %s: content type %q", method, tc.path, ctype)
		}
		if tc.ok != nil {
			if code != 200 {
				t.Errorf("%s %s: %d %s", method, tc.path, code, body)
				continue
			}
			tc.ok(t, body)
			continue
		}
		msg := decode[errorBody](t, tc.path, body).Error
		if code != 400 || !strings.HasPrefix(msg, tc.errPrefix) {
			t.Errorf("%s %s: %d %q, want 400 %q", method, tc.path, code, msg, tc.errPrefix)
		}
	}
}

// restChainCases: status, blocks and txs.
func restChainCases(f *apitest.Fixture) []restCase {
	tip := f.TipHeight()
	txid := f.Block(112).Transactions[1].TxHash().String()
	unknown := strings.Repeat("ab", 32)
	return []restCase{
		{path: "/api/v2", ok: func(t *testing.T, b []byte) {
			st := decode[api.SystemInfo](t, "status", b)
			if st.Blockbook.BestHeight != uint32(tip) || st.Blockbook.MempoolSize != len(f.Pending) || st.Backend.Chain != "regtest" {
				t.Errorf("status %s", b)
			}
		}},
		{path: "/api/v2/block-index/57", ok: func(t *testing.T, b []byte) {
			if decode[api.BlockIndex](t, "block-index", b).BlockHash != f.BlockHash(57) {
				t.Errorf("block-index %s", b)
			}
		}},
		// Blockbook's two exceptions to "an error is a 400": beyond the tip
		// is an empty hash, an empty height the tip's hash.
		{path: "/api/v2/block-index/" + strconv.Itoa(tip+1), ok: func(t *testing.T, b []byte) {
			if string(b) != "{\"blockHash\":\"\"}\n" {
				t.Errorf("block-index beyond the tip: %s", b)
			}
		}},
		{path: "/api/v2/block-index/99999999999", ok: func(t *testing.T, b []byte) {
			if decode[api.BlockIndex](t, "block-index", b).BlockHash != "" {
				t.Errorf("block-index beyond uint32: %s", b)
			}
		}},
		{path: "/api/v2/block-index/", ok: func(t *testing.T, b []byte) {
			if decode[api.BlockIndex](t, "block-index", b).BlockHash != f.BlockHash(tip) {
				t.Errorf("block-index of the tip: %s", b)
			}
		}},
		{path: "/api/v2/tx/", errPrefix: "Missing txid"},
		{path: "/api/v2/address/", errPrefix: "Missing address"},
		{path: "/api/v2/estimatefee/", errPrefix: "Missing parameter 'number of blocks'"},
		{path: "/api/v2/block/", errPrefix: "Block not found"},
		{path: "/api/v2/block-index/x", errPrefix: "Invalid block height"},
		{path: "/api/v2/block/112?page=2", ok: func(t *testing.T, b []byte) {
			blk := decode[api.Block](t, "block", b)
			if blk.Hash != f.BlockHash(112) || blk.TxCount != len(f.Block(112).Transactions) || len(blk.Txs) != blk.TxCount || blk.Page != 1 {
				t.Errorf("block %s", b)
			}
		}},
		{path: "/api/v2/block/" + f.BlockHash(tip), ok: func(t *testing.T, b []byte) {
			if blk := decode[api.Block](t, "block", b); blk.Height != uint32(tip) || blk.Confirmations != 1 {
				t.Errorf("tip block %s", b)
			}
		}},
		{path: "/api/v2/block/" + strconv.Itoa(tip+1), errPrefix: "Block not found"},
		{path: "/api/v2/block/zzz", errPrefix: "Invalid block height or hash"},
		{path: "/api/v2/rawblock/3", ok: func(t *testing.T, b []byte) {
			if decode[api.BlockRaw](t, "rawblock", b).Hex != hex.EncodeToString(f.Raw[3]) {
				t.Errorf("rawblock %.80s", b)
			}
		}},
		{path: "/api/v2/tx/" + txid, ok: func(t *testing.T, b []byte) {
			tx := decode[api.Tx](t, "tx", b)
			if tx.Txid != txid || tx.BlockHeight != 112 || !amountIs(tx.Fees, f.Ledger.Txs[txid].Fee) {
				t.Errorf("tx %.200s", b)
			}
		}},
		{path: "/api/v2/tx/" + unknown, errPrefix: "Transaction '" + unknown + "' not found"},
		{path: "/api/v2/tx/xyz", errPrefix: "Invalid txid"},
		{path: "/api/v2/tx-specific/" + txid, ok: func(t *testing.T, b []byte) {
			if decode[map[string]any](t, "tx-specific", b)["txid"] != txid {
				t.Errorf("tx-specific %.200s", b)
			}
		}},
		{path: "/api/v2/rawtx/" + txid, ok: func(t *testing.T, b []byte) {
			if raw := decode[string](t, "rawtx", b); !strings.HasPrefix(raw, "02000000") {
				t.Errorf("rawtx %.80s", b)
			}
		}},
	}
}

// restAccountCases: addresses, accounts, UTXOs and balance histories.
func restAccountCases(f *apitest.Fixture) []restCase {
	demo := f.Ledger.Addresses[f.DemoAddress]
	acct := f.AccountLedgers[2]
	desc := f.Accounts[2].Descriptor(true)
	return []restCase{
		{path: "/api/v2/address/" + f.DemoAddress + "?details=txids&pageSize=1&page=2", ok: func(t *testing.T, b []byte) {
			a := decode[api.Address](t, "address", b)
			if !amountIs(a.Balance, demo.Balance) || a.Txs != demo.TxCount() || a.UnconfirmedTxs != 1 ||
				!slices.Equal(a.Txids, demo.Txids[1:2]) || a.Page != 2 || a.ItemsOnPage != 1 {
				t.Errorf("address %s", b)
			}
		}},
		{path: "/api/v2/address/" + f.UnusedAddress + "?details=basic&pageSize=garbage", ok: func(t *testing.T, b []byte) {
			a := decode[api.Address](t, "address", b)
			if a.Txs != 0 || a.UnconfirmedTxs != 1 || !amountIs(a.UnconfirmedBalance, f.PendingChild.TxOut[0].Value) {
				t.Errorf("unused address %s", b)
			}
		}},
		{path: "/api/v2/address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", errPrefix: "Invalid address"},
		{path: "/api/v2/xpub/" + url.PathEscape(desc) + "?details=tokens&tokens=used", ok: func(t *testing.T, b []byte) {
			a := decode[api.Address](t, "xpub", b)
			if !amountIs(a.Balance, acct.Balance) || a.UsedTokens != acct.Used() || len(a.Tokens) != acct.Used() || a.Tokens[0].Path == "" {
				t.Errorf("xpub %.300s", b)
			}
		}},
		// Descriptors hold '/': the unescaped form reaches the handler whole.
		{path: "/api/v2/xpub/" + f.Accounts[2].Descriptor(false) + "?details=basic", ok: func(t *testing.T, b []byte) {
			if a := decode[api.Address](t, "xpub", b); !amountIs(a.Balance, acct.Balance) || a.Address != f.Accounts[2].Descriptor(false) {
				t.Errorf("unescaped descriptor %.300s", b)
			}
		}},
		{path: "/api/v2/xpub/", errPrefix: "Missing xpub"},
		{path: "/api/v2/xpub/" + f.Accounts[0].Xpub()[:60], errPrefix: "Invalid xpub or descriptor"},
		{path: "/api/v2/utxo/" + f.UnusedAddress, ok: func(t *testing.T, b []byte) {
			if us := decode[[]api.Utxo](t, "utxo", b); len(us) != 1 || us[0].Confirmations != 0 {
				t.Errorf("pending utxo %s", b)
			}
		}},
		{path: "/api/v2/utxo/" + f.UnusedAddress + "?confirmed=true", ok: func(t *testing.T, b []byte) {
			if string(b) != "[]\n" {
				t.Errorf("no confirmed utxos: %s", b)
			}
		}},
		{path: "/api/v2/utxo/" + url.PathEscape(desc) + "?confirmed=true", ok: func(t *testing.T, b []byte) {
			if us := decode[[]api.Utxo](t, "utxo", b); len(us) != len(acct.Utxos) || us[0].Path == "" {
				t.Errorf("account utxos %s", b)
			}
		}},
		{path: "/api/v2/utxo/nonsense", errPrefix: "Invalid address"},
		{path: "/api/v2/balancehistory/" + f.DemoAddress + "?groupBy=1", ok: func(t *testing.T, b []byte) {
			blocks := map[int32]bool{}
			for _, txid := range demo.Txids {
				blocks[f.Ledger.Txs[txid].Height] = true
			}
			if h := decode[[]api.BalanceHistory](t, "balancehistory", b); len(h) != len(blocks) {
				t.Errorf("balance history %s", b)
			}
		}},
		{path: "/api/v2/balancehistory/nonsense", errPrefix: "Invalid address"},
	}
}

// restOtherCases: sending, fees, filters, fiat rates and unknown paths.
func restOtherCases(t *testing.T, f *apitest.Fixture) []restCase {
	tip := f.TipHeight()
	return []restCase{
		{path: "/api/v2/sendtx/zz", errPrefix: "Invalid transaction hex"},
		{method: "POST", path: "/api/v2/sendtx/", body: "00", errPrefix: "Invalid transaction"},
		{method: "POST", path: "/api/v2/sendtx", body: txHex(t, f.Block(1).Transactions[0]), errPrefix: "Transaction already in block chain"},
		{path: "/api/v2/estimatefee/2", ok: func(t *testing.T, b []byte) {
			if r := decode[api.Result](t, "estimatefee", b); r.Result != "0.00011" {
				t.Errorf("estimatefee %s", b)
			}
		}},
		{path: "/api/v2/estimatefee/0", errPrefix: "Invalid number of blocks"},
		{path: "/api/v2/feestats/112", ok: func(t *testing.T, b []byte) {
			if fs := decode[api.FeeStats](t, "feestats", b); fs.TxCount != len(f.Block(112).Transactions)-1 {
				t.Errorf("feestats %s", b)
			}
		}},
		{path: "/api/v2/contract/0x00", errPrefix: "getContractInfo is not supported"},
		{path: "/api/v2/block-filters/?scriptType=taproot-noordinals&lastN=2", ok: func(t *testing.T, b []byte) {
			if bf := decode[api.BlockFilters](t, "block-filters", b); len(bf.BlockFilters) != 2 || bf.BlockFilters[tip].BlockHash != f.BlockHash(tip) {
				t.Errorf("block-filters %s", b)
			}
		}},
		{path: "/api/v2/block-filters/?scriptType=taproot&lastN=2", errPrefix: "Invalid scriptType"},
		{path: "/api/v2/tickers/", errPrefix: "No tickers found"},
		// The fixture keeps no tweak index (e2e's TestE2ESilentPayments serves it).
		{path: "/api/v2/sp-tweaks/1", errPrefix: "Silent Payments index is not enabled"},
		{path: "/api/v2/sp-tweaks/1?filterSpent=maybe", errPrefix: "invalid filterSpent"},
		// Unknown paths under /api answer the status, as Blockbook's do.
		{path: "/api/v2/nothing/here", ok: isStatus(f)},
		{path: "/api/nosuch", ok: isStatus(f)},
		{method: "POST", path: "/api/v2/whatever", ok: isStatus(f)},
		// Routes take any method, as Blockbook's.
		{method: "POST", path: "/api/v2/block-index/57", ok: func(t *testing.T, b []byte) {
			if decode[api.BlockIndex](t, "block-index", b).BlockHash != f.BlockHash(57) {
				t.Errorf("POST block-index %s", b)
			}
		}},
	}
}

// The explorer's pages over the same fixture: HTML, naming what they show;
// unknown objects 404, mistakes 400.
func TestExplorerPagesOnFixture(t *testing.T) {
	s := newServed(t)
	f := s.f
	txid := f.Block(111).Transactions[1].TxHash().String()
	miner, err := f.Gen.Address(chaingen.P2PKH, chaingen.MinerIndex)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		code  int
		shows string
	}{
		{"/", 200, "Regtest"},
		{"/blocks", 200, f.BlockHash(f.TipHeight())},
		{"/block/111", 200, txid},
		{"/tx/" + txid, 200, txid},
		{"/tx/" + f.PendingChild.TxHash().String(), 200, f.UnusedAddress},
		{"/address/" + miner + "?page=2", 200, miner},
		{"/xpub/" + url.PathEscape(f.Accounts[1].Descriptor(true)), 200, f.AccountLedgers[1].Chains[0][0].Address},
		{"/mempool", 200, f.PendingPayment.TxHash().String()},
		{"/search?q=" + txid, 200, txid},
		{"/tx/" + strings.Repeat("ab", 32), 404, "not found"},
		{"/block/" + strconv.Itoa(f.TipHeight()+1), 404, "Block not found"},
		{"/address/nonsense", 400, "Invalid address"},
	} {
		code, ctype, body := s.do(t, "GET", tc.path, "")
		if code != tc.code || ctype != "text/html; charset=utf-8" || !strings.Contains(string(body), tc.shows) {
			t.Errorf("%s: %d %q, want %d showing %q", tc.path, code, ctype, tc.code, tc.shows)
		}
	}
}

// isStatus checks that an answer is the status object of the fixture.
func isStatus(f *apitest.Fixture) func(t *testing.T, b []byte) {
	return func(t *testing.T, b []byte) {
		st := decode[api.SystemInfo](t, "status", b)
		if st.Blockbook.BestHeight != uint32(f.TipHeight()) || st.Backend.Chain != "regtest" {
			t.Errorf("not the status: %s", b)
		}
	}
}
