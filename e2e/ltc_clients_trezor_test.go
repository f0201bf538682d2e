package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The real Trezor client on the litecoind chain: tools/js/trezor-ltc.mjs
// drives @trezor/blockchain-link against our websocket and checks its
// answers against facts computed here from litecoind's ledger.

const trezorLtcScript = "../tools/js/trezor-ltc.mjs"

type trezorLtcFacts struct {
	Info     trezorInfo         `json:"info"`
	Block    trezorBlock        `json:"block"`
	Txs      []trezorLtcTx      `json:"txs"`
	Accounts []trezorLtcAddress `json:"accounts"`
	Xpubs    []trezorLtcAccount `json:"xpubs"`
	Push     trezorLtcPush      `json:"push"`
}

type trezorLtcTx struct {
	Txid      string `json:"txid"`
	Height    int32  `json:"height"`
	BlockHash string `json:"blockHash"`
	Fee       string `json:"fee"`
	Ins       int    `json:"ins"`
	Outs      int    `json:"outs"`
}

type trezorLtcAddress struct {
	Kind    string   `json:"kind"`
	Address string   `json:"address"`
	Balance string   `json:"balance"`
	TxCount int      `json:"txCount"`
	Txids   []string `json:"txids"`
	Utxos   []string `json:"utxos"` // txid:vout:value, sorted
}

type trezorLtcAccount struct {
	Kind       string   `json:"kind"`
	Descriptor string   `json:"descriptor"`
	Balance    string   `json:"balance"`
	TxCount    int      `json:"txCount"`
	Txids      []string `json:"txids"`
	Used       []string `json:"used"`  // address:path, sorted
	Utxos      []string `json:"utxos"` // txid:vout:value:path, sorted
}

type trezorLtcPush struct {
	Address string `json:"address"`
	Hex     string `json:"hex"`
	Txid    string `json:"txid"`
	Value   string `json:"value"`
}

func checkLtcTrezor(t *testing.T, st *ltcClientsStack) {
	node := trezorPrereqs(t)
	st.settle(t)
	led, blocks := st.ledger(t)
	mweb := ltcBlockOf(t, blocks, st.mwebBlock)
	f := trezorLtcFacts{
		// The config names no "network": the API reports the shortcut.
		Info: trezorInfo{Name: "Litecoin Regtest", Shortcut: "rLTC", Network: "rLTC", Testnet: true, Decimals: 8,
			TipHeight: led.TipHeight, TipHash: led.TipHash},
		Block: trezorBlock{Height: mweb.Height, Hash: mweb.Hash, Txids: mweb.Txids},
	}
	cache := &ltcTxCache{st: st, txs: map[string]*ltcVerboseTx{}}
	for _, id := range []string{st.pegInTxid, mweb.HogEx, ltcBlockOf(t, blocks, st.pegOutBlock).HogEx} {
		info := led.Txs[id]
		tx := cache.get(t, id)
		f.Txs = append(f.Txs, trezorLtcTx{Txid: id, Height: info.Height, BlockHash: ltcBlockOf(t, blocks, info.Height).Hash,
			Fee: fmt.Sprint(info.Fee), Ins: len(tx.Vin), Outs: len(tx.Vout)})
	}
	kinds := []string{"peg-out recipient", "p2pkh", "p2sh", "p2wpkh", "p2wsh"}
	for i, a := range ltcSampleAddresses(t, led, st.pegOutAddr) {
		al := led.Addresses[a]
		acc := trezorLtcAddress{Kind: kinds[min(i, len(kinds)-1)], Address: a, Balance: fmt.Sprint(al.Balance),
			TxCount: al.TxCount(), Txids: al.Txids[:min(len(al.Txids), 100)], Utxos: []string{}} // the script reads one page of 100
		for _, u := range al.Utxos {
			acc.Utxos = append(acc.Utxos, fmt.Sprintf("%s:%d:%d", u.Txid, u.Vout, u.Value))
		}
		slices.Sort(acc.Utxos)
		f.Accounts = append(f.Accounts, acc)
	}
	for _, a := range st.accts {
		f.Xpubs = append(f.Xpubs, trezorLtcAccountOf(t, a, led))
	}
	x := st.newAddress(t, st.w, "bech32")
	f.Push.Address, f.Push.Value = x, "4321000"
	f.Push.Hex = st.ltcRawTx(t, map[string]json.Number{x: "0.04321"})
	f.Push.Txid = st.txidOfHex(t, f.Push.Hex)

	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "facts.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	runClientScript(t, node, trezorLtcScript, st.inst.base, path, st.inst.logs, func(line string) (string, bool) {
		if !strings.HasPrefix(line, "need-block") {
			return "", false
		}
		var pool []string
		ltcCall(t, st.node.Client, &pool, "getrawmempool")
		for _, id := range strings.Fields(line)[1:] {
			if !slices.Contains(pool, id) {
				return "error " + id + " is not in the node's mempool", true
			}
		}
		h, hash := st.mine(t, 1)
		return fmt.Sprintf("block %d %s", h, hash), true
	})
}

// trezorLtcAccountOf is an account's facts under its Litecoin key.
func trezorLtcAccountOf(t *testing.T, a *chaingen.HDAccount, led *chaingen.Ledger) trezorLtcAccount {
	t.Helper()
	o := ltcAccountOf(t, a, led)
	x := trezorLtcAccount{Kind: fmt.Sprintf("BIP%d", a.Purpose), Descriptor: ltcXpub(t, a), Balance: fmt.Sprint(o.Balance),
		TxCount: len(o.Txids), Txids: o.Txids}
	for addr, path := range o.Paths {
		x.Used = append(x.Used, addr+":"+path)
		for _, u := range led.Addresses[addr].Utxos {
			x.Utxos = append(x.Utxos, fmt.Sprintf("%s:%d:%d:%s", u.Txid, u.Vout, u.Value, path))
		}
	}
	slices.Sort(x.Used)
	slices.Sort(x.Utxos)
	return x
}
