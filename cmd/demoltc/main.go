// Command demoltc is `make run COIN=litecoin`: a litecoind regtest node in
// a temporary directory, the generated Litecoin chain of tools/ltcregtest
// (every script kind, MWEB activated at 432 with peg-ins, peg-outs and
// MWEB-only txs), and blockbook indexing it as Litecoin Regtest (following
// the node by polling), with a payment every -interval, alternately a
// peg-in, a peg-out and a canonical one, mined at the next step.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

func main() {
	bin := flag.String("blockbook", "bin/blockbook", "path to the blockbook binary")
	public := flag.String("public", "127.0.0.1:19184", "public API address (Litecoin Regtest's port)")
	internal := flag.String("internal", "127.0.0.1:19084", "internal (metrics, health) address")
	dir := flag.String("dir", "", "working directory for the node and the index (default: a new temporary directory, removed at exit)")
	interval := flag.Duration("interval", 30*time.Second, "send a payment and mine the previous one this often (0: never)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *bin, *public, *internal, *dir, *interval)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demoltc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, public, internal, dir string, interval time.Duration) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("blockbook binary %s not found (run `make build`): %w", bin, err)
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "blockbook-demoltc-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	say("working directory %s", dir)
	say("starting litecoind (regtest)")
	node, err := ltcregtest.Start(ctx, ltcregtest.Options{Dir: filepath.Join(dir, "litecoind"), Listen: true})
	if err != nil {
		return err
	}
	defer node.Stop() //nolint:errcheck // the demo is ending; nothing to do about it
	say("generating the chain with litecoind's wallet (every script kind, MWEB from block %d)", ltcregtest.MWEBHeight)
	sc, err := ltcregtest.Generate(ctx, node)
	if err != nil {
		return err
	}
	l, blocks, err := ltcregtest.Ledger(ctx, node)
	if err != nil {
		return err
	}
	say("chain: %d blocks, %d transactions", sc.TipHeight, len(l.Txs))

	exited, stopBlockbook, err := benchproc.StartDemo(bin, dir, public, internal, map[string]any{
		"coin_name": "Litecoin Regtest", "coin_shortcut": "rLTC", "coin_label": "Litecoin Regtest",
		"rpc_url": node.RPCURL, "rpc_user": node.RPCUser, "rpc_pass": node.RPCPass, "rpc_timeout": 25,
		"parse": true, "message_queue_binding": "", "block_addresses_to_keep": 300,
		"p2p_address": node.P2PAddr,
		"xpub_magic": 70617039, "xpub_magic_segwit_p2sh": 71979618, "xpub_magic_segwit_native": 73342198, "slip44": 1,
	})
	if err != nil {
		return err
	}
	defer stopBlockbook()
	base := "http://" + public
	if err := benchproc.WaitSynced(ctx, base, uint32(sc.TipHeight), exited); err != nil {
		return err
	}
	var hogEx string
	for _, b := range blocks {
		if b.PegOuts > 0 {
			hogEx = b.HogEx
		}
	}
	printURLs(base, "http://"+internal, sc, hogEx)
	err = benchproc.Every(ctx, interval, exited, func(n int64) error { return demoStep(ctx, node, sc, n) })
	if err == nil {
		say("stopping")
	}
	return err
}

// demoStep mines what the previous step sent, then sends the next payment
// (a peg-in, a peg-out or a canonical payment in turn), which stays in the
// mempool until the next step.
func demoStep(ctx context.Context, node *ltcregtest.Node, sc *ltcregtest.Scenario, n int64) error {
	if n > 0 {
		var addr string
		if err := node.Wallet(ltcregtest.W).CallResult(ctx, &addr, "getnewaddress", "", "bech32"); err != nil {
			return err
		}
		var hashes []string
		if err := node.CallResult(ctx, &hashes, "generatetoaddress", 1, addr); err != nil {
			return err
		}
		say("mined block %s", hashes[0])
	}
	amount := fmt.Sprintf("0.%04d", 1000+n%9000)
	var txid string
	var err error
	switch n % 3 {
	case 0:
		err = node.Wallet(ltcregtest.W).CallResult(ctx, &txid, "sendtoaddress", sc.MWEBAddresses[0], amount)
		say("sent peg-in %s (pending until the next block)", txid)
	case 1:
		to := sc.Addresses["p2wpkh"][0]
		err = node.Wallet(ltcregtest.MW).CallResult(ctx, &txid, "sendtoaddress", to, amount)
		say("sent peg-out %s to %s: its output will be in the next block's HogEx", txid, to)
	default:
		to := sc.Addresses["p2pkh"][0]
		err = node.Wallet(ltcregtest.W).CallResult(ctx, &txid, "sendtoaddress", to, amount)
		say("sent tx %s paying %s (pending until the next block)", txid, to)
	}
	return err
}

func printURLs(base, internal string, sc *ltcregtest.Scenario, hogEx string) {
	fmt.Printf(`
blockbook is serving the Litecoin regtest chain. Try:

  explorer (HTML)     %[1]s/
  status              %[1]s/api/v2
  tip block           %[1]s/api/v2/block/%[3]s
  first MWEB block    %[1]s/api/v2/block/%[4]d
  a HogEx tx          %[1]s/api/v2/tx/%[5]s
  a peg-in tx         %[1]s/api/v2/tx/%[6]s
  P2PKH address       %[1]s/api/v2/address/%[7]s?details=txs
  P2WPKH address      %[1]s/api/v2/address/%[8]s
  P2SH-P2WPKH UTXOs   %[1]s/api/v2/utxo/%[9]s
  P2WSH multisig      %[1]s/api/v2/address/%[10]s
  P2TR address        %[1]s/api/v2/address/%[11]s
  websocket API       ws%[12]s/websocket
  metrics             %[2]s/metrics

Every interval a peg-in, a peg-out or a payment enters the mempool and the
previous one is mined in a block. Ctrl-C stops everything.

`, base, internal, sc.TipHash, ltcregtest.MWEBHeight, hogEx, sc.PegIns[0], sc.Addresses["p2pkh"][0],
		sc.Addresses["p2wpkh"][0], sc.Addresses["p2sh-p2wpkh"][0], sc.Addresses["p2wsh-multisig"][0],
		sc.Addresses["p2tr"][0], base[len("http"):])
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "demoltc: "+format+"\n", args...)
}
