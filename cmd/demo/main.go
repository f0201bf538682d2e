// Command demo runs the whole stack on a laptop: a btcd regtest node in a
// temporary directory, a demo chain of real signed transactions of every
// script type, and blockbook indexing it and serving the API, with a new
// block every -interval so that following the tip is visible. It is what
// `make run` starts.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

func main() {
	bin := flag.String("blockbook", "bin/blockbook", "path to the blockbook binary")
	public := flag.String("public", "127.0.0.1:9130", "public API address")
	internal := flag.String("internal", "127.0.0.1:9030", "internal (metrics, health) address")
	dir := flag.String("dir", "", "working directory for the node and the index (default: a new temporary directory, removed at exit)")
	electrumAddr := flag.String("electrum", "127.0.0.1:50001", "Electrum server address (TCP; empty: none)")
	esploraAddr := flag.String("esplora", "127.0.0.1:3002", "Esplora REST API address (empty: none)")
	interval := flag.Duration("interval", 30*time.Second, "send a payment and mine the previous one this often (0: never)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *bin, listeners{*public, *internal, *electrumAddr, *esploraAddr}, *dir, *interval)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// listeners are the addresses blockbook serves the demo on.
type listeners struct{ public, internal, electrum, esplora string }

// fronts are blockbook's flags for the Electrum and Esplora listeners.
func (l listeners) fronts() []string {
	var args []string
	if l.electrum != "" {
		args = append(args, "-electrum="+l.electrum)
	}
	if l.esplora != "" {
		args = append(args, "-esplora="+l.esplora, "-esploraaddressprefix")
	}
	return args
}

func run(ctx context.Context, bin string, l listeners, dir string, interval time.Duration) error {
	public, internal := l.public, l.internal
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("blockbook binary %s not found (run `make build`): %w", bin, err)
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "blockbook-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	say("working directory %s", dir)

	say("starting btcd (regtest; the first run builds it, which takes a little while)")
	node, err := regtest.Start(ctx, regtest.Options{Dir: filepath.Join(dir, "btcd"), TxIndex: true})
	if err != nil {
		return err
	}
	defer node.Stop()

	// Timestamps end about now and advance one step per block, so that the
	// live blocks mined every interval keep realistic times (the HD
	// accounts' scenario adds 4 blocks to the demo's).
	step := max(interval, time.Second)
	g := chaingen.New(&chaincfg.RegressionNetParams, "demo",
		chaingen.WithTimestamps(time.Now().Add(-time.Duration(chaingen.DefaultDemo().Blocks+4)*step), step))
	if err := g.Demo(chaingen.DefaultDemo()); err != nil {
		return err
	}
	accts, err := demoAccounts(g)
	if err != nil {
		return err
	}
	if err := g.Submit(ctx, node, 1); err != nil {
		return err
	}
	h, hash := g.Tip()
	say("demo chain: %d blocks, %d transactions", h, len(g.Ledger().Txs))

	exited, stopBlockbook, err := benchproc.StartDemo(bin, dir, public, internal, map[string]any{
		"coin_name": "Regtest", "coin_shortcut": "rBTC", "coin_label": "Bitcoin Regtest",
		"rpc_url": node.RPCURL, "rpc_user": node.RPCUser, "rpc_pass": node.RPCPass, "rpc_timeout": 25,
		"parse": true, "block_addresses_to_keep": 300,
		// Blockbook's production filter settings.
		"block_golomb_filter_p": 20, "block_filter_scripts": "taproot-noordinals", "block_filter_use_zeroed_key": true,
		"mempool_golomb_filter_p": 20, "mempool_filter_scripts": "taproot", "mempool_filter_use_zeroed_key": false,
	}, l.fronts()...)
	if err != nil {
		return err
	}
	defer stopBlockbook()
	base := "http://" + public
	if err := benchproc.WaitSynced(ctx, base, uint32(h), exited); err != nil {
		return err
	}
	printURLs(base, "http://"+internal, g, hash.String(), accts, frontURLs(l, addrOf(g, chaingen.P2WPKH)))

	var pending *wire.MsgTx
	err = benchproc.Every(ctx, interval, exited, func(n int64) error {
		next, err := demoStep(ctx, g, node, uint64(n), pending)
		pending = next
		return err
	})
	if err == nil {
		say("stopping")
	}
	return err
}

// demoStep mines the payment sent at the previous step (if any) in a block, then
// sends a new payment to a demo address that stays pending until the next
// step, so that the mempool always shows one.
func demoStep(ctx context.Context, g *chaingen.Generator, node *regtest.Node, n uint64, pending *wire.MsgTx) (*wire.MsgTx, error) {
	if pending != nil {
		if _, err := g.AddBlock(pending); err != nil {
			return nil, err
		}
		if err := g.Submit(ctx, node, g.Height()); err != nil {
			return nil, err
		}
		h, _ := g.Tip()
		say("mined block %d with tx %s", h, pending.TxHash())
	}
	kinds := []chaingen.ScriptKind{chaingen.P2WPKH, chaingen.P2TR, chaingen.P2PKH, chaingen.P2SHP2WPKH}
	to, err := g.Address(kinds[n%uint64(len(kinds))], chaingen.DemoIndex)
	if err != nil {
		return nil, err
	}
	tx, err := g.CreatePayment([]chaingen.Output{{Address: to, Value: 100_000 + int64(n)}}, 5)
	if err != nil {
		return nil, err
	}
	if _, err := node.SendRawTransaction(ctx, tx); err != nil {
		return nil, err
	}
	say("sent tx %s paying %s (pending until the next block)", tx.TxHash(), to)
	return tx, nil
}

// demoAccounts adds blocks in which a BIP84 and a BIP86 account of a fixed
// seed receive, spend and move coins between their own addresses, so that
// account queries (xpub, descriptor) have something to show.
func demoAccounts(g *chaingen.Generator) ([]*chaingen.HDAccount, error) {
	var accts []*chaingen.HDAccount
	for _, purpose := range []uint32{chaingen.BIP84, chaingen.BIP86} {
		a, err := chaingen.NewHDAccount(g.Params(), chaingen.HDSeed("demo"), purpose, 0)
		if err != nil {
			return nil, err
		}
		accts = append(accts, a)
	}
	// The scenario's unmined txs are left out: the demo's own payments
	// fill the mempool.
	if _, err := g.HDScenario(accts); err != nil {
		return nil, err
	}
	return accts, nil
}

func printURLs(base, internal string, g *chaingen.Generator, tip string, accts []*chaingen.HDAccount, fronts string) {
	addr := func(k chaingen.ScriptKind) string { return addrOf(g, k) }
	var someTx string
	for txid, info := range g.Ledger().Txs {
		if info.Position > 0 {
			someTx = txid
			break
		}
	}
	fmt.Printf(`
blockbook is serving the demo chain. Try:

  explorer (HTML)     %[1]s/
  BIP84 account       %[1]s/xpub/%[10]s
  BIP86 descriptor    %[1]s/api/v2/xpub/%[11]s?details=tokenBalances&tokens=used
  status              %[1]s/api/v2
  tip block           %[1]s/api/v2/block/%[2]s
  block by height     %[1]s/api/v2/block/111
  a transaction       %[1]s/api/v2/tx/%[3]s
  P2TR address        %[1]s/api/v2/address/%[4]s?details=txs
  P2WPKH address      %[1]s/api/v2/address/%[5]s
  P2PKH address       %[1]s/api/v2/address/%[6]s?details=txslight
  P2SH-P2WPKH UTXOs   %[1]s/api/v2/utxo/%[7]s
  fee estimate        %[1]s/api/v2/estimatefee/2
  balance history     %[1]s/api/v2/balancehistory/%[4]s?groupBy=86400
  block filters       %[1]s/api/v2/block-filters/?scriptType=taproot-noordinals&lastN=5
  websocket API       %[9]s/websocket   (e.g. {"id":"1","method":"subscribeNewBlock"})
  metrics             %[8]s/metrics
  health              %[8]s/health
%[12]s
Every interval a payment to a demo address enters the mempool (see its
address page: unconfirmedBalance) and the previous one is mined in a block.
Ctrl-C stops everything.

`, base, tip, someTx, addr(chaingen.P2TR), addr(chaingen.P2WPKH), addr(chaingen.P2PKH), addr(chaingen.P2SHP2WPKH), internal,
		"ws"+strings.TrimPrefix(base, "http"), accts[0].Xpub(), url.PathEscape(accts[1].Descriptor(true)), fronts)
}

// frontURLs says where the Electrum server and the Esplora API answer.
func frontURLs(l listeners, address string) string {
	var b strings.Builder
	if l.electrum != "" {
		fmt.Fprintf(&b, "  Electrum server     %s   (TCP; e.g. electrum --regtest --oneserver --server %s:t)\n", l.electrum, l.electrum)
	}
	if l.esplora != "" {
		fmt.Fprintf(&b, "  Esplora REST API    http://%s/api/blocks/tip/height\n  Esplora address     http://%s/api/address/%s/txs\n", l.esplora, l.esplora, address)
		fmt.Fprintf(&b, "  mempool blocks      http://%s/api/v1/fees/mempool-blocks\n", l.esplora)
	}
	return b.String()
}

func addrOf(g *chaingen.Generator, k chaingen.ScriptKind) string {
	a, err := g.Address(k, chaingen.DemoIndex)
	if err != nil {
		return "?"
	}
	return a
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "demo: "+format+"\n", args...)
}
