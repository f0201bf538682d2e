package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain/coins/ltc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// The client-facing suite on litecoind: one real litecoind regtest node
// holding a chain made by its own wallet (every address type, a P2WSH and
// a P2SH multisig, OP_RETURN, HD accounts, MWEB peg-ins and a peg-out) and
// one blockbook synced to it, shared by the subtests of TestLtcClients so
// the suite adds little CI time. The oracle is ltcregtest.Ledger: the
// node's own decoding of its blocks.

// Litecoin's mainnet account key versions (Blockbook's litecoin.json
// xpub_magic keys: Ltub, Mtub, zpub), configured on the regtest coin so the
// accounts are named the way Litecoin wallets name them.
var ltcClientsMagics = map[uint32][4]byte{
	chaingen.BIP44: {0x01, 0x9d, 0xa4, 0x62}, // Ltub
	chaingen.BIP49: {0x01, 0xb2, 0x6e, 0xf6}, // Mtub
	chaingen.BIP84: {0x04, 0xb2, 0x47, 0x46}, // zpub
}

// ltcClientsStack is the shared litecoind chain and blockbook.
type ltcClientsStack struct {
	node *ltcregtest.Node
	// w holds canonical coins only (it never pays MWEB, so its payments
	// are canonical txs); mw holds the MWEB coins the peg-ins bring.
	w, mw    *regtest.Client
	miner    string // the coinbase address
	inst     *instance
	cfg      string
	esplora  string // http://host:port of the Esplora front
	electrum string // host:port of the Electrum TCP listener
	mesh     string // http://host:port of the Mesh listener
	accts    []*chaingen.HDAccount
	// mwebBlock is the first MWEB block (432), pegOutBlock a later one
	// whose HogEx pays pegOutAddr; pegInTxid is the peg-in mined in 432.
	mwebBlock, pegOutBlock int32
	pegInTxid, pegOutAddr  string
	// opReturnTxid pays an OP_RETURN output.
	opReturnTxid string
}

// ltcCall calls c and fails the test on an error.
func ltcCall(t testing.TB, c *regtest.Client, out any, method string, params ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.CallResult(ctx, out, method, params...); err != nil {
		t.Fatalf("litecoind %s %v: %v", method, params, err)
	}
}

func (st *ltcClientsStack) newAddress(t testing.TB, c *regtest.Client, kind string) string {
	t.Helper()
	var a string
	ltcCall(t, c, &a, "getnewaddress", "", kind)
	return a
}

// mine mines n blocks to the miner and returns the new tip.
func (st *ltcClientsStack) mine(t testing.TB, n int) (int32, string) {
	t.Helper()
	var hashes []string
	ltcCall(t, st.node.Client, &hashes, "generatetoaddress", n, st.miner)
	return st.tip(t)
}

func (st *ltcClientsStack) tip(t testing.TB) (int32, string) {
	t.Helper()
	var h int32
	var hash string
	ltcCall(t, st.node.Client, &h, "getblockcount")
	ltcCall(t, st.node.Client, &hash, "getblockhash", h)
	return h, hash
}

// mineTo mines up to height h.
func (st *ltcClientsStack) mineTo(t testing.TB, h int32) {
	t.Helper()
	if cur, _ := st.tip(t); cur < h {
		st.mine(t, int(h-cur))
	}
}

// send pays amount LTC to addr from wallet c and returns the txid.
func ltcSend(t testing.TB, c *regtest.Client, addr string, amount string) string {
	t.Helper()
	var id string
	ltcCall(t, c, &id, "sendtoaddress", addr, json.Number(amount))
	return id
}

// startLtcClientsStack builds the chain and starts blockbook on it with
// the Electrum and Esplora fronts and every websocket subscription.
func startLtcClientsStack(t *testing.T) *ltcClientsStack {
	t.Helper()
	ltcregtest.Require(t)
	node, err := ltcregtest.Start(context.Background(), ltcregtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// The chain is thrown away: no clean shutdown needed (litecoind's waits
	// on idle RPC connections for half a minute).
	t.Cleanup(node.Kill)
	st := &ltcClientsStack{node: node, w: node.Wallet("w"), mw: node.Wallet("mw")}
	var created any
	for _, name := range []string{"w", "mw", "peg1", "peg2", "peg3"} {
		ltcCall(t, node.Client, &created, "createwallet", name)
	}
	st.miner = st.newAddress(t, st.w, "bech32")
	start := time.Now()
	st.buildChain(t)
	t.Logf("chain of %d blocks built in %v", st.pegOutBlock+2, time.Since(start).Round(time.Millisecond))
	start = time.Now()

	st.cfg = writeLtcClientsConfig(t, node)
	listen := make(chan [2]string, 3)
	st.inst = startInProcess(t, st.cfg, t.TempDir(), func(o *app.Options) {
		o.EnableSubNewTx = true
		// litecoind without ZMQ pushes nothing: the mempool follows it by
		// resyncs, here every half second rather than every minute.
		o.ResyncMempoolMs = 500
		o.Esplora.Addr = "127.0.0.1:0"
		o.Esplora.AddressPrefix = true
		o.Electrum.TCP = "127.0.0.1:0"
		o.Mesh.Addr = "127.0.0.1:0"
		next := o.OnListen
		o.OnListen = func(name, addr string) {
			if name == "esplora" || name == "electrum" || name == "mesh" {
				listen <- [2]string{name, addr}
				return
			}
			next(name, addr)
		}
	})
	for range 3 {
		select {
		case a := <-listen:
			switch a[0] {
			case "esplora":
				st.esplora = "http://" + a[1]
			case "mesh":
				st.mesh = "http://" + a[1]
			default:
				st.electrum = a[1]
			}
		case <-time.After(waitFor):
			t.Fatalf("the Esplora, Electrum and Mesh listeners did not start\n%s", st.inst.logs)
		}
	}
	h, hash := st.tip(t)
	waitTip(t, st.inst.base, h, hash, st.inst.logs)
	waitMempoolInSync(t, st.inst.base)
	t.Logf("blockbook synced in %v", time.Since(start).Round(time.Millisecond))
	return st
}

// writeLtcClientsConfig writes the Litecoin Regtest coin's config with
// Litecoin's account key versions; an empty message_queue_binding makes
// blockbook follow the node by polling.
func writeLtcClientsConfig(t testing.TB, node *ltcregtest.Node) string {
	t.Helper()
	magic := func(p uint32) uint32 {
		v := ltcClientsMagics[p]
		return uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3])
	}
	cfg := map[string]any{
		"coin_name": "Litecoin Regtest", "coin_shortcut": "rLTC", "coin_label": "Litecoin Regtest",
		"rpc_url": node.RPCURL, "rpc_user": node.RPCUser, "rpc_pass": node.RPCPass, "rpc_timeout": 25,
		"parse": true, "block_addresses_to_keep": 300, "message_queue_binding": "",
		"xpub_magic": magic(chaingen.BIP44), "xpub_magic_segwit_p2sh": magic(chaingen.BIP49),
		"xpub_magic_segwit_native": magic(chaingen.BIP84), "slip44": 1,
		"block_filter_scripts": "taproot-noordinals",
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "blockchaincfg.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// buildChain makes the shared chain with litecoind's wallets.
//
// Long: one linear scenario (funding every address type, multisig,
// OP_RETURN, HD accounts, then MWEB from its activation) reads best as one
// sequence of steps.
func (st *ltcClientsStack) buildChain(t *testing.T) {
	t.Helper()
	st.mine(t, 110) // coinbases mature after 100 blocks

	// Twenty fresh addresses of each kind, paid in one tx per kind, then
	// wallet payments that spend them again (the wallet picks the coins).
	for _, kind := range []string{"legacy", "p2sh-segwit", "bech32"} {
		outs := map[string]json.Number{}
		for i := range 20 {
			outs[st.newAddress(t, st.w, kind)] = json.Number(fmt.Sprintf("0.%03d", 100+i*7))
		}
		var id string
		ltcCall(t, st.w, &id, "sendmany", "", outs)
	}
	st.mine(t, 1)
	for i := range 6 {
		ltcSend(t, st.w, st.newAddress(t, st.w, []string{"legacy", "p2sh-segwit", "bech32"}[i%3]), "2.5")
		if i%2 == 1 {
			st.mine(t, 1)
		}
	}

	// 2-of-3 multisig as P2WSH and as P2SH.
	var keys []string
	for range 3 {
		var info struct {
			PubKey string `json:"pubkey"`
		}
		ltcCall(t, st.w, &info, "getaddressinfo", st.newAddress(t, st.w, "bech32"))
		keys = append(keys, info.PubKey)
	}
	for _, kind := range []string{"bech32", "legacy"} {
		var ms struct {
			Address string `json:"address"`
		}
		ltcCall(t, st.w, &ms, "addmultisigaddress", 2, keys, "", kind)
		ltcSend(t, st.w, ms.Address, "0.75")
	}
	st.opReturnTxid = st.sendOpReturn(t, "6c74632d636c69656e7473") // "ltc-clients"
	st.mine(t, 1)

	st.fundAccounts(t)

	// Peg-ins come from wallets holding one canonical coin each: a wallet
	// with MWEB coins (a peg-in's change) would pay MWEB from MWEB.
	pegs := map[string]json.Number{}
	for _, name := range []string{"peg1", "peg2", "peg3"} {
		pegs[st.newAddress(t, st.node.Wallet(name), "bech32")] = "25"
	}
	var id string
	ltcCall(t, st.w, &id, "sendmany", "", pegs)
	st.mine(t, 1)

	// MWEB: the first MWEB block (432) needs a peg-in waiting in the mempool.
	st.mineTo(t, 431)
	st.pegInTxid = ltcSend(t, st.node.Wallet("peg1"), st.newAddress(t, st.mw, "mweb"), "20")
	st.mwebBlock, _ = st.mine(t, 1)
	// A second peg-in, then a peg-out from the MWEB wallet: its canonical
	// output is the HogEx's.
	ltcSend(t, st.node.Wallet("peg2"), st.newAddress(t, st.mw, "mweb"), "3")
	st.mine(t, 1)
	st.pegOutAddr = st.newAddress(t, st.w, "bech32")
	ltcSend(t, st.mw, st.pegOutAddr, "1.25")
	st.pegOutBlock, _ = st.mine(t, 1)
	st.mine(t, 2)
}

// sendOpReturn funds, signs and sends a tx with an OP_RETURN output.
func (st *ltcClientsStack) sendOpReturn(t testing.TB, data string) string {
	t.Helper()
	var raw string
	ltcCall(t, st.w, &raw, "createrawtransaction", []any{}, []map[string]string{{"data": data}})
	var funded struct {
		Hex string `json:"hex"`
	}
	ltcCall(t, st.w, &funded, "fundrawtransaction", raw)
	var signed struct {
		Hex      string `json:"hex"`
		Complete bool   `json:"complete"`
	}
	ltcCall(t, st.w, &signed, "signrawtransactionwithwallet", funded.Hex)
	if !signed.Complete {
		t.Fatalf("OP_RETURN tx not fully signed: %+v", signed)
	}
	var id string
	ltcCall(t, st.node.Client, &id, "sendrawtransaction", signed.Hex)
	return id
}

// fundAccounts creates the HD accounts (BIP44, 49, 84 on Litecoin's
// regtest) and pays some of their receive and change addresses over three
// blocks, one receive address twice.
func (st *ltcClientsStack) fundAccounts(t testing.TB) {
	t.Helper()
	for _, p := range []uint32{chaingen.BIP44, chaingen.BIP49, chaingen.BIP84} {
		a, err := chaingen.NewHDAccount(ltc.RegtestParams, chaingen.HDSeed("ltc-clients"), p, 0)
		if err != nil {
			t.Fatal(err)
		}
		st.accts = append(st.accts, a)
	}
	rounds := [][][3]uint32{ // {change, index, value in 0.001 LTC}
		{{0, 0, 1100}, {0, 1, 200}},
		{{1, 0, 55}, {0, 3, 30}},
		{{0, 0, 7}},
	}
	for _, round := range rounds {
		outs := map[string]json.Number{}
		for i, a := range st.accts {
			for _, r := range round {
				addr, err := a.Address(r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				outs[addr] = json.Number(fmt.Sprintf("%d.%03d%d", r[2]/1000, r[2]%1000, i+1))
			}
		}
		var id string
		ltcCall(t, st.w, &id, "sendmany", "", outs)
		st.mine(t, 1)
	}
}

// ltcXpub is an account's key in Litecoin's version for its purpose.
func ltcXpub(t testing.TB, a *chaingen.HDAccount) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(a.Xpub())
	if err != nil {
		t.Fatal(err)
	}
	v := ltcClientsMagics[a.Purpose]
	k, err = k.CloneWithVersion(v[:])
	if err != nil {
		t.Fatal(err)
	}
	return k.String()
}

// ledger is the node's ledger of its current chain.
func (st *ltcClientsStack) ledger(t testing.TB) (*chaingen.Ledger, []ltcregtest.Block) {
	t.Helper()
	l, blocks, err := ltcregtest.Ledger(context.Background(), st.node)
	if err != nil {
		t.Fatal(err)
	}
	return l, blocks
}

// syncTip mines n blocks and waits until blockbook has the new tip.
func (st *ltcClientsStack) syncTip(t testing.TB, n int) (int32, string) {
	t.Helper()
	h, hash := st.mine(t, n)
	waitTip(t, st.inst.base, h, hash, st.inst.logs)
	return h, hash
}
