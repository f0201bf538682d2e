package e2e

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// An address's txs inside one block, and an account's, come back in the
// order Blockbook answers them, on every front that lists them.
//
// Block B below, seen from X, receive address 0 of a BIP84 account whose
// change address 0 is Y (f is the tx that paid X in the block before B):
//
//	t1  spends f's output of X, change to Y      (X: input 0)
//	t2  pays X                                   (X: output)
//	t3  spends t2's output of X, change to Y     (X: input 0)
//	t4  pays X                                   (X: output)
//	t5  spends t4's output of X, change to X     (X: output 1, input 0)
//
// Blockbook's connect (db/rocksdb.go, processAddressesBitcoinType) walks
// the outputs of every tx of the block in block order, then their inputs,
// and appends a tx to the address's list where it first meets it
// (addToAddressesMap): outputs give t2, t4, t5; inputs add t1 and t3 (t5
// is there already). packTxIndexes stores the list t2, t4, t5, t1, t3
// reversed, and reads return it as stored, so X lists B's txs as
//
//	t3, t1, t5, t4, t2
//
// then f. Y is paid in t1 and t3: t3, t1.
//
// The account (api/xpub.go) takes its addresses' lists chain by chain (X's
// first, then Y's, each tx once) and sorts them with sort.Stable by height
// descending and, within a height, Less(i, j) = i spends from its address
// at least as much as j does (xpubTxids.Less): entries t3 (spends), t1
// (spends), t5 (spends), t4, t2, then f. Go's sort.Stable insertion-sorts
// up to 20 entries: t1 moves before t3 (both spend), t5 before t3 and t1,
// t4 stays after t3 (a spender is not "less" than a payer's successor),
// t2 moves before t4 (both only pay) but not before t3, and f (older)
// stays last:
//
//	t5, t1, t3, t2, t4, f
func TestE2EOrderInsideABlock(t *testing.T) {
	g := chaingen.New(&chaincfg.RegressionNetParams, "order")
	if err := g.Extend(101, 0); err != nil {
		t.Fatal(err)
	}
	a, err := chaingen.NewHDAccount(g.Params(), chaingen.HDSeed("e2e-order"), chaingen.BIP84, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := g.NewHDWallet()
	outside, err := g.PkScript(chaingen.P2WPKH, 41)
	if err != nil {
		t.Fatal(err)
	}
	x := chaingen.HDOut{Acct: a, Change: 0, Index: 0}
	ext := chaingen.HDOut{Script: outside, Value: 1_000_000}
	toX := func(v int64) chaingen.HDOut { o := x; o.Value = v; return o }
	must := func(tx *wire.MsgTx, err error) *wire.MsgTx {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	f := must(w.Fund(toX(5_000_000)))
	if _, err := g.AddBlock(f); err != nil {
		t.Fatal(err)
	}
	fromX, toY := [][2]uint32{{0, 0}}, [2]uint32{1, 0}
	t1 := must(w.Spend(a, fromX, toY, ext))
	t2 := must(w.Fund(toX(3_000_000)))
	t3 := must(w.Spend(a, fromX, toY, ext))
	t4 := must(w.Fund(toX(2_000_000)))
	t5 := must(w.Spend(a, fromX, [2]uint32{0, 0}, ext))
	if _, err := g.AddBlock(t1, t2, t3, t4, t5); err != nil {
		t.Fatal(err)
	}
	ids := func(txs ...*wire.MsgTx) []string {
		var out []string
		for _, tx := range txs {
			out = append(out, tx.TxHash().String())
		}
		return out
	}
	wantX := ids(t3, t1, t5, t4, t2, f)
	wantY := ids(t3, t1)
	wantAccount := ids(t5, t1, t3, t2, t4, f)
	names := map[string]string{}
	for i, id := range ids(f, t1, t2, t3, t4, t5) {
		names[id] = []string{"f", "t1", "t2", "t3", "t4", "t5"}[i]
	}
	named := func(list []string) []string {
		out := make([]string, len(list))
		for i, id := range list {
			out[i] = cmp.Or(names[id], id)
		}
		return out
	}
	check := func(t *testing.T, what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", what, named(got), named(want))
		}
	}

	// The generator's ledger, which the other tests judge by, agrees.
	led := g.Ledger()
	addrX, err := a.Address(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	addrY, err := a.Address(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "ledger X", led.Addresses[addrX].Txids, wantX)
	check(t, "ledger Y", led.Addresses[addrY].Txids, wantY)
	al, err := g.AccountLedger(a, 20)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "account ledger", al.Txids, wantAccount)

	node := startNode(t)
	submit(t, g, node, 1)
	inst := startInProcess(t, writeConfig(t, node, nil), t.TempDir(), nil)
	h, hash := g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	base := inst.base
	desc := a.Descriptor(true)
	ws := newWS(t, base)

	for _, c := range []struct {
		name, id string
		want     []string
	}{{"X", addrX, wantX}, {"Y", addrY, wantY}, {"account", desc, wantAccount}} {
		// Blockbook's v1 serves accounts on the unversioned path only.
		path, v1Path := "/api/v2/address/", "/api/v1/address/"
		if c.name == "account" {
			path, v1Path = "/api/v2/xpub/", "/api/xpub/"
		}
		path += url.PathEscape(c.id)
		v1Path += url.PathEscape(c.id)
		t.Run(c.name, func(t *testing.T) {
			var v2 api.Address
			getJSON(t, base+path+"?details=txids", 200, &v2)
			check(t, "REST v2 txids", v2.Txids, c.want)
			var full api.Address
			getJSON(t, base+path+"?details=txs", 200, &full)
			check(t, "REST v2 txs", txidsOf(full.Transactions), c.want)
			// Pages of two, in turn, make the same list.
			var paged []string
			for page := 1; page <= (len(c.want)+1)/2; page++ {
				var p api.Address
				getJSON(t, fmt.Sprintf("%s%s?details=txids&pageSize=2&page=%d", base, path, page), 200, &p)
				paged = append(paged, p.Txids...)
			}
			check(t, "REST v2 pages of 2", paged, c.want)
			var v1 api.AddressV1
			getJSON(t, base+v1Path, 200, &v1)
			check(t, "REST v1", v1.Txids, c.want)
			var info api.Address
			ws.ok("getAccountInfo", map[string]any{"descriptor": c.id, "details": "txs", "pageSize": 25}, &info)
			check(t, "websocket getAccountInfo", txidsOf(info.Transactions), c.want)
			check(t, "explorer", cardTxids(fetchPage(t, base, explorerPath(c.name, c.id)).doc), c.want)
		})
	}
}

// txidsOf lists the txids of txs in order.
func txidsOf(txs []*api.Tx) []string {
	out := make([]string, len(txs))
	for i, tx := range txs {
		out[i] = tx.Txid
	}
	return out
}

// explorerPath is the explorer page of an address or an account.
func explorerPath(kind, id string) string {
	if kind == "account" {
		return "/xpub/" + url.PathEscape(id)
	}
	return "/address/" + id
}
