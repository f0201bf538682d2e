// Command demoeth runs the Ethereum-type stack on a laptop: an in-process
// go-ethereum dev node (archive, with the debug API), ethgen's scenario of
// every tx type with ERC20/721/1155 tokens, internal and failed transfers,
// and blockbook indexing it and serving the API and explorer. Every
// -interval it sends a payment and seals a block. It is what
// `make run-eth` starts.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

func main() {
	bin := flag.String("blockbook", "bin/blockbook", "path to the blockbook binary")
	public := flag.String("public", "127.0.0.1:9136", "public API address")
	internal := flag.String("internal", "127.0.0.1:9036", "internal (metrics, health) address")
	interval := flag.Duration("interval", 30*time.Second, "send a payment and seal a block this often (0: never)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *bin, *public, *internal, *interval)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demoeth:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, public, internal string, interval time.Duration) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("blockbook binary %s not found (run `make build`): %w", bin, err)
	}
	dir, err := os.MkdirTemp("", "blockbook-demoeth-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	say("working directory %s", dir)

	dev, err := gethdev.Start(ctx, gethdev.Options{Dir: filepath.Join(dir, "geth")})
	if err != nil {
		return err
	}
	defer dev.Stop()
	ledger, err := ethgen.Scenario(ctx, dev)
	if err != nil {
		return err
	}
	h, _ := dev.Head()
	say("dev chain: %d blocks, %d txs (%d pending), %d contracts; node RPC %s", h, len(ledger.Txs), len(ledger.Pending), len(ledger.Contracts), dev.HTTPURL)

	exited, stopBlockbook, err := benchproc.StartDemo(bin, dir, public, internal, map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": dev.HTTPURL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 25, "block_addresses_to_keep": 300, "eip1559Fees": true, "processInternalTransactions": true,
	})
	if err != nil {
		return err
	}
	defer stopBlockbook()
	base := "http://" + public
	if err := benchproc.WaitSynced(ctx, base, uint32(h), exited); err != nil {
		return err
	}
	printURLs(base, "http://"+internal, ledger)

	var step func(int64) error
	if interval > 0 {
		w, err := ethgen.NewWallet(ctx, dev.Client())
		if err != nil {
			return err
		}
		step = payStep(ctx, dev, w, interval)
	}
	err = benchproc.Every(ctx, interval, exited, step)
	if err == nil {
		say("stopping")
	}
	return err
}

// payStep returns the demo's step: send a payment from the dev account,
// then seal it in a block.
func payStep(ctx context.Context, dev *gethdev.Node, w *ethgen.Wallet, interval time.Duration) func(int64) error {
	dev0 := ethgen.AccountFromKey("dev", dev.DevKey)
	return func(n int64) error {
		n++ // payments count from 1
		to := ethgen.NewAccount(fmt.Sprintf("demo-%d", n%5)).Addr
		tx, err := w.Transfer(ctx, dev0, to, new(big.Int).Mul(big.NewInt(n), big.NewInt(1e15)), 2)
		if err != nil {
			return err
		}
		say("sent tx %s paying %s (pending a moment)", tx.Hash(), to)
		time.Sleep(min(interval/3, 5*time.Second))
		hash, err := dev.Commit()
		if err != nil {
			return err
		}
		say("sealed block %s", hash)
		return nil
	}
}

// printURLs shows where to look, with addresses and txs of the scenario.
func printURLs(base, internal string, l *ethgen.Ledger) {
	var holder, contract common.Address
	var tokenTx common.Hash
	most := 0
	for _, a := range l.SortedAddresses() {
		if n := len(l.Addresses[a].Tokens); n > most {
			holder, most = a, n
		}
	}
	for a, c := range l.Contracts {
		if c.Standard == ethgen.ERC20 && (contract == (common.Address{}) || strings.Compare(a.Hex(), contract.Hex()) < 0) {
			contract = a
		}
	}
	for h, tx := range l.Txs {
		if !tx.Pending && len(tx.TokenTransfers) > 0 && len(tx.InternalTransfers) == 0 {
			tokenTx = h
			break
		}
	}
	fmt.Printf(`
blockbook is serving the Ethereum dev chain. Try:

  explorer (HTML)     %[1]s/
  token holder        %[1]s/address/%[2]s
  ERC20 contract      %[1]s/address/%[3]s
  token transfer tx   %[1]s/tx/%[4]s
  status              %[1]s/api/v2
  address (REST)      %[1]s/api/v2/address/%[2]s?details=tokenBalances
  tx (REST)           %[1]s/api/v2/tx/%[4]s
  contract (REST)     %[1]s/api/v2/contract/%[3]s
  fee estimate        %[1]s/api/v2/estimatefee/2
  websocket API       %[5]s/websocket
  metrics             %[6]s/metrics

Every interval a payment is sent and a block sealed. Ctrl-C stops everything.

`, base, holder.Hex(), contract.Hex(), tokenTx.Hex(), "ws"+strings.TrimPrefix(base, "http"), internal)
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "demoeth: "+format+"\n", args...)
}
