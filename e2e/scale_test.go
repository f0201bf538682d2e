package e2e

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/scalegen"
)

// TestScaleSmoke is the CI-sized run of the scale benchmark's pipeline: a
// few thousand mainnet-shaped txs from cmd/scalegen, served by the block
// server over JSON-RPC and P2P, synced in bulk by the real program. The
// index must reach the generated tip and hold each whale's and the HD
// account's tx count and balance as the generator's ledger has them.
func TestScaleSmoke(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chain")
	stats, err := scalegen.Generate(dir, scalegen.Options{Txs: 4000, MaxBlockTxs: 40, Seed: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scalegen.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p2pLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rpcLn.Close(); p2pLn.Close() })
	go func() { _ = srv.ServeRPC(rpcLn) }()
	go func() { _ = srv.ServeP2P(p2pLn) }()

	cfg, _ := json.Marshal(map[string]any{"coin_name": "Regtest", "coin_shortcut": "rBTC",
		"rpc_url": "http://" + rpcLn.Addr().String(), "rpc_user": "u", "rpc_pass": "p", "parse": true,
		"block_addresses_to_keep": 300, "p2p_address": p2pLn.Addr().String()})
	cfgPath := filepath.Join(t.TempDir(), "blockchaincfg.json")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	// A small budget and bulk threshold so that the sync runs bulk rounds.
	inst := startInProcess(t, cfgPath, filepath.Join(t.TempDir(), "index"), func(o *app.Options) {
		o.SyncMemoryMB, o.BulkThreshold = 16, 50
	})
	waitTip(t, inst.base, srv.Tip(), srv.Hash(srv.Tip()), inst.logs)
	if !strings.Contains(inst.logs.String(), bulkSyncStarted) {
		t.Errorf("the sync did not run in bulk\n%s", tail(inst.logs.String(), 20))
	}
	for w := 0; w < scalegen.NumWhales; w++ {
		_, addrs, _, err := txscript.ExtractPkScriptAddrs(scalegen.WhaleScript(w), &chaincfg.RegressionNetParams)
		if err != nil || len(addrs) != 1 {
			t.Fatalf("whale %d script: %v", w, err)
		}
		var a struct {
			Balance string `json:"balance"`
			Txs     int    `json:"txs"`
		}
		getJSON(t, inst.base+"/api/v2/address/"+addrs[0].EncodeAddress()+"?details=basic", 200, &a)
		if a.Txs != stats.WhaleTxs[w] || a.Balance != strconv.FormatInt(stats.WhaleBalance[w], 10) {
			t.Errorf("whale %d %s: index has %d txs, balance %s; generator: %d txs, balance %d",
				w, addrs[0], a.Txs, a.Balance, stats.WhaleTxs[w], stats.WhaleBalance[w])
		}
	}
	// The HD account, found by the xpub's gap-limit scan.
	var x struct {
		Balance    string `json:"balance"`
		Txs        int    `json:"txs"`
		UsedTokens int    `json:"usedTokens"`
	}
	getJSON(t, inst.base+"/api/v2/xpub/"+stats.Account.Xpub+"?details=basic", 200, &x)
	if acct := stats.Account; acct.Txs == 0 || x.Txs != acct.Txs || x.Balance != strconv.FormatInt(acct.Balance, 10) || x.UsedTokens != acct.Addresses {
		t.Errorf("account %s: index has %d txs, balance %s, %d used addresses; generator: %+v", acct.Xpub, x.Txs, x.Balance, x.UsedTokens, acct)
	}
}
