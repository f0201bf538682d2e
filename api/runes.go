package api

import (
	"context"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// RuneQueries answers GET /api/v2/rune/<id|name> from the Runes index
// (db/optional/runes).
type RuneQueries interface {
	Rune(ctx context.Context, idOrName string) (*RuneInfo, error)
	// TxWithRunes and UtxosWithRunes are Tx and Utxos with runes=true.
	TxWithRunes(ctx context.Context, txid string) (*Tx, error)
	UtxosWithRunes(ctx context.Context, descriptor string, onlyConfirmed bool, gap int) ([]Utxo, error)
	// RuneHistory pages the txs that moved an address's runes.
	RuneHistory(ctx context.Context, address string, q AddressQuery) (*RuneHistory, error)
}

// RuneInfo is a rune's entry. Amounts are decimal strings of atomic units
// (they may pass 2^64), as Blockbook writes balances.
type RuneInfo struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	SpacedName   string     `json:"spacedName"`
	Number       uint64     `json:"number"`
	Etching      string     `json:"etching,omitempty"` // the etching txid; none for mainnet's genesis rune
	Block        uint64     `json:"block"`
	Divisibility uint8      `json:"divisibility"`
	Symbol       string     `json:"symbol,omitempty"`
	Premine      string     `json:"premine"`
	Terms        *RuneTerms `json:"terms,omitempty"`
	Turbo        bool       `json:"turbo"`
	Mints        string     `json:"mints"`
	Burned       string     `json:"burned"`
	Supply       string     `json:"supply"`
	Timestamp    int64      `json:"timestamp"`
}

// RuneTerms are a rune's open-mint terms; absent fields are unset.
type RuneTerms struct {
	Amount      string  `json:"amount,omitempty"`
	Cap         string  `json:"cap,omitempty"`
	HeightStart *uint64 `json:"heightStart,omitempty"`
	HeightEnd   *uint64 `json:"heightEnd,omitempty"`
	OffsetStart *uint64 `json:"offsetStart,omitempty"`
	OffsetEnd   *uint64 `json:"offsetEnd,omitempty"`
}

var errRunesOff = userErr("runes index is not enabled: start blockbook with -runesindex (or \"runes_index\": true) on an empty datadir")

// parseRuneID reads block:tx.
func parseRuneID(s string) (runestone.RuneID, bool) {
	b, t, ok := strings.Cut(s, ":")
	if !ok {
		return runestone.RuneID{}, false
	}
	block, err1 := strconv.ParseUint(b, 10, 64)
	tx, err2 := strconv.ParseUint(t, 10, 32)
	return runestone.RuneID{Block: block, Tx: uint32(tx)}, err1 == nil && err2 == nil
}

// Rune answers a rune by its id (block:tx) or its name (with or without
// spacers, • or .).
func (s *UtxoService) Rune(_ context.Context, q string) (*RuneInfo, error) {
	id, byID := parseRuneID(q)
	var name runestone.SpacedRune
	if !byID {
		var err error
		if name, err = runestone.ParseSpacedRune(q); err != nil {
			return nil, userErr("rune %q: not an id (block:tx) nor a name: %v", truncate(q, 80), err)
		}
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if on, err := db.OptionalMarked(v.snap, runes.Name); err != nil {
		return nil, err
	} else if !on {
		return nil, errRunesOff
	}
	var e *runes.Entry
	if byID {
		e, err = runes.ReadEntry(v.snap, id)
	} else {
		e, err = runes.ReadEntryByName(v.snap, name.Rune)
	}
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, userErr("rune %q not found", truncate(q, 80))
	}
	return runeInfo(e), nil
}

func runeInfo(e *runes.Entry) *RuneInfo {
	r := &RuneInfo{ID: e.ID.String(), Name: e.Rune.String(),
		SpacedName: runestone.SpacedRune{Rune: e.Rune, Spacers: e.Spacers}.String(), Number: e.Number,
		Block: e.ID.Block, Divisibility: e.Divisibility, Premine: e.Premine.String(), Turbo: e.Turbo,
		Mints: e.Mints.String(), Burned: e.Burned.String(), Supply: e.Supply().String(), Timestamp: e.Timestamp}
	if e.Etching != ([32]byte{}) {
		r.Etching = e.Etching.String()
	}
	if e.Symbol != nil {
		r.Symbol = string(*e.Symbol)
	}
	r.Terms = runeTerms(e.Terms) // runes_explorer.go
	return r
}
