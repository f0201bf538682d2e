package e2e

// ERC-4626 vaults (protocols=erc4626) on the dev chain: Multicall3 from
// its real pre-signed deployment, OpenZeppelin's ERC-4626 vault over a
// 6-decimal token, and the answers checked against the vault's own state
// read straight from the node.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// multicallCounter forwards JSON-RPC over HTTP to the node and counts the
// aggregate3 eth_calls to Multicall3 (single requests and batches).
type multicallCounter struct {
	target  string
	mu      sync.Mutex
	calls   int
	rewrite func([]byte) []byte // of the node's answers (eth_l1fee_test.go)
}

func (m *multicallCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var reqs []struct {
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		_ = json.Unmarshal(body, &reqs)
	} else {
		reqs = reqs[:0]
		var one struct {
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &one) == nil {
			reqs = append(reqs, one)
		}
	}
	for _, q := range reqs {
		var msg struct {
			To   string `json:"to"`
			Data string `json:"data"`
		}
		if q.Method != "eth_call" || len(q.Params) == 0 || json.Unmarshal(q.Params[0], &msg) != nil {
			continue
		}
		// aggregate3's selector: the indexer's own metadata calls to the
		// Multicall3 contract (name, decimals) are not counted.
		if strings.EqualFold(msg.To, ethgen.Multicall3Address.Hex()) && strings.HasPrefix(msg.Data, "0x82ad56cb") {
			m.mu.Lock()
			m.calls++
			m.mu.Unlock()
		}
	}
	resp, err := http.Post(m.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	m.mu.Lock()
	rewrite := m.rewrite
	m.mu.Unlock()
	if rewrite != nil {
		if out, err := io.ReadAll(resp.Body); err == nil {
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(rewrite(out))
			return
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (m *multicallCounter) setRewrite(f func([]byte) []byte) {
	m.mu.Lock()
	m.rewrite = f
	m.mu.Unlock()
}

func (m *multicallCounter) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// vaultChain is the dev chain of the test: a holder with TUSD and vault
// shares, and a depositor whose shares make the supply differ from the
// holder's.
type vaultChain struct {
	dev               *gethdev.Node
	w                 *ethgen.Wallet
	devAcc, holder    *ethgen.Account
	usd, vault        common.Address
	usdC, vaultC      *ethgen.Contract
	counter           *multicallCounter
	e                 *ethE2E
	tipHeight         uint64
	tipHash           common.Hash
	holderDeposit     *big.Int
	vaultDecimalsUnit *big.Int
	ens               *ethgen.ENS // ens_test.go
}

func (c *vaultChain) send(t *testing.T, from *ethgen.Account, to common.Address, ct *ethgen.Contract, method string, args ...any) {
	t.Helper()
	data := ct.MustCalldata(method, args...)
	if _, err := c.w.Send(context.Background(), from, &to, data, ethgen.TxOpts{Type: types.DynamicFeeTxType, Gas: 400_000}); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

func (c *vaultChain) commit(t *testing.T) {
	t.Helper()
	h, err := c.dev.Commit()
	if err != nil {
		t.Fatal(err)
	}
	c.tipHeight, c.tipHash = c.dev.Head()
	if c.tipHash != h {
		t.Fatalf("head %s after commit of %s", c.tipHash, h)
	}
}

// call reads a uint256 or address method of a contract at the tip.
func (c *vaultChain) call(t *testing.T, to common.Address, ct *ethgen.Contract, method string, args ...any) any {
	t.Helper()
	data := ct.MustCalldata(method, args...)
	out, err := c.dev.Client().CallContract(context.Background(), ethereum.CallMsg{To: &to, Data: data}, new(big.Int).SetUint64(c.tipHeight))
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	vals, err := ct.ABI.Unpack(method, out)
	if err != nil || len(vals) != 1 {
		t.Fatalf("%s: %v %v", method, vals, err)
	}
	return vals[0]
}

func (c *vaultChain) uint(t *testing.T, to common.Address, ct *ethgen.Contract, method string, args ...any) *big.Int {
	t.Helper()
	return c.call(t, to, ct, method, args...).(*big.Int)
}

func startVaultChain(t *testing.T) *vaultChain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startDevNode(t, gethdev.Options{})
	if err := ethgen.DeployMulticall3(ctx, dev); err != nil {
		t.Fatal(err)
	}
	w, err := ethgen.NewWallet(ctx, dev.Client())
	if err != nil {
		t.Fatal(err)
	}
	c := &vaultChain{dev: dev, w: w, devAcc: ethgen.AccountFromKey("dev", dev.DevKey), holder: ethgen.NewAccount("vault-holder"),
		usdC: ethgen.MustContract(ethgen.TestUSDContract), vaultC: ethgen.MustContract(ethgen.TestVaultContract),
		vaultDecimalsUnit: big.NewInt(1_000_000_000)} // 6 + the vault's 3 decimals of offset
	usdUnit := big.NewInt(1_000_000)
	tusd := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), usdUnit) }
	if _, c.usd, err = w.Deploy(ctx, c.devAcc, c.usdC, tusd(1_000_000)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Transfer(ctx, c.devAcc, c.holder.Addr, big.NewInt(1e18), types.DynamicFeeTxType); err != nil {
		t.Fatal(err)
	}
	c.commit(t)
	if _, c.vault, err = w.Deploy(ctx, c.devAcc, c.vaultC, c.usd); err != nil {
		t.Fatal(err)
	}
	c.send(t, c.devAcc, c.usd, c.usdC, "transfer", c.holder.Addr, tusd(10_000))
	c.commit(t)
	// The holder deposits 2,500.123456 TUSD, the dev account 1,000; then
	// 37.5 TUSD reach the vault without shares (its yield), so a share is
	// worth more than it cost.
	c.holderDeposit = big.NewInt(2_500_123_456)
	c.send(t, c.holder, c.usd, c.usdC, "approve", c.vault, tusd(10_000))
	c.send(t, c.devAcc, c.usd, c.usdC, "approve", c.vault, tusd(10_000))
	c.commit(t)
	c.send(t, c.holder, c.vault, c.vaultC, "deposit", c.holderDeposit, c.holder.Addr)
	c.send(t, c.devAcc, c.vault, c.vaultC, "deposit", tusd(1_000), c.devAcc.Addr)
	c.commit(t)
	c.send(t, c.devAcc, c.usd, c.usdC, "transfer", c.vault, big.NewInt(37_500_000))
	c.commit(t)
	ensKeys := c.deployENS(t)

	c.counter = &multicallCounter{target: dev.HTTPURL}
	proxy := httptest.NewServer(c.counter)
	t.Cleanup(proxy.Close)
	cfgMap := map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": proxy.URL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 20, "block_addresses_to_keep": 100, "eip1559Fees": true,
	}
	for k, v := range ensKeys {
		cfgMap[k] = v
	}
	raw, err := json.Marshal(cfgMap)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	c.e = &ethE2E{dev: dev, inst: startInProcess(t, cfg, t.TempDir(), nil)}
	c.e.waitHead(t)
	return c
}

// TestEthErc4626Vault: protocols=erc4626 marks the vault's share token
// in an address's tokens (REST and websocket) and fills getContractInfo's
// protocols.erc4626 with the vault's data at the indexed tip, equal to the
// vault's own answers and to what its state (asset balance, share
// supply) gives by ERC-4626's conversion; all read through Multicall3 in
// batches (two for a vault seen the first time, one after, one for all
// the tokens of an address) and cached for the block; a new block's
// answer follows the vault's new state; unknown protocols are refused.
func TestEthErc4626Vault(t *testing.T) {
	c := startVaultChain(t)
	e := c.e
	holder := c.holder.Addr.Hex()

	// Without protocols, nothing is marked or read.
	var plain api.Address
	e.get(t, "/api/v2/address/"+holder+"?details=tokenBalances", &plain)
	for _, tk := range plain.Tokens {
		if tk.Protocols != nil {
			t.Errorf("without protocols, token %s has protocols %v", tk.Contract, tk.Protocols)
		}
	}
	var plainContract api.ContractInfo
	e.get(t, "/api/v2/contract/"+c.vault.Hex(), &plainContract)
	if plainContract.Protocols != nil || c.counter.count() != 0 {
		t.Fatalf("without protocols: %+v, %d multicalls", plainContract.Protocols, c.counter.count())
	}

	// The address's tokens: the vault share marked, its asset not; one
	// batch probes both, and the same block asks nothing again.
	var marked api.Address
	markedWire := getWire(t, e, "/api/v2/address/"+holder+"?details=tokenBalances&protocols=erc4626", &marked)
	checkVaultMarks(t, c, marked.Tokens)
	if n := c.counter.count(); n != 1 {
		t.Errorf("the address's tokens took %d multicalls, want 1 batch", n)
	}
	e.golden(t, "address-erc4626-tokenbalances", markedWire)
	ws := newWS(t, e.inst.base)
	var wsMarked api.Address
	var raw json.RawMessage
	ws.ok("getAccountInfo", map[string]any{"descriptor": holder, "details": "tokenBalances", "protocols": []string{"erc4626"}}, &raw)
	e.golden(t, "ws-getAccountInfo-erc4626", wireOf(t, raw, &wsMarked))
	checkVaultMarks(t, c, wsMarked.Tokens)

	// The vault's data: the asset is known from the probe, so one batch.
	before := c.counter.count()
	var ci api.ContractInfo
	ciWire := getWire(t, e, "/api/v2/contract/"+c.vault.Hex()+"?protocols=erc4626", &ci)
	checkVaultData(t, c, &ci)
	if n := c.counter.count() - before; n != 1 {
		t.Errorf("the vault's data took %d multicalls, want 1", n)
	}
	e.golden(t, "contract-erc4626-vault", ciWire)
	var wsCI api.ContractInfo
	ws.ok("getContractInfo", map[string]any{"contract": c.vault.Hex(), "protocols": []string{"erc4626"}}, &raw)
	e.golden(t, "ws-getContractInfo-erc4626", wireOf(t, raw, &wsCI))
	checkVaultData(t, c, &wsCI)
	if n := c.counter.count() - before; n != 1 {
		t.Errorf("the same block's second answer took %d more multicalls, want none (cached)", n-1)
	}
	// The holder's position, as a wallet computes it from the two answers.
	var share *api.Token
	for i := range marked.Tokens {
		if strings.EqualFold(marked.Tokens[i].Contract, c.vault.Hex()) {
			share = &marked.Tokens[i]
		}
	}
	if share == nil || share.Balance == nil {
		t.Fatalf("the holder's vault token: %+v", share)
	}
	shares := (*big.Int)(share.Balance)
	if want := c.uint(t, c.vault, c.vaultC, "balanceOf", c.holder.Addr); shares.Cmp(want) != 0 {
		t.Errorf("the holder's shares %s, the vault says %s", shares, want)
	}
	position := new(big.Int).Quo(new(big.Int).Mul(shares, (*big.Int)(ci.Protocols.Erc4626.ConvertToAssets1Share)), c.vaultDecimalsUnit)
	exact := c.uint(t, c.vault, c.vaultC, "convertToAssets", shares)
	// One whole share's price, rounded down, times the shares loses at
	// most shares/10^9 + 1 base units.
	slack := new(big.Int).Add(new(big.Int).Quo(shares, c.vaultDecimalsUnit), big.NewInt(1))
	if d := new(big.Int).Sub(exact, position); d.Sign() < 0 || d.Cmp(slack) > 0 || exact.Cmp(c.holderDeposit) <= 0 {
		t.Errorf("the holder's position from the answers %s, the vault's convertToAssets %s (deposited %s)", position, exact, c.holderDeposit)
	}

	// The asset itself is no vault, and a contract of another standard is
	// not asked.
	var assetCI api.ContractInfo
	e.get(t, "/api/v2/contract/"+c.usd.Hex()+"?protocols=erc4626", &assetCI)
	if assetCI.Protocols != nil {
		t.Errorf("the asset token has protocols %+v", assetCI.Protocols)
	}

	// A new block with a deposit and more yield: the answer follows it,
	// with the asset known, in one batch.
	c.send(t, c.holder, c.vault, c.vaultC, "deposit", big.NewInt(777_000_001), c.holder.Addr)
	c.send(t, c.devAcc, c.usd, c.usdC, "transfer", c.vault, big.NewInt(12_345_678))
	c.commit(t)
	e.waitHead(t)
	before = c.counter.count()
	var next api.ContractInfo
	e.get(t, "/api/v2/contract/"+c.vault.Hex()+"?protocols=erc4626", &next)
	checkVaultData(t, c, &next)
	if next.Protocols.Erc4626.TotalAssets.String() == ci.Protocols.Erc4626.TotalAssets.String() {
		t.Errorf("the next block's total assets %s equal the previous block's", next.Protocols.Erc4626.TotalAssets)
	}
	if n := c.counter.count() - before; n != 1 {
		t.Errorf("the next block's answer took %d multicalls, want 1", n)
	}

	// Bad input: Blockbook's errors, 400 and not a panic.
	for _, path := range []string{"/api/v2/address/" + holder + "?protocols=erc4626,bogus", "/api/v2/contract/" + c.vault.Hex() + "?protocols=bogus"} {
		var er struct {
			Error string `json:"error"`
		}
		getJSON(t, e.inst.base+path, 400, &er)
		if er.Error != "Unknown protocol: bogus" {
			t.Errorf("%s: %q", path, er.Error)
		}
		if strings.Contains(path, "contract") {
			e.golden(t, "error-unknown-protocol", map[string]any{"error": er.Error})
		}
	}
	ws.fails("getContractInfo", map[string]any{"contract": c.vault.Hex(), "protocols": []string{"bogus"}}, "Unknown protocol: bogus")
	ws.fails("getAccountInfo", map[string]any{"descriptor": holder, "protocols": []string{"x"}}, "Unknown protocol: x")

	c.checkENS(t)
	c.runWalletClient(t)
	c.checkExplorerTokens(t) // eth_nft_test.go
}

// runWalletClient runs @trezor/blockchain-link against the stack
// (tools/js/trezor-erc4626.mjs) with the holder's position as the vault
// computes it (convertToAssets of its shares) at the tip.
func (c *vaultChain) runWalletClient(t *testing.T) {
	t.Helper()
	node := trezorPrereqs(t)
	shares := c.uint(t, c.vault, c.vaultC, "balanceOf", c.holder.Addr)
	facts := map[string]any{
		"holder": c.holder.Addr.Hex(), "vault": c.vault.Hex(), "asset": c.usd.Hex(), "shareDecimals": 9,
		"shares": shares.String(), "position": c.uint(t, c.vault, c.vaultC, "convertToAssets", shares).String(),
		"slack": new(big.Int).Add(new(big.Int).Quo(shares, c.vaultDecimalsUnit), big.NewInt(1)).String(),
	}
	raw, err := json.Marshal(facts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "facts.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	runClientScript(t, node, "../tools/js/trezor-erc4626.mjs", c.e.inst.base, path, c.e.inst.logs, func(string) (string, bool) { return "", false })
}

// getWire gets a REST answer into out and returns it as generic JSON
// (for the goldens, which keep the wire's fields).
func getWire(t *testing.T, e *ethE2E, path string, out any) any {
	t.Helper()
	var raw json.RawMessage
	e.get(t, path, &raw)
	return wireOf(t, raw, out)
}

func wireOf(t *testing.T, raw json.RawMessage, out any) any {
	t.Helper()
	var generic any
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	return generic
}

func checkVaultMarks(t *testing.T, c *vaultChain, tokens []api.Token) {
	t.Helper()
	seen := 0
	for _, tk := range tokens {
		switch {
		case strings.EqualFold(tk.Contract, c.vault.Hex()):
			seen++
			if len(tk.Protocols) != 1 || tk.Protocols[0] != "erc4626" {
				t.Errorf("the vault token's protocols %v, want [erc4626]", tk.Protocols)
			}
		case strings.EqualFold(tk.Contract, c.usd.Hex()):
			seen++
			if tk.Protocols != nil {
				t.Errorf("the asset token's protocols %v, want none", tk.Protocols)
			}
		}
	}
	if seen != 2 {
		t.Errorf("the holder's tokens %+v lack the vault or its asset", tokens)
	}
}

// checkVaultData compares protocols.erc4626 with the vault at the tip:
// its own answers, and ERC-4626's conversion (OpenZeppelin's, with 10^3
// virtual shares and 1 virtual asset) of its state: the asset balance it
// holds and its share supply, read from the tokens.
func checkVaultData(t *testing.T, c *vaultChain, ci *api.ContractInfo) {
	t.Helper()
	if ci.BlockHeight != uint32(c.tipHeight) || ci.Protocols == nil || ci.Protocols.Erc4626 == nil {
		t.Fatalf("contract info at %d (tip %d): protocols %+v", ci.BlockHeight, c.tipHeight, ci.Protocols)
	}
	v := ci.Protocols.Erc4626
	if v.Error != "" {
		t.Errorf("vault data error %q", v.Error)
	}
	if v.Share == nil || !strings.EqualFold(v.Share.Contract, c.vault.Hex()) || v.Share.Name != "Test USD Vault" || v.Share.Symbol != "vTUSD" || v.Share.Decimals != 9 {
		t.Errorf("share %+v", v.Share)
	}
	assetAddr := c.call(t, c.vault, c.vaultC, "asset").(common.Address)
	if v.Asset == nil || v.Asset.Contract != assetAddr.Hex() || assetAddr != c.usd || v.Asset.Name != "Test USD" || v.Asset.Symbol != "TUSD" || v.Asset.Decimals != 6 {
		t.Errorf("asset %+v, the vault's asset() %s", v.Asset, assetAddr.Hex())
	}
	assetUnit := big.NewInt(1_000_000)
	held := c.uint(t, c.usd, c.usdC, "balanceOf", c.vault)
	supply := c.uint(t, c.vault, c.vaultC, "totalSupply")
	ta1 := new(big.Int).Add(held, big.NewInt(1))
	ts1 := new(big.Int).Add(supply, big.NewInt(1000))
	toAssets := new(big.Int).Quo(new(big.Int).Mul(c.vaultDecimalsUnit, ta1), ts1)
	toShares := new(big.Int).Quo(new(big.Int).Mul(assetUnit, ts1), ta1)
	for _, f := range []struct {
		name       string
		got        *api.Amount
		state, own *big.Int
	}{
		{"totalAssets", v.TotalAssets, held, c.uint(t, c.vault, c.vaultC, "totalAssets")},
		{"convertToAssets1Share", v.ConvertToAssets1Share, toAssets, c.uint(t, c.vault, c.vaultC, "convertToAssets", c.vaultDecimalsUnit)},
		{"previewRedeem1Share", v.PreviewRedeem1Share, toAssets, c.uint(t, c.vault, c.vaultC, "previewRedeem", c.vaultDecimalsUnit)},
		{"convertToShares1Asset", v.ConvertToShares1Asset, toShares, c.uint(t, c.vault, c.vaultC, "convertToShares", assetUnit)},
		{"previewDeposit1Asset", v.PreviewDeposit1Asset, toShares, c.uint(t, c.vault, c.vaultC, "previewDeposit", assetUnit)},
	} {
		if f.got == nil || f.got.String() != f.state.String() || f.state.Cmp(f.own) != 0 {
			t.Errorf("%s: answered %v, from the vault's state %s, the vault says %s", f.name, f.got, f.state, f.own)
		}
	}
	if toAssets.Cmp(big.NewInt(1_000_000)) <= 0 {
		t.Errorf("a share is worth %s base units: the yield did not raise it", toAssets)
	}
}
