package runes

import (
	"errors"
	"fmt"

	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// errOverflow: a balance passed 2^128-1, which a valid chain cannot do
// (every rune's supply fits 128 bits); ord stops there too.
var errOverflow = errors.New("rune amount overflows 128 bits")

// Changes are what connecting a block does to the runes state.
type Changes struct {
	// Created are the outputs of the block that hold runes, unspent within it.
	Created map[Pos][]Balance
	// Spent are the earlier outputs with runes the block spends, with the
	// runes they held (what a disconnect puts back).
	Spent map[Pos][]Balance
	// Entries are the entries the block etched (Old nil) or changed.
	Entries map[RuneID]EntryChange
	// Txs are the block's txs that moved runes, for the address history.
	Txs []TxRunes
	// Height is the block's.
	Height uint32
}

// EntryChange is an entry before and after the block.
type EntryChange struct{ Old, New *Entry }

// TxRunes is a tx that spent or created runes: its index in the block,
// and per output its runes.
type TxRunes struct {
	Index    uint32
	Artifact *runestone.Artifact
	Inputs   []Balance // what its inputs held, summed per rune
	Burned   []Balance
	// Spent are the outputs with runes its inputs spend; Outputs its
	// outputs that received runes (OP_RETURNs burn theirs), by vout.
	Spent   []Pos
	Outputs []OutputRunes
}

// OutputRunes are the runes an output of a tx received.
type OutputRunes struct {
	Vout     uint32
	Balances []Balance
}

// block applies one block's txs on top of a State.
type block struct {
	base    State
	net     runestone.Network
	height  uint32
	time    int64
	count   uint64
	names   map[runestone.Rune]RuneID
	changes *Changes
}

// ApplyBlock computes the runes changes of a block at height whose txs
// are txs, on top of base, as ord's rune updater does. Blocks below the
// network's first rune height change nothing.
func ApplyBlock(base State, net runestone.Network, height uint32, time int64, txs []Tx) (*Changes, error) {
	c := &Changes{Created: map[Pos][]Balance{}, Spent: map[Pos][]Balance{}, Entries: map[RuneID]EntryChange{}, Height: height}
	if height < runestone.FirstRuneHeight(net) {
		return c, nil
	}
	n, err := base.RuneCount()
	if err != nil {
		return nil, err
	}
	b := &block{base: base, net: net, height: height, time: time, count: n, names: map[runestone.Rune]RuneID{}, changes: c}
	if g := Genesis(net); g != nil && height == runestone.FirstRuneHeight(net) {
		b.count++
		b.names[g.Rune] = g.ID
		b.update(nil, g)
	}
	for i := range txs {
		if err := b.tx(&txs[i]); err != nil {
			return nil, fmt.Errorf("tx %d %s: %w", txs[i].Index, txs[i].Txid, err)
		}
	}
	return c, nil
}

func add(m map[RuneID]U128, id RuneID, v U128) error {
	s, ok := m[id].Add(v)
	if !ok {
		return errOverflow
	}
	m[id] = s
	return nil
}

// entry reads an entry as the block has left it so far.
func (b *block) entry(id RuneID) (*Entry, error) {
	if ch, ok := b.changes.Entries[id]; ok {
		return ch.New, nil
	}
	return b.base.Entry(id)
}

// update records a changed or new entry.
func (b *block) update(old, e *Entry) {
	ch, ok := b.changes.Entries[e.ID]
	if !ok {
		ch.Old = old
	}
	ch.New = e
	b.changes.Entries[e.ID] = ch
}

// spend takes the runes of an output the tx spends.
func (b *block) spend(p Pos) ([]Balance, error) {
	if bal, ok := b.changes.Created[p]; ok {
		delete(b.changes.Created, p)
		return bal, nil
	}
	bal, err := b.base.Balances(p)
	if err != nil || len(bal) == 0 {
		return nil, err
	}
	b.changes.Spent[p] = bal
	return bal, nil
}

func (b *block) tx(tx *Tx) error {
	unallocated := map[RuneID]U128{}
	var spent []Pos
	for _, in := range tx.Inputs {
		if in.Coinbase {
			continue
		}
		bal, err := b.spend(in.Prev)
		if err != nil {
			return err
		}
		if len(bal) > 0 {
			spent = append(spent, in.Prev)
		}
		for _, x := range bal {
			if err := add(unallocated, x.ID, x.Amount); err != nil {
				return err
			}
		}
	}
	record := TxRunes{Index: tx.Index, Inputs: sorted(unallocated), Spent: spent}
	art := runestone.Decipher(tx.Outputs)
	record.Artifact = art
	allocated := make([]map[RuneID]U128, len(tx.Outputs))
	for i := range allocated {
		allocated[i] = map[RuneID]U128{}
	}
	if art != nil {
		if err := b.artifact(tx, art, unallocated, allocated); err != nil {
			return err
		}
	}
	burned, err := settle(tx, art, unallocated, allocated)
	if err != nil {
		return err
	}
	for vout, m := range allocated {
		if len(m) > 0 && !runestone.IsOpReturn(tx.Outputs[vout]) {
			bal := sorted(m)
			b.changes.Created[Pos{b.height, tx.Index, uint32(vout)}] = bal
			record.Outputs = append(record.Outputs, OutputRunes{uint32(vout), bal})
		}
	}
	for id, v := range burned {
		e, err := b.entry(id)
		if err != nil {
			return err
		}
		if e == nil {
			return fmt.Errorf("burned rune %s has no entry", id)
		}
		ne := *e
		var ok bool
		if ne.Burned, ok = ne.Burned.Add(v); !ok {
			return errOverflow
		}
		b.update(e, &ne)
	}
	record.Burned = sorted(burned)
	if len(record.Inputs) > 0 || art != nil {
		b.changes.Txs = append(b.changes.Txs, record)
	}
	return nil
}

// firstSpendable is the first output that is not an OP_RETURN, or -1.
func firstSpendable(outs [][]byte) int {
	for i, s := range outs {
		if !runestone.IsOpReturn(s) {
			return i
		}
	}
	return -1
}

func sorted(m map[RuneID]U128) []Balance {
	var out []Balance
	for id, v := range m {
		out = append(out, Balance{id, v})
	}
	sortBalances(out)
	return out
}

// Genesis is the rune ord creates with the index on mainnet: UNCOMMON•GOODS,
// id 1:0, mintable by anyone for 1 unit a mint from the fourth halving to
// the fifth, with no etching tx. Nil on other networks.
func Genesis(net runestone.Network) *Entry {
	if net != runestone.Mainnet {
		return nil
	}
	name, _ := runestone.ParseRune("UNCOMMONGOODS")
	one := runestone.U64(1)
	capv := runestone.MaxU128
	start, end := uint64(4*runestone.SubsidyHalvingInterval), uint64(5*runestone.SubsidyHalvingInterval)
	symbol := '\u29c9'
	return &Entry{ID: RuneID{Block: 1}, Rune: name, Spacers: 128, Symbol: &symbol, Turbo: true,
		Terms: &runestone.Terms{Amount: &one, Cap: &capv, HeightStart: &start, HeightEnd: &end}}
}

// settle gives what the edicts left to the pointer's output or the first
// non-OP_RETURN one (a cenotaph burns it all, as does a tx with no such
// output), and returns what is burned, runes sent to OP_RETURN outputs
// included.
func settle(tx *Tx, art *runestone.Artifact, unallocated map[RuneID]U128, allocated []map[RuneID]U128) (map[RuneID]U128, error) {
	burned := map[RuneID]U128{}
	vout := -1
	switch {
	case art != nil && art.Cenotaph != nil:
	case art != nil && art.Runestone.Pointer != nil:
		vout = int(*art.Runestone.Pointer)
	default:
		vout = firstSpendable(tx.Outputs)
	}
	for id, v := range unallocated {
		if v.IsZero() {
			continue
		}
		target := burned
		if vout >= 0 {
			target = allocated[vout]
		}
		if err := add(target, id, v); err != nil {
			return nil, err
		}
	}
	for i, m := range allocated {
		if !runestone.IsOpReturn(tx.Outputs[i]) {
			continue
		}
		for id, v := range m {
			if err := add(burned, id, v); err != nil {
				return nil, err
			}
		}
	}
	return burned, nil
}
