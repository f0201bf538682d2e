package api

// runes_ord.go: ord's JSON answers about runes (/runes, /rune/:rune,
// /output/:outpoint, /address/:address with Accept: application/json),
// in ord's shapes (its src/api.rs, src/index/entry.rs and templates), for
// the ord front (package ordapi).

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// OrdQueries answers ord's rune routes.
type OrdQueries interface {
	OrdRunes(ctx context.Context, page int) (*OrdRunes, error)
	OrdRune(ctx context.Context, query string) (*OrdRune, error)
	OrdOutput(ctx context.Context, outpoint string) (*OrdOutput, error)
	OrdAddress(ctx context.Context, address string) (*OrdAddress, error)
}

var _ OrdQueries = (*UtxoService)(nil)

// ErrOrdNotFound marks ord's 404 answers.
var ErrOrdNotFound = errors.New("not found")

func ordNotFound(what string) error { return &Error{Msg: what + " not found", Err: ErrOrdNotFound} }

// OrdNum is a u128 as serde_json writes it: a JSON number of any size.
type OrdNum string

func (n OrdNum) MarshalJSON() ([]byte, error) { return []byte(n), nil }

func ordNum(u runestone.U128) OrdNum { return OrdNum(u.String()) }

func ordOpt(u *runestone.U128) *OrdNum {
	if u == nil {
		return nil
	}
	n := ordNum(*u)
	return &n
}

// OrdTerms is ord's Terms: height and offset as [start, end] pairs.
type OrdTerms struct {
	Amount *OrdNum    `json:"amount"`
	Cap    *OrdNum    `json:"cap"`
	Height [2]*uint64 `json:"height"`
	Offset [2]*uint64 `json:"offset"`
}

// OrdRuneEntry is ord's RuneEntry.
type OrdRuneEntry struct {
	Block        uint64    `json:"block"`
	Burned       OrdNum    `json:"burned"`
	Divisibility uint8     `json:"divisibility"`
	Etching      string    `json:"etching"`
	Mints        OrdNum    `json:"mints"`
	Number       uint64    `json:"number"`
	Premine      OrdNum    `json:"premine"`
	SpacedRune   string    `json:"spaced_rune"`
	Symbol       *string   `json:"symbol"`
	Terms        *OrdTerms `json:"terms"`
	Timestamp    int64     `json:"timestamp"`
	Turbo        bool      `json:"turbo"`
}

// OrdRune is /rune/:rune: the entry, its id, whether the next block may
// mint it, and its parent inscription (none: no inscription index here).
type OrdRune struct {
	Entry    OrdRuneEntry `json:"entry"`
	ID       string       `json:"id"`
	Mintable bool         `json:"mintable"`
	Parent   *string      `json:"parent"`
}

// OrdRunes is /runes and /runes/:page: 50 entries a page, newest first,
// each an [id, entry] pair.
type OrdRunes struct {
	Entries []any `json:"entries"`
	More    bool  `json:"more"`
	Prev    *int  `json:"prev"`
	Next    *int  `json:"next"`
}

// OrdPile is an amount of a rune in an output.
type OrdPile struct {
	Amount       OrdNum  `json:"amount"`
	Divisibility uint8   `json:"divisibility"`
	Symbol       *string `json:"symbol"`
}

// OrdOutput is /output/:outpoint. Inscriptions and sat ranges are null:
// this server keeps neither index (ord answers null without them too).
type OrdOutput struct {
	Address       *string            `json:"address"`
	Confirmations uint32             `json:"confirmations"`
	Indexed       bool               `json:"indexed"`
	Inscriptions  *[]string          `json:"inscriptions"`
	Outpoint      string             `json:"outpoint"`
	Runes         map[string]OrdPile `json:"runes"`
	SatRanges     *[][2]uint64       `json:"sat_ranges"`
	ScriptPubkey  string             `json:"script_pubkey"`
	Spent         bool               `json:"spent"`
	Transaction   string             `json:"transaction"`
	Value         uint64             `json:"value"`
}

// OrdAddress is /address/:address: its confirmed unspent outputs, their
// sats, and their runes summed as [spaced rune, decimal, symbol].
type OrdAddress struct {
	Outputs       []string  `json:"outputs"`
	Inscriptions  *[]string `json:"inscriptions"`
	SatBalance    uint64    `json:"sat_balance"`
	RunesBalances [][3]any  `json:"runes_balances"`
}

const ordRunesPerPage = 50

// ordSymbol is a rune's symbol, null when it has none.
func ordSymbol(e *runes.Entry) *string {
	if e.Symbol == nil {
		return nil
	}
	s := string(*e.Symbol)
	return &s
}

func ordEntry(e *runes.Entry) OrdRuneEntry {
	o := OrdRuneEntry{Block: e.ID.Block, Burned: ordNum(e.Burned), Divisibility: e.Divisibility,
		Etching: e.Etching.String(), Mints: ordNum(e.Mints), Number: e.Number, Premine: ordNum(e.Premine),
		SpacedRune: runeInfo(e).SpacedName, Symbol: ordSymbol(e), Timestamp: e.Timestamp, Turbo: e.Turbo}
	if t := e.Terms; t != nil {
		o.Terms = &OrdTerms{Amount: ordOpt(t.Amount), Cap: ordOpt(t.Cap),
			Height: [2]*uint64{t.HeightStart, t.HeightEnd}, Offset: [2]*uint64{t.OffsetStart, t.OffsetEnd}}
	}
	return o
}

// ordView opens a view with the runes index on.
func (s *UtxoService) ordView() (*view, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	if err := runesOn(v.snap); err != nil {
		v.release()
		return nil, &Error{Msg: "this server has no rune index (start blockbook with -runesindex on an empty datadir)", Err: ErrOrdNotFound}
	}
	return v, nil
}

// OrdRunes answers a page of runes, newest first.
func (s *UtxoService) OrdRunes(_ context.Context, page int) (*OrdRunes, error) {
	v, count, err := runeCount(s.ordView)
	if err != nil {
		return nil, err
	}
	defer v.release()
	// newest first: page p holds the numbers count-1-50p down
	start := min(uint64(page)*ordRunesPerPage, count)
	end := min(start+ordRunesPerPage, count)
	ids, err := newestRuneIDs(v, count, start, end)
	if err != nil {
		return nil, err
	}
	out := &OrdRunes{Entries: []any{}, More: end < count}
	names := &runeNames{r: v.snap}
	for _, id := range ids {
		e, err := names.entry(id)
		if err != nil {
			return nil, err
		}
		out.Entries = append(out.Entries, [2]any{id.String(), ordEntry(e)})
	}
	if page > 0 {
		p := page - 1
		out.Prev = &p
	}
	if out.More {
		n := page + 1
		out.Next = &n
	}
	return out, nil
}

// OrdRune answers a rune by id, name (spaced or not) or number.
func (s *UtxoService) OrdRune(_ context.Context, q string) (*OrdRune, error) {
	v, err := s.ordView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	var e *runes.Entry
	if id, ok := parseRuneID(q); ok {
		e, err = runes.ReadEntry(v.snap, id)
	} else if n, nerr := strconv.ParseUint(q, 10, 64); nerr == nil {
		e, err = s.runeByNumber(v, n)
	} else {
		name, perr := runestone.ParseSpacedRune(q)
		if perr != nil {
			return nil, userErr("invalid rune %q: %v", truncate(q, 80), perr)
		}
		e, err = runes.ReadEntryByName(v.snap, name.Rune)
	}
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, ordNotFound("rune " + truncate(q, 80))
	}
	next := uint64(v.tip.Height) + 1
	_, mintable := e.Mintable(next)
	return &OrdRune{Entry: ordEntry(e), ID: e.ID.String(), Mintable: mintable}, nil
}

// runeByNumber finds the rune etched n-th (ord's numbers count from 0).
func (s *UtxoService) runeByNumber(v *view, n uint64) (*runes.Entry, error) {
	ids, err := runes.ReadIDsByNumber(v.snap, n, 1)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return runes.ReadEntry(v.snap, ids[0])
}

// ordRunesOf is an output's runes as ord's map by spaced name.
func ordRunesOf(r db.Reader, bal []runes.Balance) (map[string]OrdPile, error) {
	out := map[string]OrdPile{}
	names := &runeNames{r: r}
	for _, b := range bal {
		e, err := names.entry(b.ID)
		if err != nil {
			return nil, err
		}
		out[runeInfo(e).SpacedName] = OrdPile{Amount: ordNum(b.Amount), Divisibility: e.Divisibility, Symbol: ordSymbol(e)}
	}
	return out, nil
}

// OrdOutput answers a confirmed output, spent or not.
func (s *UtxoService) OrdOutput(_ context.Context, q string) (*OrdOutput, error) {
	ts, vs, ok := strings.Cut(q, ":")
	vout, verr := strconv.ParseUint(vs, 10, 32)
	txid, herr := bchain.ParseHash(ts)
	if !ok || verr != nil || herr != nil {
		return nil, userErr("invalid outpoint %q: want txid:vout", truncate(q, 80))
	}
	v, err := s.ordView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	ta, err := db.ReadTxAddresses(v.snap, txid)
	if err != nil {
		return nil, err
	}
	if ta == nil || vout >= uint64(len(ta.Outputs)) {
		return nil, ordNotFound("output " + truncate(q, 80))
	}
	spends, err := db.ReadSpendsAt(v.snap, ta.Height, ta.Index)
	if err != nil {
		return nil, err
	}
	o := ta.Outputs[vout]
	out := &OrdOutput{Confirmations: v.confirmations(ta.Height), Outpoint: txid.String() + ":" + vs,
		Transaction: txid.String(), Value: o.Value, Spent: spends[uint32(vout)] != nil}
	out.Indexed = !out.Spent
	if a, ok := s.DescAddress(o.Desc); ok {
		out.Address = &a
	}
	out.ScriptPubkey = hex.EncodeToString(o.Desc) // the descriptor: the script, but P2PK as its P2PKH
	bal, err := runes.ReadOutput(v.snap, runes.Pos{Height: ta.Height, Index: ta.Index, Vout: uint32(vout)})
	if err != nil {
		return nil, err
	}
	out.Runes, err = ordRunesOf(v.snap, bal)
	return out, err
}

// OrdAddress answers an address's confirmed unspent outputs and runes.
func (s *UtxoService) OrdAddress(_ context.Context, address string) (*OrdAddress, error) {
	desc, err := s.addrDesc(address)
	if err != nil {
		return nil, err
	}
	v, err := s.ordView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	out := &OrdAddress{Outputs: []string{}, RunesBalances: [][3]any{}}
	var us []db.Utxo
	err = db.IterateUtxos(v.snap, desc, func(u *db.Utxo) (bool, error) {
		if len(us) >= s.cfg.Limits.MaxUtxos {
			return false, userErr("Address has more than %d unspent outputs", s.cfg.Limits.MaxUtxos)
		}
		us = append(us, *u)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		out.Outputs = append(out.Outputs, u.Txid.String()+":"+strconv.FormatUint(uint64(u.Vout), 10))
		out.SatBalance += u.Value
	}
	slices.Sort(out.Outputs) // ord sorts its outpoints
	bal, err := runes.ReadAddress(v.snap, desc)
	if err != nil {
		return nil, err
	}
	names := &runeNames{r: v.snap}
	for _, b := range bal {
		e, err := names.entry(b.ID)
		if err != nil {
			return nil, err
		}
		out.RunesBalances = append(out.RunesBalances, [3]any{runeInfo(e).SpacedName, ordDecimal(b.Amount, e.Divisibility), ordSymbol(e)})
	}
	slices.SortFunc(out.RunesBalances, func(a, b [3]any) int { return strings.Compare(a[0].(string), b[0].(string)) })
	return out, nil
}

// ordDecimal writes an amount of atomic units with divisibility decimals,
// trailing zeros dropped, as ord's Decimal displays it.
func ordDecimal(u runestone.U128, div uint8) string {
	s := u.String()
	if div == 0 {
		return s
	}
	if len(s) <= int(div) {
		s = strings.Repeat("0", int(div)-len(s)+1) + s
	}
	whole, frac := s[:len(s)-int(div)], strings.TrimRight(s[len(s)-int(div):], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
