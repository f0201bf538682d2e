package e2e

// Address aliases (address_aliases) end to end on a geth dev node: a
// contract emitting ENS's NameRegistered event names addresses, a token
// contract is named by its name; tx, address and block answers carry the
// addressAliases map as Blockbook's do, and a reorg that drops a
// registration drops (or rolls back) the alias.

import (
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

// aliasOf returns the alias an answer's map gives a.
func aliasOf(m api.AddressAliasesMap, a common.Address) api.AddressAlias { return m[a.Hex()] }

func TestEthAddressAliases(t *testing.T) {
	ctx := t.Context()
	dev, err := gethdev.Start(ctx, gethdev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	w, err := ethgen.NewWallet(ctx, dev.Client())
	if err != nil {
		t.Fatal(err)
	}
	reg, tok := ethgen.MustContract(ethgen.ENSRegistrarContract), ethgen.MustContract(ethgen.TokenContract)
	owner := ethgen.AccountFromKey("dev", dev.DevKey)
	registrant, alice, bob := ethgen.NewAccount("registrant"), ethgen.NewAccount("alice"), ethgen.NewAccount("bob")
	commit := func() common.Hash {
		t.Helper()
		h, err := dev.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	must := func(tx *types.Transaction, err error) *types.Transaction {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	_, regAddr, err := w.Deploy(ctx, owner, reg)
	if err != nil {
		t.Fatal(err)
	}
	_, tokAddr, err := w.Deploy(ctx, owner, tok, "Alias Token", "ALT", big.NewInt(1e18))
	if err != nil {
		t.Fatal(err)
	}
	must(w.Transfer(ctx, owner, registrant.Addr, big.NewInt(1e18), 2))
	commit()
	// Block 2: alice is registered; alice gets tokens, bob a little ether.
	regAlice := must(w.Call(ctx, registrant, regAddr, big.NewInt(5), reg, "register", "alice", alice.Addr))
	tokTx := must(w.Call(ctx, owner, tokAddr, nil, tok, "transfer", alice.Addr, big.NewInt(1000)))
	toBob := must(w.Transfer(ctx, owner, bob.Addr, big.NewInt(1), 2))
	forkAt := commit()
	// Block 3: alice takes a newer name, bob one.
	regAlice2 := must(w.Call(ctx, registrant, regAddr, nil, reg, "register", "alice-new", alice.Addr))
	regBob := must(w.Call(ctx, registrant, regAddr, nil, reg, "register", "bob", bob.Addr))
	commit()

	raw, err := json.Marshal(map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": dev.HTTPURL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 20, "block_addresses_to_keep": 100, "address_aliases": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e := &ethE2E{dev: dev, inst: startInProcess(t, cfgPath, t.TempDir(), nil)}
	e.waitHead(t)

	ens := func(name string) api.AddressAlias { return api.AddressAlias{Type: "ENS", Alias: name} }
	getTx := func(h common.Hash) api.Tx {
		t.Helper()
		var tx api.Tx // fresh: decoding into a used map would keep its keys
		e.get(t, "/api/v2/tx/"+h.Hex(), &tx)
		return tx
	}
	tx := getTx(tokTx.Hash())
	// The newest registration is the alias; the token is named by its contract.
	if got := aliasOf(tx.AddressAliases, alice.Addr); got != ens("alice-new.eth") {
		t.Errorf("token tx: alice's alias %+v", got)
	}
	if got := aliasOf(tx.AddressAliases, tokAddr); got != (api.AddressAlias{Type: "Contract", Alias: "Alias Token"}) {
		t.Errorf("token tx: token's alias %+v (map %+v)", got, tx.AddressAliases)
	}
	if _, ok := tx.AddressAliases[owner.Addr.Hex()]; ok {
		t.Errorf("the unregistered sender has an alias: %+v", tx.AddressAliases)
	}
	var a api.Address
	e.get(t, "/api/v2/address/"+alice.Addr.Hex()+"?details=txs", &a)
	if got := aliasOf(a.AddressAliases, alice.Addr); got != ens("alice-new.eth") {
		t.Errorf("address: alice's alias %+v", got)
	}
	var basic api.Address
	e.get(t, "/api/v2/address/"+alice.Addr.Hex()+"?details=basic", &basic)
	if basic.AddressAliases != nil {
		t.Errorf("details=basic lists aliases %+v", basic.AddressAliases)
	}
	tx = getTx(toBob.Hash())
	if got := aliasOf(tx.AddressAliases, bob.Addr); got != ens("bob.eth") {
		t.Errorf("bob's alias %+v", got)
	}
	var blk api.Block
	e.get(t, "/api/v2/block/2", &blk)
	if aliasOf(blk.AddressAliases, alice.Addr) != ens("alice-new.eth") || aliasOf(blk.AddressAliases, bob.Addr) != ens("bob.eth") {
		t.Errorf("block 2 aliases %+v", blk.AddressAliases)
	}
	// The websocket answers the same as REST.
	var wtx api.Tx
	newWS(t, e.inst.base).ok("getTransaction", map[string]any{"txid": tokTx.Hash().Hex()}, &wtx)
	if got := aliasOf(wtx.AddressAliases, tokAddr); got.Type != "Contract" {
		t.Errorf("websocket getTransaction aliases %+v", wtx.AddressAliases)
	}
	var wa api.Address
	newWS(t, e.inst.base).ok("getAccountInfo", map[string]any{"descriptor": alice.Addr.Hex(), "details": "txs"}, &wa)
	if got := aliasOf(wa.AddressAliases, alice.Addr); got != ens("alice-new.eth") {
		t.Errorf("websocket getAccountInfo aliases %+v", wa.AddressAliases)
	}
	checkAliasPages(t, e, tokTx.Hash(), tokAddr, alice.Addr, getTx(tokTx.Hash()).AddressAliases) // eth_nft_test.go
	l := &liveCheck{t: t, c: openAPIChecker(t), base: e.inst.base, asked: map[openapicheck.Op]int{}}
	l.get("/api/v2/tx/"+tokTx.Hash().Hex(), 200)
	l.get("/api/v2/address/"+alice.Addr.Hex()+"?details=txs", 200)
	l.get("/api/v2/block/2", 200)

	// A reorg drops block 3: its registrations are replaced in the pool
	// (same nonces, higher fees) so the new branch does not mine them again.
	if err := dev.Fork(forkAt); err != nil {
		t.Fatal(err)
	}
	for _, old := range []*types.Transaction{regAlice2, regBob} {
		repl, err := types.SignNewTx(registrant.Key, w.Signer, &types.DynamicFeeTx{ChainID: w.ChainID, Nonce: old.Nonce(),
			GasTipCap: new(big.Int).Mul(ethgen.DefaultTip, big.NewInt(10)), GasFeeCap: new(big.Int).Mul(ethgen.DefaultFeeCap, big.NewInt(10)),
			Gas: 21000, To: &registrant.Addr, Value: new(big.Int)})
		if err != nil {
			t.Fatal(err)
		}
		// The pool moves to the forked head asynchronously: until then
		// it calls the nonce too low.
		deadline := time.Now().Add(20 * time.Second)
		for err = dev.SendTx(repl); errors.Is(err, core.ErrNonceTooLow) && time.Now().Before(deadline); err = dev.SendTx(repl) {
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("replacing %s: %v", old.Hash(), err)
		}
	}
	commit()
	commit()
	e.waitHead(t)
	if rc, err := dev.Client().TransactionReceipt(ctx, regBob.Hash()); err == nil {
		t.Fatalf("bob's registration still mined in block %v", rc.BlockNumber)
	}
	tx = getTx(tokTx.Hash())
	if got := aliasOf(tx.AddressAliases, alice.Addr); got != ens("alice.eth") {
		t.Errorf("after the reorg alice's alias %+v, want the older alice.eth", got)
	}
	tx = getTx(toBob.Hash())
	if got, ok := tx.AddressAliases[bob.Addr.Hex()]; ok {
		t.Errorf("after the reorg bob still has alias %+v", got)
	}
	tx = getTx(regAlice.Hash())
	if got := aliasOf(tx.AddressAliases, alice.Addr); got != (api.AddressAlias{}) {
		// alice is only in the event, not a party of the tx: no alias.
		t.Errorf("registration tx names alice %+v", got)
	}
}
