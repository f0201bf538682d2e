package e2e

import (
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Facts about HD accounts for the real wallet client (trezor-client.mjs,
// trezor-accounts.mjs): the account calls Trezor Suite makes, by xpub and by
// output descriptor, checked against the generator's account ledger.

// hdScenarioBlocks is how many blocks trezorHDChain adds to the demo chain.
const hdScenarioBlocks = 5

// trezorHDChain appends the HD account scenario to the demo chain and mines
// its pending txs in one more block.
func trezorHDChain(t *testing.T, g *chaingen.Generator) []*chaingen.HDAccount {
	t.Helper()
	accts := hdAccounts(t, g, "e2e-trezor")
	pending, err := g.HDScenario(accts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddBlock(pending...); err != nil {
		t.Fatal(err)
	}
	return accts
}

type trezorXpubAccount struct {
	Kind        string `json:"kind"`
	Descriptor  string `json:"descriptor"`
	Balance     string `json:"balance"`
	Received    string `json:"received"`
	Sent        string `json:"sent"`
	TxCount     int    `json:"txCount"`
	AddrTxCount int    `json:"addrTxCount"`
	// Addresses are the derived addresses as the library sorts them:
	// change chain, used and unused receive addresses.
	Addresses struct {
		Change []trezorXpubAddr `json:"change"`
		Used   []trezorXpubAddr `json:"used"`
		Unused []trezorXpubAddr `json:"unused"`
	} `json:"addresses"`
	Txids   []string             `json:"txids"` // newest first
	Txs     map[string]*trezorTx `json:"txs"`   // seen from the account
	Utxos   []trezorXpubUtxo     `json:"utxos"`
	History struct {
		Txs        int    `json:"txs"`
		Received   string `json:"received"`
		Sent       string `json:"sent"`
		SentToSelf string `json:"sentToSelf"`
	} `json:"history"`
}

type trezorXpubAddr struct {
	Address   string `json:"address"`
	Path      string `json:"path"`
	Transfers int    `json:"transfers"`
	Balance   string `json:"balance"`
	Received  string `json:"received"`
	Sent      string `json:"sent"`
}

type trezorXpubUtxo struct {
	trezorUtxo
	Address string `json:"address"`
	Path    string `json:"path"`
}

// trezorXpubFacts describes each account once by xpub (where a SLIP-132
// version exists) and once by descriptor with checksum.
func trezorXpubFacts(t *testing.T, st *demoStack, accts []*chaingen.HDAccount) []trezorXpubAccount {
	t.Helper()
	var out []trezorXpubAccount
	blocks := st.g.Blocks()
	for _, a := range accts {
		l, err := st.g.AccountLedger(a, 20)
		if err != nil {
			t.Fatal(err)
		}
		acc := trezorXpubAccount{Kind: fmt.Sprintf("BIP%d", a.Purpose), Balance: fmt.Sprint(l.Balance), Received: fmt.Sprint(l.Received),
			Sent: fmt.Sprint(l.Sent), TxCount: len(l.Txids), AddrTxCount: l.AddrTxCount, Txids: l.Txids, Txs: map[string]*trezorTx{},
			Utxos: []trezorXpubUtxo{}}
		own := map[string]bool{}
		for c, chain := range l.Chains {
			for _, ad := range chain {
				own[ad.Address] = true
				x := trezorXpubAddr{Address: ad.Address, Path: ad.Path, Transfers: ad.Txs}
				if ad.Txs > 0 {
					x.Balance, x.Received, x.Sent = fmt.Sprint(ad.Balance), fmt.Sprint(ad.Received), fmt.Sprint(ad.Sent)
				}
				switch {
				case c == 1:
					acc.Addresses.Change = append(acc.Addresses.Change, x)
				case ad.Txs > 0:
					acc.Addresses.Used = append(acc.Addresses.Used, x)
				default:
					acc.Addresses.Unused = append(acc.Addresses.Unused, x)
				}
			}
		}
		var received, sent, self int64
		for _, id := range l.Txids {
			info := l.Txs[id]
			tx := blocks[info.Height].Transactions[info.Position]
			f := trezorTxFacts(t, st, info.Height, tx)
			prevs, err := st.g.Prevouts(tx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range prevs {
				if own[chaingen.ExplorerAddress(p.PkScript, st.g.Params())] {
					f.MyIns++
				}
			}
			for _, o := range tx.TxOut {
				if own[chaingen.ExplorerAddress(o.PkScript, st.g.Params())] {
					f.MyOuts++
				}
			}
			f.Sent, f.Received = fmt.Sprint(info.Sent), fmt.Sprint(info.Received)
			acc.Txs[id] = f
			received += info.Received
			sent += info.Sent
			self += info.SentToSelf
		}
		acc.History.Txs, acc.History.Received, acc.History.Sent, acc.History.SentToSelf = len(l.Txids), fmt.Sprint(received), fmt.Sprint(sent), fmt.Sprint(self)
		for _, u := range l.Utxos {
			acc.Utxos = append(acc.Utxos, trezorXpubUtxo{trezorUtxo: trezorUtxo{Txid: u.Txid, Vout: u.Vout, Value: fmt.Sprint(u.Value),
				Height: u.Height, Coinbase: u.Coinbase}, Address: u.Address, Path: u.Path})
		}
		if self == 0 || len(acc.Addresses.Used) < 3 || len(acc.Utxos) < 3 {
			t.Fatalf("%s: the scenario gives a weak account (self %d, used %d, utxos %d)", acc.Kind, self, len(acc.Addresses.Used), len(acc.Utxos))
		}
		if a.Purpose != chaingen.BIP86 {
			acc.Descriptor = a.Xpub()
			out = append(out, acc)
		}
		acc.Descriptor = a.Descriptor(true)
		out = append(out, acc)
	}
	return out
}
