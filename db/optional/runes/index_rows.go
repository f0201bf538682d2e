package runes

import (
	"encoding/binary"

	"github.com/openexplorer/blockbook/bchain"
)

// rows turns a block's changes into the rows to write (nil: delete):
// outputs, entries, names, the count and the addresses' balances.
func (x *Index) rows(ch *Changes, descs map[Pos]bchain.AddrDesc) (map[string][]byte, error) {
	rows := map[string][]byte{}
	type delta struct{ plus, minus map[RuneID]U128 }
	addrs := map[string]*delta{}
	touch := func(p Pos, bal []Balance, spent bool) {
		d := descs[p]
		if d == nil {
			return
		}
		a := addrs[string(d)]
		if a == nil {
			a = &delta{plus: map[RuneID]U128{}, minus: map[RuneID]U128{}}
			addrs[string(d)] = a
		}
		m := a.plus
		if spent {
			m = a.minus
		}
		for _, b := range bal {
			_ = add(m, b.ID, b.Amount) // an address holds less than a rune's supply
		}
	}
	for p, bal := range ch.Spent {
		rows[string(outputKey(p))] = nil
		touch(p, bal, true)
	}
	for p, bal := range ch.Created {
		rows[string(outputKey(p))] = packBalances(bal)
		touch(p, bal, false)
	}
	etched := 0
	for id, c := range ch.Entries {
		rows[string(entryKey(id))] = packEntry(c.New)
		if c.Old == nil {
			rows[string(nameKey(c.New.Rune))] = packID(id)
			rows[string(numberKey(c.New.Number))] = packID(id)
			etched++
		}
	}
	if etched > 0 {
		n, err := state{x}.RuneCount()
		if err != nil {
			return nil, err
		}
		rows[string(countKey)] = binary.AppendUvarint(nil, n+uint64(etched))
	}
	x.txRows(rows, ch, descs)
	holders := map[RuneID]int{}
	for desc, d := range addrs {
		k := addressKey(bchain.AddrDesc(desc))
		v, err := x.addressRow(k, d.plus, d.minus, holders)
		if err != nil {
			return nil, err
		}
		rows[string(k)] = v
	}
	if err := x.holderRows(rows, holders); err != nil {
		return nil, err
	}
	return rows, nil
}

// txRows adds each tx's runes row and a history row for every address
// whose runes it moved (also when a later tx of the block spends them).
func (x *Index) txRows(rows map[string][]byte, ch *Changes, descs map[Pos]bchain.AddrDesc) {
	for _, t := range ch.Txs {
		if len(t.Outputs) == 0 && len(t.Burned) == 0 {
			continue // nothing moved (an etching without premine, a mint past its cap)
		}
		rows[string(txKey(ch.Height, t.Index))] = packTxRunes(t.Outputs, t.Burned)
		hist := func(p Pos) {
			if d := descs[p]; d != nil {
				rows[string(historyKey(d, ch.Height, t.Index))] = []byte{}
			}
		}
		for _, p := range t.Spent {
			hist(p)
		}
		for _, o := range t.Outputs {
			hist(Pos{ch.Height, t.Index, o.Vout})
		}
	}
}

// addressRow is an address's balances row after adding plus and taking
// minus (nil: no runes left); holders gains +1 for each rune the address
// comes to hold and -1 for each it no longer holds.
func (x *Index) addressRow(k []byte, plus, minus map[RuneID]U128, holders map[RuneID]int) ([]byte, error) {
	cur := map[RuneID]U128{}
	if v, err := x.get(k); err != nil {
		return nil, err
	} else if v != nil {
		old, err := unpackBalances(v)
		if err != nil {
			return nil, err
		}
		for _, b := range old {
			cur[b.ID] = b.Amount
			holders[b.ID]-- // held before; added back below if still held
		}
	}
	for id, v := range plus {
		if err := add(cur, id, v); err != nil {
			return nil, err
		}
	}
	for id, v := range minus {
		left, ok := cur[id].Sub(v)
		if !ok {
			return nil, corrupt("address balance below zero")
		}
		cur[id] = left
	}
	for id, v := range cur {
		if v.IsZero() {
			delete(cur, id)
		} else {
			holders[id]++
		}
	}
	if len(cur) == 0 {
		return nil, nil
	}
	return packBalances(sorted(cur)), nil
}
