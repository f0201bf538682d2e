package e2e

import (
	"bytes"
	"fmt"
	"math/big"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Golden answers of REST v1 and of the unversioned /api/<x>/ paths (v1
// shapes on this Bitcoin-type chain) over the demo chain on btcd, under
// testdata/v1. The goldens pin the wire; the cross-checks below hold the
// numbers to the v2 answers for the same objects and to the generator's
// ledger, so the goldens are not the only oracle.
func TestE2EV1(t *testing.T) {
	f := startGoldenFixture(t)
	inst, g, txs, miner, unused, txBlock := f.inst, f.g, f.txs, f.miner, f.unused, f.txBlock
	addr := f.addr
	waitMempoolInSync(t, inst.base)
	acct, err := chaingen.NewHDAccount(g.Params(), chaingen.HDSeed("e2e-v1"), chaingen.BIP84, 0)
	if err != nil {
		t.Fatal(err)
	}
	reqs := v1Requests(txs, addr(chaingen.P2TR), addr(chaingen.P2WSHMultisig), miner, f.hash, acct.Xpub(), txBlock)

	pay, payHex := f.payment(t)
	// Last, as they change the node's mempool.
	reqs = append(reqs,
		v1Req{"v1-sendtx-payment", "/api/v1/sendtx/" + payHex, 200},
		v1Req{"v1-error-sendtx-rejected-duplicate", "/api/v1/sendtx/" + payHex, 400},
		v1Req{"unversioned-error-sendtx-rejected-duplicate", "/api/sendtx/" + payHex, 400},
		v1Req{"v1-tx-unconfirmed-payment", "/api/v1/tx/" + pay.TxHash().String(), 200},
		v1Req{"v1-address-unused-pending", "/api/v1/address/" + unused + "?details=txs", 200},
		v1Req{"unversioned-utxo-unused-pending", "/api/utxo/" + unused, 200},
		v1Req{"v1-utxo-unused-pending-confirmed-only", "/api/v1/utxo/" + unused + "?confirmed=true", 200},
	)
	gs := newGoldenSet(t, filepath.Join(goldenDir, "v1"), "TestE2EV1")
	for _, r := range reqs {
		if r.name == "v1-tx-unconfirmed-payment" {
			waitAddress(t, inst.base, unused, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
		}
		got := fetchGolden(t, inst.base+r.path, r.code)
		// The unversioned path answers the same (sending twice is no
		// longer a send).
		if rest, ok := strings.CutPrefix(r.path, "/api/v1/"); ok && r.name != "v1-sendtx-payment" {
			if same := fetchGolden(t, inst.base+"/api/"+rest, r.code); !bytes.Equal(same, got) {
				t.Errorf("/api/%s differs from /api/v1/%s:\n%s\nv1: %s", rest, rest, truncateBytes(same, 300), truncateBytes(got, 300))
			}
		}
		if strings.Contains(r.name, "pending") || strings.Contains(r.name, "unconfirmed") {
			got = normalizeFirstSeenV1(t, got)
		}
		gs.check(r.name, got)
	}
	gs.finish()

	checkV1AgainstV2(t, inst.base, g.Ledger(), txs, []string{addr(chaingen.P2TR), addr(chaingen.P2WPKH), miner, unused}, txBlock)
}

type v1Req struct {
	name, path string
	code       int
}

// v1Requests lists a request per v1 route and parameter; the unversioned
// path of each is checked to answer the same bytes. A few unversioned
// answers are pinned on their own, with the unversioned-only routes.
func v1Requests(txs map[string]string, p2tr, p2wsh, miner, tipHash, xpub string, txBlock int32) []v1Req {
	reqs := []v1Req{
		{"block-index-100", "block-index/100", 200},
		{"block-height-1", "block/1", 200},
		{"block-tip-by-hash", "block/" + tipHash, 200},
		{"block-many-outputs", fmt.Sprintf("block/%d", txBlock), 200},
		{"tx-specific-coinbase", "tx-specific/" + txs["coinbase"], 200},
		{"tx-coinbase-spending", "tx/" + txs["coinbase"] + "?spending=true", 200},
		{"address-p2tr", "address/" + p2tr, 200},
		{"address-p2tr-basic", "address/" + p2tr + "?details=basic", 200},
		{"address-p2tr-txs", "address/" + p2tr + "?details=txs", 200},
		{"address-miner-page2", "address/" + miner + "?pageSize=5&page=2", 200},
		{"address-miner-from-to", "address/" + miner + "?from=10&to=20", 200},
		{"utxo-p2wsh", "utxo/" + p2wsh, 200},
		{"utxo-miner", "utxo/" + miner, 200},
		{"estimatefee-2", "estimatefee/2", 200},
		{"error-invalid-txid", "tx/xyz", 400},
		{"error-missing-txid", "tx/", 400},
		{"error-spending-not-bool", "tx/" + txs["coinbase"] + "?spending=maybe", 400},
		{"error-unknown-tx", "tx/" + strings.Repeat("ab", 32), 400},
		{"error-invalid-address", "address/notanaddress", 400},
		{"error-missing-address", "address/", 400},
		{"error-confirmed-not-bool", "utxo/" + miner + "?confirmed=maybe", 400},
		{"error-unknown-block", "block/99999", 400},
		{"error-estimatefee-bad", "estimatefee/0", 400},
		{"error-sendtx-garbage", "sendtx/zz", 400},
		{"block-index-tip", "block-index/", 200},
		{"error-estimatefee-missing", "estimatefee/", 400},
		{"error-sendtx-missing", "sendtx/", 400},
		{"error-tx-specific-missing", "tx-specific/", 400},
	}
	for name, txid := range txs {
		reqs = append(reqs, v1Req{"tx-" + name, "tx/" + txid, 200})
	}
	slices.SortFunc(reqs, func(a, b v1Req) int { return strings.Compare(a.name, b.name) })
	var out []v1Req
	for _, r := range reqs {
		out = append(out, v1Req{"v1-" + r.name, "/api/v1/" + r.path, r.code})
	}
	for _, r := range reqs {
		switch r.name {
		case "block-index-100", "block-height-1", "tx-coinbase", "tx-spend-witness_v1_taproot", "tx-specific-coinbase",
			"address-p2tr", "utxo-miner", "estimatefee-2", "error-invalid-address", "error-missing-txid", "error-sendtx-garbage":
			out = append(out, v1Req{"unversioned-" + r.name, "/api/" + r.path, r.code})
		}
	}
	// Routes only the unversioned paths have (v2 shapes, or v1 for xpub).
	return append(out,
		v1Req{"unversioned-xpub-bip84", "/api/xpub/" + xpub, 200},
		v1Req{"unversioned-xpub-bip84-txs", "/api/xpub/" + xpub + "?details=txs&tokens=derived&pageSize=2", 200},
		v1Req{"unversioned-error-missing-xpub", "/api/xpub/", 400},
		v1Req{"unversioned-rawtx-coinbase", "/api/rawtx/" + txs["coinbase"], 200},
		v1Req{"unversioned-rawblock-1", "/api/rawblock/1", 200},
		v1Req{"unversioned-balancehistory-p2tr-daily", "/api/balancehistory/" + p2tr + "?groupBy=86400", 200},
		v1Req{"unversioned-error-contract", "/api/contract/" + p2tr, 400},
		v1Req{"unversioned-error-block-filters-disabled", "/api/block-filters/?scriptType=taproot-noordinals&lastN=1", 400},
	)
}

// pendingTimeV1 matches the times of a pending tx in an indented v1 answer
// (fields in wire order).
var pendingTimeV1 = regexp.MustCompile(`("blockheight": -1,\s*"confirmations": 0,\s*"time": )\d+(,\s*"blocktime": )\d+`)

// normalizeFirstSeenV1 fixes the times of pending txs, which are when this
// process first saw them.
func normalizeFirstSeenV1(t *testing.T, b []byte) []byte {
	t.Helper()
	if bytes.Contains(b, []byte(`"blockheight": -1`)) && !pendingTimeV1.Match(b) {
		t.Fatalf("pending tx without times:\n%s", b)
	}
	return pendingTimeV1.ReplaceAll(b, []byte("${1}1700000000${2}1700000000"))
}

// satoshis parses a v1 coin amount into base units (8 decimals).
func satoshis(t *testing.T, s string) string {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a decimal amount: %q", s)
	}
	r.Mul(r, big.NewRat(100_000_000, 1))
	if !r.IsInt() {
		t.Fatalf("more than 8 decimals: %q", s)
	}
	return r.Num().String()
}

// checkV1AgainstV2 compares the numbers of v1 and unversioned answers with
// the v2 answers and the ledger.
func checkV1AgainstV2(t *testing.T, base string, l *chaingen.Ledger, txs map[string]string, addrs []string, txBlock int32) {
	t.Helper()
	for _, prefix := range []string{"/api/v1/", "/api/"} {
		for _, txid := range txs {
			var v1 api.TxV1
			var v2 api.Tx
			getJSON(t, base+prefix+"tx/"+txid, 200, &v1)
			getJSON(t, base+"/api/v2/tx/"+txid, 200, &v2)
			checkTxNumbers(t, &v1, &v2)
			if want := l.Txs[txid]; v1.Blockheight != int64(want.Height) || satoshis(t, v1.Fees) != fmt.Sprint(want.Fee) {
				t.Errorf("%stx/%s: height %d fees %s, ledger %d %d", prefix, txid, v1.Blockheight, v1.Fees, want.Height, want.Fee)
			}
		}
		for _, a := range addrs {
			var v1 api.AddressV1
			var v2 api.Address
			getJSON(t, base+prefix+"address/"+a, 200, &v1)
			getJSON(t, base+"/api/v2/address/"+a, 200, &v2)
			if v1.AddrStr != v2.Address || satoshis(t, v1.Balance) != v2.Balance.String() ||
				satoshis(t, v1.TotalReceived) != v2.TotalReceived.String() || satoshis(t, v1.TotalSent) != v2.TotalSent.String() ||
				satoshis(t, v1.UnconfirmedBalance) != v2.UnconfirmedBalance.String() || v1.TxApperances != v2.Txs ||
				v1.UnconfirmedTxApperances != v2.UnconfirmedTxs || !slices.Equal(v1.Txids, v2.Txids) {
				t.Errorf("%saddress/%s: v1 %+v, v2 %+v", prefix, a, v1, v2)
			}
			want := l.Addresses[a]
			if want == nil {
				want = &chaingen.AddressLedger{}
			}
			if satoshis(t, v1.Balance) != fmt.Sprint(want.Balance) || v1.TxApperances != want.TxCount() ||
				satoshis(t, v1.TotalReceived) != fmt.Sprint(want.Received) {
				t.Errorf("%saddress/%s: %+v, ledger %+v", prefix, a, v1, want)
			}
			var u1 []api.UtxoV1
			var u2 []api.Utxo
			getJSON(t, base+prefix+"utxo/"+a, 200, &u1)
			getJSON(t, base+"/api/v2/utxo/"+a, 200, &u2)
			if len(u1) != len(u2) {
				t.Fatalf("%sutxo/%s: %d utxos, v2 %d", prefix, a, len(u1), len(u2))
			}
			for i := range u1 {
				if u1[i].Txid != u2[i].Txid || u1[i].Vout != u2[i].Vout || satoshis(t, u1[i].Amount) != u2[i].Value.String() ||
					string(u1[i].Satoshis) != u2[i].Value.String() || u1[i].Confirmations != u2[i].Confirmations {
					t.Errorf("%sutxo/%s %d: %+v, v2 %+v", prefix, a, i, u1[i], u2[i])
				}
			}
		}
		var b1 api.BlockV1
		var b2 api.Block
		getJSON(t, fmt.Sprintf("%s%sblock/%d", base, prefix, txBlock), 200, &b1)
		getJSON(t, fmt.Sprintf("%s/api/v2/block/%d", base, txBlock), 200, &b2)
		if b1.BlockInfo != b2.BlockInfo || b1.TxCount != b2.TxCount || len(b1.Txs) != len(b2.Txs) {
			t.Fatalf("%sblock/%d: %+v, v2 %+v", prefix, txBlock, b1.BlockInfo, b2.BlockInfo)
		}
		for i := range b1.Txs {
			checkTxNumbers(t, b1.Txs[i], b2.Txs[i])
		}
	}
}

func checkTxNumbers(t *testing.T, v1 *api.TxV1, v2 *api.Tx) {
	t.Helper()
	if v1.Txid != v2.Txid || v1.Blockheight != v2.BlockHeight || v1.Confirmations != v2.Confirmations || v1.Blocktime != v2.BlockTime ||
		satoshis(t, v1.ValueOut) != v2.Value.String() || satoshis(t, v1.ValueIn) != v2.ValueIn.String() ||
		satoshis(t, v1.Fees) != v2.Fees.String() || len(v1.Vin) != len(v2.Vin) || len(v1.Vout) != len(v2.Vout) {
		t.Fatalf("tx %s: v1 %+v", v2.Txid, v1)
	}
	for i, in := range v1.Vin {
		if w := v2.Vin[i]; in.Txid != w.Txid || in.Vout != w.Vout || !slices.Equal(in.Addresses, w.Addresses) ||
			(w.Value == nil) != (in.Value == "") || w.Value != nil && satoshis(t, in.Value) != w.Value.String() {
			t.Errorf("tx %s vin %d: %+v, v2 %+v", v2.Txid, i, in, w)
		}
	}
	for i, out := range v1.Vout {
		if w := v2.Vout[i]; satoshis(t, out.Value) != w.Value.String() || out.Spent != w.Spent || out.SpentTxID != w.SpentTxID ||
			!slices.Equal(out.ScriptPubKey.Addresses, w.Addresses) {
			t.Errorf("tx %s vout %d: %+v, v2 %+v", v2.Txid, i, out, w)
		}
	}
}

// On the Ethereum dev chain the unversioned paths answer exactly what the
// v2 routes answer, and /api/v1/ is not served (the catch-all answers), as
// in Blockbook, which registers v1 for Bitcoin-type coins only.
func TestE2EEthUnversioned(t *testing.T) {
	e := startEthE2E(t)
	var tx, contract string
	for h, ltx := range e.ledger.Txs {
		if !ltx.Pending && (tx == "" || h.Hex() < tx) {
			tx = h.Hex()
		}
	}
	for c, ci := range e.ledger.Contracts {
		if ci.Standard == "ERC20" && (contract == "" || c.Hex() < contract) {
			contract = c.Hex()
		}
	}
	holder := e.ledger.SortedAddresses()[0].Hex()
	get := func(path string) (int, []byte) {
		resp, err := httpClient.Get(e.inst.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b.Bytes()
	}
	if tx == "" || contract == "" {
		t.Fatalf("scenario has no confirmed tx (%q) or ERC20 contract (%q)", tx, contract)
	}
	for _, rest := range []string{"block-index/1", "block/1", "tx/" + tx, "tx-specific/" + tx, "rawtx/" + tx,
		"address/" + holder + "?details=txs&pageSize=3", "address/0x12", "contract/" + contract, "estimatefee/1",
		"balancehistory/" + holder, "utxo/" + holder, "xpub/xpub6abc", "rawblock/1", "block-filters/?lastN=1", "sendtx/zz"} {
		wantCode, want := get("/api/v2/" + rest)
		code, got := get("/api/" + rest)
		if code != wantCode || !bytes.Equal(got, want) {
			t.Errorf("/api/%s: %d %.300s\nv2: %d %.300s", rest, code, got, wantCode, want)
		}
		if strings.HasPrefix(rest, "tx/") && (code != 200 || !bytes.Contains(got, []byte(`"ethereumSpecific"`))) {
			t.Errorf("/api/%s is not a v2 Ethereum tx: %d %.300s", rest, code, got)
		}
	}
	wantCode, _ := get("/api/nosuch")
	for _, path := range []string{"/api/v1/tx/" + tx, "/api/v1/address/" + holder, "/api/v1/block-index/1"} {
		if code, got := get(path); code != wantCode || bytes.Contains(got, []byte(`"txid"`)) || bytes.Contains(got, []byte(`"blockHash"`)) {
			t.Errorf("%s on Ethereum: %d %.300s, want the catch-all's %d", path, code, got, wantCode)
		}
	}
}
