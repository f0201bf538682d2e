package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/internal/bip352"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/spchain"
)

// The Silent Payments chain (tools/spchain: payments from every eligible
// input kind, one label, txs BIP352 skips) on a real btcd node, indexed
// with the config key silent_payments_index and served on -silentpayments.
// A wallet that knows only the scan and spend keys finds exactly its
// payments through the HTTP routes; the cut-through answers follow the
// block spending two payments and the reorg that drops it; the index then
// equals a fresh sync of the final chain.
func TestE2ESilentPayments(t *testing.T) {
	c, err := spchain.Build("e2e-sp")
	if err != nil {
		t.Fatal(err)
	}
	node := startNode(t)
	if err := chaingen.SubmitBlocks(context.Background(), node, c.MainRaw[:c.SP.PayHeight+1], 1); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, node, map[string]any{"silent_payments_index": true})
	dir := t.TempDir()
	listener, listenerAddr := catchListener("silentpayments")
	eaddr := freePort(t)
	inst := startInProcess(t, cfg, dir, func(o *app.Options) {
		o.SilentPayments.Addr = "127.0.0.1:0"
		listenElectrum(o, eaddr) // before listener, which must see its name
		listener(o)
	})
	base := "http://" + listenerAddr(t, inst.logs)
	waitTip(t, inst.base, c.SP.PayHeight, c.Main[c.SP.PayHeight].Hash.String(), inst.logs)
	s, err := bip352.NewScanner(c.Receiver.ScanKey(), c.Receiver.SpendPub(), c.Receiver.Labels)
	if err != nil {
		t.Fatal(err)
	}
	pay := uint32(c.SP.PayHeight)
	checkSPScan(t, c, base, pay, "/tweaks/", s, nil, nil)
	checkSPScan(t, c, base, pay, "/tweak-index/", s, nil, nil)
	checkSPFilter(t, c, base, pay)
	// Electrum: Cake Wallet's tweaks and Frigate's server-side scan.
	ec := dialSPElectrum(t, eaddr)
	checkCake(t, c, ec, s, int(pay), nil, nil, false)
	frigate := checkFrigate(t, c, ec, 0)
	ws, _, err := dialWS(t, inst.base, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSPPage(t, c, inst.base, ws, s, nil, nil)
	// The REST page's goldens (TestOpenAPIGoldens checks them against the spec).
	gs := newGoldenSet(t, filepath.Join(goldenDir, "sp"), "TestE2ESilentPayments")
	gs.check("sp-tweaks-pay", fetchGolden(t, fmt.Sprintf("%s/api/v2/sp-tweaks/%d", inst.base, pay), 200))
	gs.check("error-sp-tweaks-height", fetchGolden(t, inst.base+"/api/v2/sp-tweaks/x", 400))
	gs.finish()
	checkSPElectrumErrors(t, c, ec, int(pay))

	// The block spending the P2PKH-funded payment and the pair's larger one.
	if err := chaingen.SubmitBlocks(context.Background(), node, c.MainRaw, c.SP.SpendHeight); err != nil {
		t.Fatal(err)
	}
	waitTip(t, inst.base, c.SP.SpendHeight, c.Main[c.SP.SpendHeight].Hash.String(), inst.logs)
	// Cut-through drops the tx whose one payment is spent, not the pair.
	checkSPScan(t, c, base, pay, "/tweaks/", s, c.SP.Spent, c.SP.Spent[:1])
	checkSPScan(t, c, base, pay, "/tweak-index/", s, c.SP.Spent, nil)
	checkCake(t, c, ec, s, int(c.SP.SpendHeight), c.SP.Spent, c.SP.Spent[:1], false)
	checkCake(t, c, ec, s, int(c.SP.SpendHeight), c.SP.Spent, nil, true)
	checkSPPage(t, c, inst.base, ws, s, c.SP.Spent, c.SP.Spent[:1])
	checkSPCounts(t, base, pay, map[string]int{"?filterSpent=1": 4, "?filterSpent=1&dustLimit=150000000": 1,
		"?filterSpent=1&dustLimit=250000000": 0, "?dustLimit=250000000": 1, "": 5})

	// The fork replaces the spending block with two empty ones.
	if err := chaingen.SubmitBlocks(context.Background(), node, c.ForkRaw, c.SP.PayHeight+1); err != nil {
		t.Fatal(err)
	}
	h, hash := c.F.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	checkSPScan(t, c, base, pay, "/tweaks/", s, nil, nil)
	checkSPCounts(t, base, pay, map[string]int{"?filterSpent=1": 5, "?filterSpent=1&dustLimit=250000000": 1})
	checkCake(t, c, ec, s, int(h), nil, nil, false)
	checkSPPage(t, c, inst.base, ws, s, nil, nil)
	// The subscription made before the blocks still answers, and a new
	// connection's scan from the payment block finds the same history.
	if res, bad := ec.call("blockchain.silentpayments.unsubscribe", hex.EncodeToString(c.Receiver.ScanKey()), hex.EncodeToString(c.Receiver.SpendPub())); bad != nil || string(res) != `"`+frigate+`"` {
		t.Errorf("unsubscribe: %s %s", res, bad)
	}
	checkFrigate(t, c, dialSPElectrum(t, eaddr), int(pay))
	inst.stop(t)
	compareIndexes(t, dir, referenceIndex(t, cfg, h, hash.String()))
}

// checkSPScan scans the block through tweakRoute and /utxos: it must find
// exactly the payments, less those of txs left out (the outpoints in
// dropped name them), with their values, labels and spent state (the
// payments in spent are spent).
func checkSPScan(t *testing.T, c *spchain.Chain, base string, height uint32, tweakRoute string, s *bip352.Scanner, spent, dropped []wire.OutPoint) {
	t.Helper()
	found, err := spchain.Scan(base, height, tweakRoute, s)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, p := range c.SP.Payments {
		f, ok := found[p.Key]
		if slices.Contains(dropped, p.Outpoint) {
			if ok {
				t.Errorf("%s: found %v, whose tx is spent", tweakRoute, p.Outpoint)
			}
			continue
		}
		want++
		if !ok || f.Txid != p.Outpoint.Hash.String() || f.Vout != p.Outpoint.Index || f.Value != uint64(p.Value) ||
			f.Labeled != (p.Label != nil) {
			t.Errorf("%s: payment %v found as %+v (%v)", tweakRoute, p.Outpoint, f, ok)
		}
		if isSpent := slices.Contains(spent, p.Outpoint); f.Spent != isSpent {
			t.Errorf("%s: payment %v spent %v, want %v", tweakRoute, p.Outpoint, f.Spent, isSpent)
		}
	}
	if len(found) != want {
		t.Errorf("%s: found %d outputs, want %d payments", tweakRoute, len(found), want)
	}
	if _, ok := found[c.SP.Skipped.Key]; ok {
		t.Errorf("%s: found the payment of the tx with a witness v2 input", tweakRoute)
	}
}

// checkSPCounts checks the number of tweaks /bip352/tweaks serves for
// each query.
func checkSPCounts(t *testing.T, base string, height uint32, counts map[string]int) {
	t.Helper()
	for q, n := range counts {
		var got struct {
			Tweaks []string `json:"tweaks"`
		}
		if err := spchain.GetJSON(base, fmt.Sprintf("/bip352/tweaks/%d%s", height, q), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Tweaks) != n {
			t.Errorf("/bip352/tweaks/%d%s: %d tweaks, want %d", height, q, len(got.Tweaks), n)
		}
	}
}

// checkSPFilter requires the block's new-utxos filter to match every
// payment's key, as a light wallet tests its candidate keys against it.
func checkSPFilter(t *testing.T, c *spchain.Chain, base string, height uint32) {
	t.Helper()
	var f spchain.Filter
	if err := spchain.GetJSON(base, fmt.Sprintf("/filter/new-utxos/%d", height), &f); err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	for _, p := range c.SP.Payments {
		keys = append(keys, p.Key[:])
	}
	if ok, _, err := f.Matches(keys); err != nil || !ok {
		t.Errorf("new-utxos filter of block %d does not match the payments: %v", height, err)
	}
}

// catchListener takes the address of the named listener from OnListen:
// mod redirects the options' OnListen, addr waits for the address.
func catchListener(name string) (mod func(*app.Options), addr func(t testing.TB, logs fmt.Stringer) string) {
	ch := make(chan string, 1)
	mod = func(o *app.Options) { captureListen(o, name, ch) }
	addr = func(t testing.TB, logs fmt.Stringer) string {
		t.Helper()
		select {
		case a := <-ch:
			return a
		case <-time.After(waitFor):
			t.Fatalf("the %s listener did not start\n%s", name, logs)
		}
		return ""
	}
	return mod, addr
}
