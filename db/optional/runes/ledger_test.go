package runes

import (
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// memState is a State in maps, committing each block's Changes.
type memState struct {
	outs    map[Pos][]Balance
	entries map[RuneID]*Entry
	names   map[runestone.Rune]RuneID
}

func newMemState() *memState {
	return &memState{outs: map[Pos][]Balance{}, entries: map[RuneID]*Entry{}, names: map[runestone.Rune]RuneID{}}
}

func (m *memState) Balances(p Pos) ([]Balance, error) { return m.outs[p], nil }
func (m *memState) Entry(id RuneID) (*Entry, error)   { return m.entries[id], nil }
func (m *memState) IDByRune(r runestone.Rune) (RuneID, bool, error) {
	id, ok := m.names[r]
	return id, ok, nil
}
func (m *memState) RuneCount() (uint64, error) { return uint64(len(m.entries)), nil }

func (m *memState) commit(c *Changes) {
	for p := range c.Spent {
		delete(m.outs, p)
	}
	for p, b := range c.Created {
		m.outs[p] = b
	}
	for id, ch := range c.Entries {
		m.entries[id] = ch.New
		m.names[ch.New.Rune] = id
	}
}

// chain builds txs for the ledger tests.
type chain struct {
	t      *testing.T
	st     *memState
	height uint32
	txs    []Tx
}

var (
	p2tr   = append([]byte{0x51, 0x20}, make([]byte, 32)...)
	p2wpkh = append([]byte{0x00, 0x14}, make([]byte, 20)...)
)

func (c *chain) add(ins []Input, outs ...[]byte) Pos {
	idx := uint32(len(c.txs) + 1) // index 0 is the coinbase
	c.txs = append(c.txs, Tx{Txid: bchain.Hash{byte(c.height), byte(idx)}, Index: idx, Inputs: ins, Outputs: outs})
	return Pos{c.height, idx, 0}
}

func (c *chain) mine() *Changes {
	c.t.Helper()
	ch, err := ApplyBlock(c.st, runestone.Regtest, c.height, 0, c.txs)
	if err != nil {
		c.t.Fatal(err)
	}
	c.st.commit(ch)
	c.height++
	c.txs = nil
	return ch
}

func spend(p Pos) Input { return Input{Prev: p, PrevScript: p2wpkh} }

// revealing spends a taproot output with a tapscript pushing the name's
// commitment.
func revealing(p Pos, name runestone.Rune) Input {
	script := append([]byte{0x20}, make([]byte, 32)...)
	script = append(script, 0xac, 0x00, 0x63) // OP_CHECKSIG OP_FALSE OP_IF
	c := name.Commitment()
	script = append(append(append(script, byte(len(c))), c...), 0x68)
	return Input{Prev: p, PrevScript: p2tr, Witness: [][]byte{make([]byte, 64), script, make([]byte, 33)}}
}

func u(v uint64) *U128 { x := runestone.U64(v); return &x }

func balances(t *testing.T, st *memState, p Pos) string {
	t.Helper()
	return fmt.Sprint(st.outs[p])
}

func TestLedgerEtchMintTransferBurn(t *testing.T) {
	c := &chain{t: t, st: newMemState(), height: 100}
	name, _ := runestone.ParseRune("LEDGERTESTRUNE")
	commit := c.add(nil, p2tr)
	early := c.add(nil, p2tr)
	c.mine() // 100
	for range 4 {
		c.mine()
	}
	// height 105: 6 confirmations of the commit (100..105); the early one
	// reveals at 104 with only 5, so it etches nothing.
	etch := func(premine uint64) []byte {
		return (&runestone.Runestone{Etching: &runestone.Etching{Rune: &name, Premine: u(premine), Divisibility: new(uint8),
			Terms: &runestone.Terms{Amount: u(10), Cap: u(2)}}}).Encipher()
	}
	c.height = 104
	c.add([]Input{revealing(early, name)}, p2wpkh, etch(1000))
	if ch := c.mine(); len(ch.Entries) != 0 || len(ch.Created) != 0 {
		t.Fatalf("etching with 5 confirmations: %+v", ch)
	}
	etchPos := c.add([]Input{revealing(commit, name)}, p2wpkh, etch(1000))
	ch := c.mine() // 105
	id := RuneID{Block: 105, Tx: 1}
	if e := c.st.entries[id]; e == nil || e.Rune != name || e.Premine != *u(1000) {
		t.Fatalf("entry %+v, changes %+v", e, ch)
	}
	if got := balances(t, c.st, etchPos); got != fmt.Sprint([]Balance{{id, *u(1000)}}) {
		t.Fatalf("premine output %s", got)
	}
	// the name is taken now
	c.add([]Input{revealing(Pos{100, 2, 0}, name)}, p2wpkh, etch(5))
	if ch := c.mine(); len(ch.Entries) != 0 {
		t.Fatalf("second etching of a taken name: %+v", ch.Entries)
	}

	// three mints: the cap of 2 stops the third
	mint := (&runestone.Runestone{Mint: &id}).Encipher()
	m1 := c.add(nil, mint, p2wpkh)
	m2 := c.add(nil, p2wpkh, mint)
	m3 := c.add(nil, p2wpkh, mint)
	c.mine() // 107
	if got := c.st.entries[id].Mints; got != *u(2) {
		t.Fatalf("mints %s", got)
	}
	if balances(t, c.st, Pos{m1.Height, m1.Index, 1}) != fmt.Sprint([]Balance{{id, *u(10)}}) ||
		balances(t, c.st, m2) != fmt.Sprint([]Balance{{id, *u(10)}}) || len(c.st.outs[m3]) != 0 {
		t.Fatalf("mint outputs %v", c.st.outs)
	}

	// a transfer splitting 1000 over three outputs (output = count, amount 0)
	split := (&runestone.Runestone{Edicts: []runestone.Edict{{ID: id, Amount: runestone.U128{}, Output: 4}}}).Encipher()
	tr := c.add([]Input{spend(etchPos)}, p2wpkh, split, p2wpkh, p2wpkh)
	c.mine() // 108
	want := []string{"334", "", "333", "333"}
	for vout, w := range want {
		got := c.st.outs[Pos{tr.Height, tr.Index, uint32(vout)}]
		if (w == "" && len(got) != 0) || (w != "" && (len(got) != 1 || got[0].Amount.String() != w)) {
			t.Fatalf("split output %d: %v, want %s", vout, got, w)
		}
	}

	// a cenotaph burns its inputs' runes (and a pointer to an OP_RETURN burns too)
	ceno := runestone.Script([]byte{0x18, 0x01}) // unrecognized even tag 24
	c.add([]Input{spend(tr)}, p2wpkh, ceno)
	ptr := uint32(1)
	toOpReturn := (&runestone.Runestone{Pointer: &ptr}).Encipher()
	c.add([]Input{spend(Pos{tr.Height, tr.Index, 2})}, p2wpkh, toOpReturn)
	c.mine() // 109
	if got := c.st.entries[id].Burned; got != *u(667) {
		t.Fatalf("burned %s, want 667", got)
	}
	if e := c.st.entries[id]; e.Supply() != *u(1020) {
		t.Fatalf("supply %s", e.Supply())
	}

	// an unnamed etching gets the reserved name of its position
	c.add(nil, p2wpkh, (&runestone.Runestone{Etching: &runestone.Etching{Premine: u(7)}}).Encipher())
	c.mine() // 110
	rid := RuneID{Block: 110, Tx: 1}
	if e := c.st.entries[rid]; e == nil || e.Rune != runestone.ReservedRune(110, 1) || len(c.st.outs[Pos{110, 1, 0}]) != 1 {
		t.Fatalf("reserved etching %+v", e)
	}
}

func TestMintWindow(t *testing.T) {
	hs, he, os := uint64(10), uint64(20), uint64(5)
	e := &Entry{ID: RuneID{Block: 8}, Terms: &runestone.Terms{Amount: u(3), Cap: u(100), HeightStart: &hs, HeightEnd: &he, OffsetStart: &os}}
	for h, ok := range map[uint64]bool{9: false, 12: false, 13: true, 19: true, 20: false} {
		if _, got := e.mintable(h); got != ok {
			t.Errorf("height %d: mintable %v", h, got)
		}
	}
}

func TestGenesisMainnet(t *testing.T) {
	st := newMemState()
	ch, err := ApplyBlock(st, runestone.Mainnet, 840000, 0, []Tx{{Index: 1, Outputs: [][]byte{p2wpkh, (&runestone.Runestone{Mint: &RuneID{Block: 1}}).Encipher()}}})
	if err != nil {
		t.Fatal(err)
	}
	g := ch.Entries[RuneID{Block: 1}].New
	if g == nil || (runestone.SpacedRune{Rune: g.Rune, Spacers: g.Spacers}).String() != "UNCOMMON•GOODS" || g.Mints != *u(1) {
		t.Fatalf("genesis %+v", g)
	}
	if ch, _ := ApplyBlock(st, runestone.Mainnet, 839999, 0, nil); len(ch.Entries) != 0 {
		t.Fatal("changes before activation")
	}
}
