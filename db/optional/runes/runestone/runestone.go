// Package runestone decodes runestones: the OP_RETURN OP_13 outputs that
// etch, mint and move runes on Bitcoin, as the Runes specification
// defines them (ord is the reference implementation). It reads scripts
// only; the ledger that applies them is the runes index's.
package runestone

import "fmt"

// Tags of the fields before the body. Even tags are rules a decoder must
// know (an unknown one makes a cenotaph); odd ones may be ignored.
const (
	TagBody         = 0
	TagFlags        = 2
	TagRune         = 4
	TagPremine      = 6
	TagCap          = 8
	TagAmount       = 10
	TagHeightStart  = 12
	TagHeightEnd    = 14
	TagOffsetStart  = 16
	TagOffsetEnd    = 18
	TagMint         = 20
	TagPointer      = 22
	TagCenotaph     = 126
	TagDivisibility = 1
	TagSpacers      = 3
	TagSymbol       = 5
	TagNop          = 127
)

// Flag bits of TagFlags.
const (
	FlagEtching  = 0
	FlagTerms    = 1
	FlagTurbo    = 2
	FlagCenotaph = 127
)

// Limits of an etching's fields.
const (
	MaxDivisibility = 38
	MaxSpacers      = 1<<27 - 1
	// CommitConfirmations is how deep the tx that committed a name must be
	// (counting the etching's own block as the first) for the etching to
	// take it.
	CommitConfirmations = 6
)

// Flaw is why a runestone is a cenotaph.
type Flaw int

const (
	FlawNone Flaw = iota
	FlawEdictOutput
	FlawEdictRuneID
	FlawInvalidScript
	FlawOpcode
	FlawSupplyOverflow
	FlawTrailingIntegers
	FlawTruncatedField
	FlawUnrecognizedEvenTag
	FlawUnrecognizedFlag
	FlawVarint
)

var flawNames = [...]struct{ id, text string }{
	{"", ""},
	{"edict-output", "edict output greater than transaction output count"},
	{"edict-rune-id", "invalid rune ID in edict"},
	{"invalid-script", "invalid script in OP_RETURN"},
	{"opcode", "non-pushdata opcode in OP_RETURN"},
	{"supply-overflow", "supply overflows u128"},
	{"trailing-integers", "trailing integers in body"},
	{"truncated-field", "field with missing value"},
	{"unrecognized-even-tag", "unrecognized even tag"},
	{"unrecognized-flag", "unrecognized field"},
	{"varint", "invalid varint"},
}

// ID is the flaw's kebab-case name (ord's JSON spelling).
func (f Flaw) ID() string { return flawNames[f].id }

// String describes the flaw in ord's words.
func (f Flaw) String() string { return flawNames[f].text }

// MarshalText writes the flaw's ID.
func (f Flaw) MarshalText() ([]byte, error) { return []byte(f.ID()), nil }

// RuneID names a rune by its etching: block height and tx index.
type RuneID struct {
	Block uint64
	Tx    uint32
}

func (id RuneID) String() string { return fmt.Sprintf("%d:%d", id.Block, id.Tx) }

// MarshalText writes block:tx.
func (id RuneID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// newRuneID refuses block 0 with a non-zero tx (0:0 stands for the rune
// being etched).
func newRuneID(block, tx uint64) (RuneID, bool) {
	if tx > 0xffffffff || (block == 0 && tx > 0) {
		return RuneID{}, false
	}
	return RuneID{block, uint32(tx)}, true
}

// next applies an edict's delta: a block delta moves the block and takes
// the tx as it is; a zero one adds to the tx.
func (id RuneID) next(dBlock, dTx U128) (RuneID, bool) {
	db, ok := dBlock.Uint64()
	if !ok {
		return RuneID{}, false
	}
	dt, ok := dTx.Uint64()
	if !ok || dt > 0xffffffff {
		return RuneID{}, false
	}
	block := id.Block + db
	if block < id.Block {
		return RuneID{}, false
	}
	tx := dt
	if db == 0 {
		tx = uint64(id.Tx) + dt
	}
	return newRuneID(block, tx)
}

// Edict moves Amount of rune ID to output Output; Output equal to the
// tx's output count spreads it over every non-OP_RETURN output, and
// amount 0 means all that is unallocated.
type Edict struct {
	ID     RuneID `json:"id"`
	Amount U128   `json:"amount"`
	Output uint32 `json:"output"`
}

// Terms are an etching's open-mint terms.
type Terms struct {
	Amount      *U128   `json:"amount,omitempty"`
	Cap         *U128   `json:"cap,omitempty"`
	HeightStart *uint64 `json:"heightStart,omitempty"`
	HeightEnd   *uint64 `json:"heightEnd,omitempty"`
	OffsetStart *uint64 `json:"offsetStart,omitempty"`
	OffsetEnd   *uint64 `json:"offsetEnd,omitempty"`
}

// Etching creates a rune. A nil Rune asks for a reserved name.
type Etching struct {
	Divisibility *uint8  `json:"divisibility,omitempty"`
	Premine      *U128   `json:"premine,omitempty"`
	Rune         *Rune   `json:"-"`
	Spacers      *uint32 `json:"spacers,omitempty"`
	Symbol       *rune   `json:"-"`
	Terms        *Terms  `json:"terms,omitempty"`
	Turbo        bool    `json:"turbo"`
}

// Supply is premine + cap*amount, and whether it fits 128 bits.
func (e *Etching) Supply() (U128, bool) {
	var premine, capv, amount U128
	if e.Premine != nil {
		premine = *e.Premine
	}
	if e.Terms != nil && e.Terms.Cap != nil {
		capv = *e.Terms.Cap
	}
	if e.Terms != nil && e.Terms.Amount != nil {
		amount = *e.Terms.Amount
	}
	m, ok := capv.Mul(amount)
	if !ok {
		return U128{}, false
	}
	return premine.Add(m)
}

// Runestone is a valid runestone.
type Runestone struct {
	Edicts  []Edict  `json:"edicts"`
	Etching *Etching `json:"etching,omitempty"`
	Mint    *RuneID  `json:"mint,omitempty"`
	Pointer *uint32  `json:"pointer,omitempty"`
}

// Cenotaph is a malformed runestone: its inputs' runes are burned, an
// etching it names is created with no supply, and a mint it names is
// counted but its runes burned.
type Cenotaph struct {
	Flaw    Flaw    `json:"flaw"`
	Etching *Rune   `json:"-"`
	Mint    *RuneID `json:"mint,omitempty"`
}

// Artifact is what a tx's runestone output decodes to: one of the two.
type Artifact struct {
	Runestone *Runestone
	Cenotaph  *Cenotaph
}

// MintID is the rune the artifact mints, if any.
func (a *Artifact) MintID() *RuneID {
	if a.Runestone != nil {
		return a.Runestone.Mint
	}
	return a.Cenotaph.Mint
}
