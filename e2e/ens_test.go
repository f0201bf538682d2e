package e2e

// ENS forward resolution on the ERC-4626 test's dev chain: ENS's own
// registry, .eth base registrar and public resolver (bytecode ENS
// published, tools/ethgen/ens) deployed there, with a name that resolves
// to the vault holder, one whose registration lapsed (still pointing at
// the holder), one registered without a resolver, and one never
// registered.

import (
	"context"
	"encoding/json"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

// deployENS deploys ENS and registers the names; it returns the config
// keys that name the contracts.
func (c *vaultChain) deployENS(t *testing.T) map[string]any {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("ENS deployed and names registered in %v", time.Since(start)) }()
	ctx := context.Background()
	ens, err := ethgen.DeployENS(ctx, c.w, c.devAcc)
	if err != nil {
		t.Fatal(err)
	}
	c.commit(t)
	for _, n := range []struct {
		label    string
		duration int64
		to       bool
	}{{"vaultholder", 365 * 24 * 3600, true}, {"lapsed", 1, true}, {"bare", 365 * 24 * 3600, false}} {
		addr := c.holder.Addr
		if !n.to {
			addr = [20]byte{}
		}
		if err := ens.Register(ctx, n.label, n.duration, addr); err != nil {
			t.Fatal(err)
		}
	}
	c.commit(t)
	c.ens = ens
	return map[string]any{"ens_registry": ens.Registry.Hex(), "ens_base_registrar": ens.BaseRegistrar.Hex()}
}

// checkENS: address/{name} and getAccountInfo answer the holder's account
// for the live name (any case), and Blockbook's errors (400, never 500)
// for the lapsed, resolver-less, unknown and malformed names; the
// explorer's search goes to the holder's page.
func (c *vaultChain) checkENS(t *testing.T) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("ENS checks took %v", time.Since(start)) }()
	e := c.e
	ens := c.ens
	// The chain agrees: the live name resolves to the holder, the lapsed
	// one too (only its expiry stops it), and the unknown one has no
	// expiry. The lapsed name's expiry must be in the past by the clock.
	expiry := func(label string) int64 {
		out, err := c.dev.Client().CallContract(context.Background(), ethereum.CallMsg{To: &ens.BaseRegistrar,
			Data: append(crypto.Keccak256([]byte("nameExpires(uint256)"))[:4], crypto.Keccak256([]byte(label))...)}, nil)
		if err != nil || len(out) != 32 {
			t.Fatalf("nameExpires(%s): %x %v", label, out, err)
		}
		return new(big.Int).SetBytes(out).Int64()
	}
	if api.ENSNameHash("vaultholder.eth") != ens.Node("vaultholder") ||
		api.ENSNameHash("eth").Hex() != "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae" { // EIP-137's example
		t.Fatalf("namehash differs: %s", api.ENSNameHash("eth").Hex())
	}
	live, lapsed := expiry("vaultholder"), expiry("lapsed")
	if live < time.Now().Unix()+300*24*3600 || lapsed == 0 || expiry("nobody") != 0 {
		t.Fatalf("expiries: live %d lapsed %d", live, lapsed)
	}
	waitFrom := time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Unix() <= lapsed; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the lapsed name expires at %d, the clock is at %d", lapsed, time.Now().Unix())
		}
	}
	t.Logf("waited %v for the lapsed name's expiry", time.Since(waitFrom))

	holder := c.holder.Addr.Hex()
	var direct, byName api.Address
	e.get(t, "/api/v2/address/"+holder+"?details=tokenBalances", &direct)
	wire := getWire(t, e, "/api/v2/address/VaultHolder.ETH?details=tokenBalances", &byName)
	if byName.Address != holder || byName.Balance.String() != direct.Balance.String() || byName.Txs != direct.Txs || len(byName.Tokens) != len(direct.Tokens) {
		t.Errorf("vaultholder.eth answers %s (balance %s, %d txs), the holder %s (%s, %d txs)",
			byName.Address, byName.Balance, byName.Txs, holder, direct.Balance, direct.Txs)
	}
	e.golden(t, "address-ens", wire)
	l := &liveCheck{t: t, c: openAPIChecker(t), base: e.inst.base, asked: map[openapicheck.Op]int{}}
	l.get("/api/v2/address/vaultholder.eth", 200)
	l.get("/api/v2/address/lapsed.eth", 400)

	errs := map[string]string{
		"lapsed.eth":          "ENS name expired",
		"sub.lapsed.eth":      "ENS name expired", // a subdomain's expiry is its parent's
		"bare.eth":            "ENS name not found",
		"nobody.eth":          "ENS name not found",
		"pay.vaultholder.eth": "ENS name not found", // no resolver for the subdomain
		"..eth":               "Invalid ENS name '..eth'",
	}
	for name, want := range errs {
		var er struct {
			Error string `json:"error"`
		}
		getJSON(t, e.inst.base+"/api/v2/address/"+url.PathEscape(name), 400, &er)
		if er.Error != want {
			t.Errorf("address/%s: %q, want %q", name, er.Error, want)
		}
		if name == "lapsed.eth" {
			e.golden(t, "error-ens-expired", map[string]any{"error": er.Error})
		}
	}

	ws := newWS(t, e.inst.base)
	var raw json.RawMessage
	ws.ok("getAccountInfo", map[string]any{"descriptor": "vaultholder.eth", "details": "basic"}, &raw)
	var wsA api.Address
	e.golden(t, "ws-getAccountInfo-ens", wireOf(t, raw, &wsA))
	if wsA.Address != holder {
		t.Errorf("getAccountInfo vaultholder.eth: %s, want %s", wsA.Address, holder)
	}
	ws.fails("getAccountInfo", map[string]any{"descriptor": "lapsed.eth"}, "ENS name expired")
	ws.fails("getAccountInfo", map[string]any{"descriptor": "nobody.eth"}, "ENS name not found")

	if p := fetchPage(t, e.inst.base, "/search?q="+url.QueryEscape(" VaultHolder.eth ")); p.final != "/address/"+holder+"?name=vaultholder.eth" || p.status != 200 {
		t.Errorf("search vaultholder.eth: %d at %s", p.status, p.final)
	}
	for q, status := range map[string]int{"lapsed.eth": 400, "nobody.eth": 404} {
		if p := fetchPage(t, e.inst.base, "/search?q="+q); p.status != status || !strings.Contains(text(p.doc), "ENS name") {
			t.Errorf("search %s: %d %q", q, p.status, text(p.doc))
		}
	}
}
