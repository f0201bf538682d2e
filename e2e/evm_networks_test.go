package e2e

// The EVM networks: every config under configs/coins for an Ethereum-type
// coin loads, names a registered coin with Blockbook's ports and chain id,
// and is refused by a node of another chain id before anything is indexed;
// the Ethereum scenario runs on a dev node under a network's chain id and
// config, and its ledger checks pass (one network of each kind in CI, all
// with -evm.all).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/eth"
	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

var evmAll = flag.Bool("evm.all", false, "run the Ethereum scenario under every EVM network's config (CI runs one network of each kind)")

// evmNet is what Blockbook's configs/coins/<file>.json says of a network
// (ports) and the chain id the issue lists; kept here apart from the
// registry so that the test compares two sources.
type evmNet struct {
	file             string
	public, internal int
	chainID          uint64
	kind             bchain.EthChainKind
}

var evmNets = map[string]evmNet{
	"Ethereum":                         {"ethereum", 9136, 9036, 1, bchain.EthKindL1},
	"Ethereum Archive":                 {"ethereum_archive", 9116, 9016, 1, bchain.EthKindL1},
	"Ethereum Testnet Sepolia":         {"ethereum_testnet_sepolia", 19176, 19076, 11155111, bchain.EthKindL1},
	"Ethereum Testnet Sepolia Archive": {"ethereum_testnet_sepolia_archive", 19186, 19086, 11155111, bchain.EthKindL1},
	"Ethereum Testnet Hoodi":           {"ethereum_testnet_hoodi", 19106, 19006, 560048, bchain.EthKindL1},
	"Ethereum Testnet Hoodi Archive":   {"ethereum_testnet_hoodi_archive", 19126, 19026, 560048, bchain.EthKindL1},
	"Ethereum Regtest":                 {"ethereum_regtest", 19136, 19036, 0, bchain.EthKindL1},
	"Ethereum Classic":                 {"ethereum-classic", 9137, 9037, 61, bchain.EthKindETC},
	"Polygon":                          {"polygon", 9170, 9070, 137, bchain.EthKindPolygon},
	"Polygon Archive":                  {"polygon_archive", 9172, 9072, 137, bchain.EthKindPolygon},
	"BNB Smart Chain":                  {"bsc", 9164, 9064, 56, bchain.EthKindBSC},
	"BNB Smart Chain Archive":          {"bsc_archive", 9165, 9065, 56, bchain.EthKindBSC},
	"Arbitrum":                         {"arbitrum", 9305, 9205, 42161, bchain.EthKindArbitrum},
	"Arbitrum Archive":                 {"arbitrum_archive", 9306, 9206, 42161, bchain.EthKindArbitrum},
	"Arbitrum Nova":                    {"arbitrum_nova", 9307, 9207, 42170, bchain.EthKindArbitrum},
	"Arbitrum Nova Archive":            {"arbitrum_nova_archive", 9308, 9208, 42170, bchain.EthKindArbitrum},
	"Base":                             {"base", 9309, 9209, 8453, bchain.EthKindOPStack},
	"Base Archive":                     {"base_archive", 9311, 9211, 8453, bchain.EthKindOPStack},
	"Optimism":                         {"optimism", 9300, 9200, 10, bchain.EthKindOPStack},
	"Optimism Archive":                 {"optimism_archive", 9302, 9202, 10, bchain.EthKindOPStack},
	"Avalanche":                        {"avalanche", 9198, 9098, 43114, bchain.EthKindAvalanche},
	"Avalanche Archive":                {"avalanche_archive", 9199, 9099, 43114, bchain.EthKindAvalanche},
	"Robinhood Archive":                {"robinhood_archive", 9313, 9213, 4663, bchain.EthKindArbitrum},
	"Robinhood Testnet":                {"robinhood_testnet", 19177, 19077, 46630, bchain.EthKindArbitrum},
}

// evmConfig reads a shipped config as a generic document.
func evmConfig(t *testing.T, file string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "configs", "coins", file+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s.json: %v", file, err)
	}
	return doc
}

// writeEVMConfig writes a shipped config pointed at a dev node: the node's
// URLs, no fiat download (no internet here), the 4-byte directory's double
// in place of the directory, and overrides.
func writeEVMConfig(t *testing.T, file string, dev *gethdev.Node, over map[string]any) string {
	t.Helper()
	doc := evmConfig(t, file)
	doc["rpc_url"], doc["rpc_url_ws"] = dev.HTTPURL, dev.WSURL
	delete(doc, "fiat_rates")
	doc["fourByteSignatures"] = startFourByteDirectory(t)
	for k, v := range over {
		doc[k] = v
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), file+".json")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEVMNetworkConfigs: every Ethereum-type config loads and names a
// registered coin with Blockbook's ports, chain id and kind; every
// registered name has its config; and one dev node (chain id 1337) is
// refused by every name with a chain id, the datadir left uncreated.
func TestEVMNetworkConfigs(t *testing.T) {
	names := eth.NetworkNames()
	slices.Sort(names)
	if len(names) != len(evmNets) {
		t.Errorf("registered Ethereum-type names %v, want the %d of the table", names, len(evmNets))
	}
	for _, name := range names {
		want, ok := evmNets[name]
		if !ok {
			t.Errorf("%q is registered but not in the test's table", name)
			continue
		}
		cfg, err := bchain.LoadConfig(filepath.Join("..", "configs", "coins", want.file+".json"))
		if err != nil {
			t.Errorf("%s: %v", want.file, err)
			continue
		}
		if cfg.CoinName != name {
			t.Errorf("%s.json: coin_name %q, want %q", want.file, cfg.CoinName, name)
		}
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		p := b.Params
		info, _ := eth.Network(name)
		if p.PublicPort != want.public || p.InternalPort != want.internal || info.ChainID != want.chainID || p.EthKind != want.kind || info.Kind != want.kind {
			t.Errorf("%s: ports %d/%d chain id %d kind %v, want %d/%d %d %v", name, p.PublicPort, p.InternalPort, info.ChainID, p.EthKind, want.public, want.internal, want.chainID, want.kind)
		}
		if info.Archive != (strings.HasSuffix(name, " Archive") || name == "Ethereum Regtest") {
			t.Errorf("%s: archive %v", name, info.Archive)
		}
		if b.Close != nil {
			_ = b.Close()
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startDevNode(t, gethdev.Options{})
	for _, name := range names {
		want := evmNets[name]
		if want.chainID == 0 {
			continue // the regtest coin accepts any dev chain
		}
		t.Run(want.file, func(t *testing.T) {
			cfg := writeEVMConfig(t, want.file, dev, nil)
			dataDir := filepath.Join(t.TempDir(), "db")
			o := &app.Options{BlockchainCfg: cfg, DataDir: dataDir, Sync: true, Public: "127.0.0.1:0", Internal: "127.0.0.1:0",
				Workers: 1, DBCache: 32 << 20, DBMaxOpenFiles: 256, Rollback: -1, SyncMemoryMB: 64, LogFormat: "text"}
			logs := &syncbuf.Buffer{}
			rctx, rcancel := context.WithTimeout(ctx, waitFor)
			defer rcancel()
			err := app.Run(rctx, o, slog.New(slog.NewTextHandler(logs, nil)))
			msg := fmt.Sprintf("chain id mismatch: the node is on chain id %d, %s is chain id %d", gethdev.DefaultChainID, name, want.chainID)
			if err == nil || !strings.Contains(err.Error(), msg) || !errors.Is(err, eth.ErrChainID) {
				t.Fatalf("start against a chain id %d node: %v, want an error saying %q\n%s", gethdev.DefaultChainID, err, msg, logs)
			}
			if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the datadir was created (%v): something was opened before the chain id check", err)
			}
		})
	}
}

// evmScenarioNames are the networks the scenario runs under: one of each
// kind (a plain L1 that is not Ethereum, OP-stack, Arbitrum, Avalanche),
// or every name with a chain id under -evm.all.
func evmScenarioNames() []string {
	if !*evmAll {
		return []string{"Polygon", "Optimism", "Arbitrum", "Avalanche"}
	}
	var out []string
	for name, n := range evmNets {
		if n.chainID != 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestEVMNetworkScenario runs ethgen's scenario on a dev node under each
// network's chain id and serves it with that network's shipped config:
// status, balances, nonces, tokens, token and internal transfers, blocks,
// the mempool (with disableMempoolSync: loaded by resync, and a tx sent
// through the server listed at once), and a reorg; on Polygon and Optimism
// also the real wallet client (trezor_eth_test.go).
func TestEVMNetworkScenario(t *testing.T) {
	for _, name := range evmScenarioNames() {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) { runEVMScenario(t, name) })
	}
}

// startEVMNetworkE2E plays the scenario on a dev node under the network's
// chain id and serves it with the network's shipped config (pointed at the
// node, no fiat download, the 4-byte directory double); it returns the
// stack and that config.
func startEVMNetworkE2E(t *testing.T, name string) (*ethE2E, map[string]any) {
	t.Helper()
	net := evmNets[name]
	dev, ledger, _ := startEthScenario(t, gethdev.Options{ChainID: net.chainID})
	// The scenario's internal transfers are checked, so blocks are traced
	// under the non-archive configs too.
	cfg := writeEVMConfig(t, net.file, dev, map[string]any{"processInternalTransactions": true})
	e := &ethE2E{dev: dev, ledger: ledger, inst: startInProcess(t, cfg, t.TempDir(), nil)}
	e.waitHead(t)
	waitStatus(t, e.inst.base, func(s *api.SystemInfo) bool {
		return s.Blockbook.InSyncMempool && s.Blockbook.MempoolSize == len(ledger.Pending)
	})
	return e, evmConfig(t, net.file)
}

func runEVMScenario(t *testing.T, name string) {
	net := evmNets[name]
	e, doc := startEVMNetworkE2E(t, name)
	var st api.SystemInfo
	e.get(t, "/api/v2", &st)
	wantChain := "mainnet"
	if info, _ := eth.Network(name); info.Testnet {
		wantChain = fmt.Sprint("testnet ", net.chainID)
	}
	if st.Blockbook.Coin != name || st.Backend.Chain != wantChain || st.Backend.Error != "" {
		t.Errorf("status: coin %q chain %q error %q, want %q %q", st.Blockbook.Coin, st.Backend.Chain, st.Backend.Error, name, wantChain)
	}
	// Hoodi's configs name a consensus client on localhost, absent here.
	if _, set := doc["consensusNodeVersion"]; set != (st.Backend.ConsensusVersion == "unreachable-locally") {
		t.Errorf("status: consensus_version %q with consensusNodeVersion %v", st.Backend.ConsensusVersion, doc["consensusNodeVersion"])
	}
	for _, a := range e.ledger.SortedAddresses() {
		e.checkAddress(t, a, e.ledger.Addresses[a])
	}
	for h, tx := range e.ledger.Txs {
		e.checkTx(t, h, tx)
	}
	for a, c := range e.ledger.Contracts {
		e.checkContract(t, a, c)
	}
	e.checkBlocks(t)
	if trezorEVMNetworks[name] {
		e.runTrezorEVM(t, name, doc)
	}
	e.checkSentTxInMempool(t, doc["disableMempoolSync"] == true)
	e.checkReorg(t)
}

// checkSentTxInMempool sends a transfer through the server: without the
// pending-tx subscription (disableMempoolSync) it must be in the mempool
// when sendtx answers; with it, once the subscription delivers it.
func (e *ethE2E) checkSentTxInMempool(t *testing.T, noSubscription bool) {
	t.Helper()
	to := common.Address{0x5e, 0x47, 0x10}
	tx := sendDevTransfer(t, e.dev, e.inst.base, to, 12345)
	deadline := time.Now().Add(waitFor)
	for {
		var a api.Address
		e.get(t, "/api/v2/address/"+to.Hex()+"?details=txids", &a)
		if a.UnconfirmedTxs == 1 && len(a.Txids) == 1 && a.Txids[0] == tx.Hash().Hex() {
			return
		}
		if noSubscription || time.Now().After(deadline) {
			t.Fatalf("the sent tx %s is not in the mempool (no subscription: %v): %+v", tx.Hash().Hex(), noSubscription, a)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startDevNode starts an in-process geth dev node, stopped at cleanup.
func startDevNode(t *testing.T, opts gethdev.Options) *gethdev.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, err := gethdev.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	return dev
}

// sendDevTransfer signs a payment of wei from the dev account to the
// address and sends it through the server's sendtx.
func sendDevTransfer(t *testing.T, dev *gethdev.Node, base string, to common.Address, wei int64) *types.Transaction {
	t.Helper()
	ctx := context.Background()
	cl := dev.Client()
	nonce, err := cl.PendingNonceAt(ctx, dev.DevAddr)
	if err != nil {
		t.Fatal(err)
	}
	tip := big.NewInt(1_000_000_000)
	head, err := cl.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	tx, err := types.SignNewTx(dev.DevKey, types.LatestSignerForChainID(dev.ChainID), &types.DynamicFeeTx{
		ChainID: dev.ChainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21000, To: &to, Value: big.NewInt(wei),
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var res api.Result
	getJSON(t, base+"/api/v2/sendtx/"+common.Bytes2Hex(raw), 200, &res)
	if res.Result != tx.Hash().Hex() {
		t.Fatalf("sendtx answered %q, want %s", res.Result, tx.Hash().Hex())
	}
	return tx
}

// trezorEVMNetworks are the networks the wallet client also runs against
// (in TestEVMNetworkScenario, on that network's scenario): Polygon (its
// shipped config: legacy gas-price fees, the pending-tx subscription) and
// Optimism (gas-price fees too, and disableMempoolSync: the payment goes
// through the server, as a wallet's does).
var trezorEVMNetworks = map[string]bool{"Polygon": true, "Optimism": true}

// runTrezorEVM runs the same client checks as TestTrezorClientEthereum
// against a server with network name's config (doc); it changes the
// chain (a payment, a token transfer, a block), so it runs after the
// ledger checks.
func (e *ethE2E) runTrezorEVM(t *testing.T, name string, doc map[string]any) {
	t.Helper()
	node := trezorPrereqs(t)
	facts := trezorEthFactsOf(t, e)
	shortcut, _ := doc["coin_shortcut"].(string)
	network, _ := doc["network"].(string)
	if network == "" {
		network = shortcut
	}
	facts.Info.Name, facts.Info.Shortcut, facts.Info.Network, facts.Info.Testnet = name, shortcut, network, false
	facts.Fees.EIP1559 = doc["eip1559Fees"] == true
	gp, err := e.dev.Client().SuggestGasPrice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	facts.Fees.GasPrice = gp.String()
	facts.PayViaServer = doc["disableMempoolSync"] == true
	data, err := json.MarshalIndent(facts, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	factsPath := filepath.Join(t.TempDir(), "facts.json")
	if err := os.WriteFile(factsPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.runTrezorScript(t, node, factsPath, facts)
}

// trezorPayViaServer sends the payment through the server's sendtx.
func (e *ethE2E) trezorPayViaServer(t *testing.T, tx *types.Transaction) string {
	raw, err := tx.MarshalBinary()
	if err != nil {
		return "error " + err.Error()
	}
	var res api.Result
	e.get(t, "/api/v2/sendtx/"+common.Bytes2Hex(raw), &res)
	return "tx " + res.Result
}
