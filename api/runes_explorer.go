package api

// runes_explorer.go: what the HTML explorer shows of runes beyond the
// runes=true answers: whether the index is on, and a tx's runestone
// decoded from its outputs with the runes it names read from the index.

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// IsRunesOff reports whether err says the Runes index is off.
func IsRunesOff(err error) bool { return errors.Is(err, errRunesOff) }

// RunesIndexed reports whether the store keeps the Runes index (fixed
// when the datadir is created).
func (s *UtxoService) RunesIndexed(context.Context) (bool, error) {
	v, err := s.newView()
	if err != nil {
		return false, err
	}
	defer v.release()
	return db.OptionalMarked(v.snap, runes.Name)
}

// RuneDecimal writes an amount of atomic units with the rune's
// divisibility, trailing zeros dropped (ord's display); amount is a
// decimal string as in RuneBalance.
func RuneDecimal(amount string, divisibility uint8) string {
	u, err := runestone.ParseU128(amount)
	if err != nil {
		return amount
	}
	return ordDecimal(u, divisibility)
}

// RunestoneInfo is a tx's runestone as the explorer shows it: a valid
// runestone (etching, mint, edicts, pointer) or a cenotaph (its flaw,
// and the etching and mint it still names).
type RunestoneInfo struct {
	Vout     int // the output that carries it
	Cenotaph bool
	Flaw     string // the cenotaph's flaw, in ord's words
	Etching  *EtchingInfo
	Mint     *RuneRef
	Edicts   []EdictInfo
	Pointer  *uint32
	// Outputs is the tx's output count (an edict to it splits the amount
	// over the outputs that are not OP_RETURN).
	Outputs int
}

// EtchingInfo is an etching as written in the runestone; Created is the
// rune it made, read from the index (nil while pending, or when the
// etching made none: no commitment, a name taken or not yet unlocked).
type EtchingInfo struct {
	Name         string // spaced; empty: a reserved name is assigned
	Symbol       string
	Divisibility uint8
	Premine      string
	Terms        *RuneTerms
	Turbo        bool
	Supply       string // premine + cap × amount; empty when it overflows
	Created      *RuneRef
}

// RuneRef names a rune; Known is false when the index has no such rune.
type RuneRef struct {
	ID           string
	SpacedName   string
	Divisibility uint8
	Symbol       string
	Known        bool
}

// EdictInfo is an edict: Amount "0" gives all that is unallocated, and
// Output equal to the output count splits over the outputs.
type EdictInfo struct {
	Rune   RuneRef
	Amount string
	Output uint32
	All    bool
	Split  bool
}

// decodeRunestone deciphers the runestone of a tx answer from its output
// scripts (Vout.Hex); nil when it has none.
func decodeRunestone(tx *Tx) (*RunestoneInfo, []runestone.RuneID) {
	scripts := make([][]byte, len(tx.Vout))
	vout := -1
	for i, o := range tx.Vout {
		scripts[i], _ = hex.DecodeString(o.Hex)
		if vout < 0 && len(scripts[i]) > 1 && scripts[i][0] == 0x6a && scripts[i][1] == 0x5d {
			vout = i
		}
	}
	art := runestone.Decipher(scripts)
	if art == nil {
		return nil, nil
	}
	out := &RunestoneInfo{Vout: vout, Outputs: len(tx.Vout)}
	var ids []runestone.RuneID
	if c := art.Cenotaph; c != nil {
		out.Cenotaph, out.Flaw = true, c.Flaw.String()
		if c.Etching != nil {
			out.Etching = &EtchingInfo{Name: c.Etching.String(), Premine: "0"}
		}
		if c.Mint != nil {
			out.Mint, ids = &RuneRef{ID: c.Mint.String()}, append(ids, *c.Mint)
		}
		return out, ids
	}
	r := art.Runestone
	out.Pointer = r.Pointer
	if r.Mint != nil {
		out.Mint, ids = &RuneRef{ID: r.Mint.String()}, append(ids, *r.Mint)
	}
	for _, e := range r.Edicts {
		out.Edicts = append(out.Edicts, EdictInfo{Rune: RuneRef{ID: e.ID.String()}, Amount: e.Amount.String(),
			Output: e.Output, All: e.Amount.IsZero(), Split: int(e.Output) == len(tx.Vout)})
		ids = append(ids, e.ID)
	}
	if e := r.Etching; e != nil {
		out.Etching = etchingInfo(e)
	}
	return out, ids
}

func etchingInfo(e *runestone.Etching) *EtchingInfo {
	ei := &EtchingInfo{Premine: "0", Turbo: e.Turbo}
	if e.Rune != nil {
		sp := runestone.SpacedRune{Rune: *e.Rune}
		if e.Spacers != nil {
			sp.Spacers = *e.Spacers
		}
		ei.Name = sp.String()
	}
	if e.Symbol != nil {
		ei.Symbol = string(*e.Symbol)
	}
	if e.Divisibility != nil {
		ei.Divisibility = *e.Divisibility
	}
	if e.Premine != nil {
		ei.Premine = e.Premine.String()
	}
	ei.Terms = runeTerms(e.Terms)
	if s, ok := e.Supply(); ok {
		ei.Supply = s.String()
	}
	return ei
}

// Runestone decodes a tx answer's runestone and names its runes from the
// index: the rune an etching created (its id is the tx's block and
// position), and the runes a mint and edicts name (0:0 in an edict is
// the rune the tx etches). Nil when the tx has no runestone.
func (s *UtxoService) Runestone(_ context.Context, tx *Tx) (*RunestoneInfo, error) {
	info, ids := decodeRunestone(tx)
	if info == nil {
		return nil, nil
	}
	v, err := s.newView()
	if err == nil {
		if err = runesOn(v.snap); err != nil {
			v.release()
		}
	}
	if err != nil {
		return nil, err
	}
	defer v.release()
	var etched *runes.Entry
	if txid, err := bchain.ParseHash(tx.Txid); err == nil && info.Etching != nil {
		ta, err := db.ReadTxAddresses(v.snap, txid)
		if err != nil {
			return nil, err
		}
		if ta != nil {
			e, err := runes.ReadEntry(v.snap, runestone.RuneID{Block: uint64(ta.Height), Tx: ta.Index})
			if err != nil {
				return nil, err
			}
			if e != nil && e.Etching == txid {
				etched = e
				info.Etching.Created = runeRef(e)
			}
		}
	}
	name := func(id runestone.RuneID) (*RuneRef, error) {
		if id == (runestone.RuneID{}) {
			if etched == nil {
				return &RuneRef{ID: id.String()}, nil
			}
			return runeRef(etched), nil
		}
		e, err := runes.ReadEntry(v.snap, id)
		if err != nil || e == nil {
			return &RuneRef{ID: id.String()}, err
		}
		return runeRef(e), nil
	}
	if info.Mint != nil {
		if info.Mint, err = name(ids[0]); err != nil {
			return nil, err
		}
		ids = ids[1:]
	}
	for i := range info.Edicts {
		ref, err := name(ids[i])
		if err != nil {
			return nil, err
		}
		info.Edicts[i].Rune = *ref
	}
	return info, nil
}

// runeTerms is an etching's or entry's terms as answered.
func runeTerms(t *runestone.Terms) *RuneTerms {
	if t == nil {
		return nil
	}
	out := &RuneTerms{HeightStart: t.HeightStart, HeightEnd: t.HeightEnd, OffsetStart: t.OffsetStart, OffsetEnd: t.OffsetEnd}
	if t.Amount != nil {
		out.Amount = t.Amount.String()
	}
	if t.Cap != nil {
		out.Cap = t.Cap.String()
	}
	return out
}

func runeRef(e *runes.Entry) *RuneRef {
	i := runeInfo(e)
	return &RuneRef{ID: i.ID, SpacedName: i.SpacedName, Divisibility: i.Divisibility, Symbol: i.Symbol, Known: true}
}

// RunePage is the explorer's rune page: the entry, whether the next
// block may mint it and how much a mint gives, the mints left under its
// cap, and its holders.
type RunePage struct {
	RuneInfo
	Mintable   bool
	MintAmount string // what a mint in the next block gets
	MintsLeft  string // cap − mints; empty without terms
	Height     uint32 // the tip the answer was read at
	Holders    uint64 // addresses holding it, at that tip
}

// RunePage answers a rune by id or name as Rune does; a well-formed id or
// name that names no rune is a not-found error (IsNotFound).
func (s *UtxoService) RunePage(ctx context.Context, q string) (*RunePage, error) {
	info, err := s.Rune(ctx, q)
	if err != nil {
		_, byID := parseRuneID(q)
		_, nerr := runestone.ParseSpacedRune(q)
		if ue, ok := AsUserError(err); ok && !IsRunesOff(err) && (byID || nerr == nil) {
			return nil, &Error{Msg: ue.Msg, Err: ErrNotFound}
		}
		return nil, err
	}
	id, _ := parseRuneID(info.ID)
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	e, err := runes.ReadEntry(v.snap, id)
	if err != nil {
		return nil, err
	}
	if e == nil { // gone in a reorg since
		return nil, &Error{Msg: "rune " + info.ID + " not found", Err: ErrNotFound}
	}
	out := &RunePage{RuneInfo: *runeInfo(e), Height: v.tip.Height}
	// in the same view as the entry: a block landing between two views
	// could pair one tip's entry with another's holders
	if out.Holders, err = runes.ReadHolders(v.snap, id); err != nil {
		return nil, err
	}
	if amount, ok := e.Mintable(uint64(v.tip.Height) + 1); ok {
		out.Mintable, out.MintAmount = true, amount.String()
	}
	if e.Terms != nil {
		var capv runestone.U128 // no cap: no mints
		if e.Terms.Cap != nil {
			capv = *e.Terms.Cap
		}
		left, _ := capv.Sub(e.Mints)
		out.MintsLeft = left.String()
	}
	return out, nil
}
