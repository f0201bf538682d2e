package chaingen

import (
	"fmt"
	"sort"

	"github.com/btcsuite/btcd/wire/v2"
)

// AccountLedger is what an explorer should report for an HD account under
// a gap limit: the test oracle of xpub queries. It is computed from the
// chain's Ledger (itself a replay of the raw blocks) and the account's own
// derivation, sharing no code with the indexer.
type AccountLedger struct {
	Gap int
	// Chains are the derived addresses of the receive (0) and change (1)
	// chains, in index order.
	Chains [2][]AccountAddress
	// Sums over the derived addresses (a transfer between two of them
	// counts as sent and as received, as explorers sum per address).
	Balance, Received, Sent int64
	// AddrTxCount sums the addresses' tx counts; Txids lists each tx once.
	AddrTxCount int
	// Txids in Blockbook's order: the addresses' lists (each in the order
	// of AddressLedger.Txids) concatenated chain by chain in index order,
	// each tx kept at its first entry, then sorted with sort.Stable by
	// height descending and, within a height, by Blockbook's comparison
	// "x before y unless y spends from its address and x does not" (not a
	// strict order: the result is that of Go's sort.Stable, which
	// Blockbook uses).
	Txids []string
	// Txs describes every tx of Txids as the account sees it.
	Txs   map[string]AccountTx
	Utxos []AccountUtxo
}

// AccountAddress is one derived address.
type AccountAddress struct {
	Address, Path           string
	Change, Index           uint32
	Txs                     int
	Balance, Received, Sent int64
}

// AccountTx is one tx seen from an account: its place and what it moved.
type AccountTx struct {
	Height   int32
	Position int
	Time     int64
	// Received is what it pays to the account, Sent what it spends from
	// it, SentToSelf what it pays back to the account when the account
	// funds it.
	Received, Sent, SentToSelf int64
	// Inputs and Outputs: it spends from / pays to the account.
	Inputs, Outputs bool
}

// AccountUtxo is an unspent output with the address holding it.
type AccountUtxo struct {
	Utxo
	Address, Path string
}

// Used reports the derived addresses with txs.
func (l *AccountLedger) Used() int {
	n := 0
	for _, c := range l.Chains {
		for _, a := range c {
			if a.Txs > 0 {
				n++
			}
		}
	}
	return n
}

// AccountLedger computes the account's ledger on g's chain. Addresses are
// derived as Blockbook does: on each chain until gap+1 addresses follow
// the last used one (index 0 counting as used when none is), the change
// chain reaching at least the receive chain's last used index.
func (g *Generator) AccountLedger(a *HDAccount, gap int) (*AccountLedger, error) {
	led := g.Ledger()
	out := &AccountLedger{Gap: gap, Txs: map[string]AccountTx{}}
	own := map[string]bool{}
	minDerived := 0
	for change := range uint32(2) {
		last := 0
		for i := 0; i < minDerived || i-last <= gap; i++ {
			addr, err := a.Address(change, uint32(i))
			if err != nil {
				return nil, err
			}
			aa := AccountAddress{Address: addr, Path: a.Path(change, uint32(i)), Change: change, Index: uint32(i)}
			if al := led.Addresses[addr]; al != nil && al.TxCount() > 0 {
				aa.Txs, aa.Balance, aa.Received, aa.Sent = al.TxCount(), al.Balance, al.Received, al.Sent
				last = i
				for _, u := range al.Utxos {
					out.Utxos = append(out.Utxos, AccountUtxo{Utxo: u, Address: addr, Path: aa.Path})
				}
			}
			out.Chains[change] = append(out.Chains[change], aa)
			out.Balance += aa.Balance
			out.Received += aa.Received
			out.Sent += aa.Sent
			out.AddrTxCount += aa.Txs
			own[addr] = true
		}
		minDerived = last
	}
	if err := out.replay(g, own); err != nil {
		return nil, err
	}
	out.order(led)
	return out, nil
}

// replay goes through the chain's txs and records those touching own.
func (l *AccountLedger) replay(g *Generator, own map[string]bool) error {
	type prev struct {
		addr  string
		value int64
	}
	prevs := map[wire.OutPoint]prev{}
	for h, b := range g.blocks {
		if h == 0 {
			continue
		}
		for pos, tx := range b.Transactions {
			var t AccountTx
			if pos > 0 {
				for _, in := range tx.TxIn {
					p, ok := prevs[in.PreviousOutPoint]
					if !ok {
						return fmt.Errorf("chaingen: tx %s spends unknown %v", tx.TxHash(), in.PreviousOutPoint)
					}
					if own[p.addr] {
						t.Sent += p.value
						t.Inputs = true
					}
				}
			}
			for i, o := range tx.TxOut {
				addr := ExplorerAddress(o.PkScript, g.params)
				prevs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}] = prev{addr, o.Value}
				if own[addr] {
					t.Received += o.Value
					t.Outputs = true
				}
			}
			if !t.Inputs && !t.Outputs {
				continue
			}
			if t.Inputs {
				t.SentToSelf = t.Received
			}
			t.Height, t.Position, t.Time = int32(h), pos, b.Header.Timestamp.Unix()
			l.Txs[tx.TxHash().String()] = t
		}
	}
	return nil
}

// order fills Txids (see AccountLedger.Txids).
func (l *AccountLedger) order(led *Ledger) {
	var entries accountEntries
	seen := map[string]bool{}
	for _, c := range l.Chains {
		for _, aa := range c {
			al := led.Addresses[aa.Address]
			if al == nil {
				continue
			}
			for _, txid := range al.Txids {
				if seen[txid] {
					continue
				}
				seen[txid] = true
				entries = append(entries, accountEntry{txid, l.Txs[txid].Height, al.Spends[txid]})
			}
		}
	}
	sort.Stable(entries)
	for _, e := range entries {
		l.Txids = append(l.Txids, e.txid)
	}
}

// accountEntry is a tx as one address lists it.
type accountEntry struct {
	txid   string
	height int32
	spends bool // spends from that address
}

type accountEntries []accountEntry

func (e accountEntries) Len() int      { return len(e) }
func (e accountEntries) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e accountEntries) Less(i, j int) bool {
	if e[i].height != e[j].height {
		return e[i].height > e[j].height
	}
	return e[i].spends || !e[j].spends
}

// Pending describes unmined txs as an account sees them: the txids that
// touch it and what they add to its balance (negative when they spend more
// from it than they pay to it). prevouts are what each tx's inputs spend
// (g.Prevouts).
func (l *AccountLedger) Pending(g *Generator, txs []*wire.MsgTx) (txids []string, delta int64, err error) {
	own := map[string]bool{}
	for _, c := range l.Chains {
		for _, a := range c {
			own[a.Address] = true
		}
	}
	for _, tx := range txs {
		prevs, err := g.Prevouts(tx, txs...)
		if err != nil {
			return nil, 0, err
		}
		touched := false
		for _, p := range prevs {
			if own[ExplorerAddress(p.PkScript, g.params)] {
				delta -= p.Value
				touched = true
			}
		}
		for _, o := range tx.TxOut {
			if own[ExplorerAddress(o.PkScript, g.params)] {
				delta += o.Value
				touched = true
			}
		}
		if touched {
			txids = append(txids, tx.TxHash().String())
		}
	}
	return txids, delta, nil
}
