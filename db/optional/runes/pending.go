package runes

// pending.go: the runes a pending (mempool) tx moves, for the answers
// that show unconfirmed data. Nothing is stored: the caller hands the
// runes of the outputs the tx spends (confirmed ones from ReadOutput,
// pending ones from earlier ApplyPending calls), and the tx is applied
// as ord would apply it alone in the next block.

import (
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// PendingHeight is the height of the positions a caller gives the
// outputs of pending txs (Input.Prev): above any block, so no confirmed
// output shares one and no etching commitment counts an unconfirmed
// parent as deep enough.
const PendingHeight = ^uint32(0)

// pendingState reads entries and names from the database, and the spent
// outputs' runes from what the caller gave.
type pendingState struct {
	r     db.Reader
	spent map[Pos][]Balance
}

func (s pendingState) Balances(p Pos) ([]Balance, error) { return s.spent[p], nil }

func (s pendingState) get(k []byte) ([]byte, error) { return db.Get(s.r, db.CFRunes, k) }

func (s pendingState) Entry(id RuneID) (*Entry, error) { return readEntry(s.get, id) }

func (s pendingState) IDByRune(r runestone.Rune) (RuneID, bool, error) { return idByRune(s.get, r) }

func (s pendingState) RuneCount() (uint64, error) { return runeCount(s.get) }

// ApplyPending returns what a pending tx does to runes if mined alone in
// block next (the tip's successor): its inputs' runes, its outputs', its
// burns (a cenotaph's among them); nil when it moves none. spent holds
// the runes of the outputs its inputs spend, by the positions in
// tx.Inputs. Mints count against the confirmed entry only (two pending
// mints may both show though the cap allows one), and a pending etching's
// premine is left out: its rune has no id before a block holds it.
func ApplyPending(r db.Reader, net runestone.Network, next uint32, time int64, tx Tx, spent map[Pos][]Balance) (*TxRunes, error) {
	ch, err := ApplyBlock(pendingState{r: r, spent: spent}, net, next, time, []Tx{tx})
	if err != nil || len(ch.Txs) == 0 {
		return nil, err
	}
	t := ch.Txs[0]
	etched := func(bs []Balance) []Balance {
		out := bs[:0:0]
		for _, b := range bs {
			if b.ID.Block != uint64(next) {
				out = append(out, b)
			}
		}
		return out
	}
	var outs []OutputRunes
	for _, o := range t.Outputs {
		if bal := etched(o.Balances); len(bal) > 0 {
			outs = append(outs, OutputRunes{Vout: o.Vout, Balances: bal})
		}
	}
	t.Outputs, t.Burned = outs, etched(t.Burned)
	if len(t.Inputs) == 0 && len(t.Outputs) == 0 && len(t.Burned) == 0 {
		return nil, nil
	}
	return &t, nil
}
