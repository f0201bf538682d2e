package api

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/db"
)

// UtxoList is a list of UTXOs that writes itself as JSON (the REST
// server's writeJSON takes EncodeJSON, the websocket's json.Marshal takes
// MarshalJSON): a whale's list has thousands, and encoding/json spends
// reflection and a look at every byte of every string on each.
type UtxoList []Utxo

// EncodeJSON writes l to buf exactly as a json.Encoder does (HTML
// escaping, the trailing newline). An element with runes, or with a
// string encoding/json would escape, is left to encoding/json.
func (l UtxoList) EncodeJSON(buf *bytes.Buffer) error {
	if err := l.appendJSON(buf); err != nil {
		return err
	}
	buf.WriteByte('\n')
	return nil
}

// MarshalJSON is EncodeJSON without the newline, as json.Marshal wants.
func (l UtxoList) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := l.appendJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// utxoJSONSize is about the bytes of one element without address and
// path: a buffer grown once holds the list.
const utxoJSONSize = 150

func (l UtxoList) appendJSON(buf *bytes.Buffer) error {
	if l == nil {
		buf.WriteString("null")
		return nil
	}
	buf.Grow(2 + len(l)*utxoJSONSize)
	buf.WriteByte('[')
	var num [24]byte
	for i := range l {
		u := &l[i]
		if i > 0 {
			buf.WriteByte(',')
		}
		if len(u.Runes) > 0 || !plainString(u.Txid) || !plainString(u.Address) || !plainString(u.Path) {
			b, err := json.Marshal(u)
			if err != nil {
				return err
			}
			buf.Write(b)
			continue
		}
		buf.WriteString(`{"txid":"`)
		buf.WriteString(u.Txid)
		buf.WriteString(`","vout":`)
		buf.Write(strconv.AppendUint(num[:0], uint64(u.Vout), 10))
		buf.WriteString(`,"value":`)
		writeAmount(buf, u.Value)
		if u.Height != 0 {
			buf.WriteString(`,"height":`)
			buf.Write(strconv.AppendInt(num[:0], u.Height, 10))
		}
		buf.WriteString(`,"confirmations":`)
		buf.Write(strconv.AppendUint(num[:0], uint64(u.Confirmations), 10))
		if u.Address != "" {
			buf.WriteString(`,"address":"`)
			buf.WriteString(u.Address)
			buf.WriteByte('"')
		}
		if u.Path != "" {
			buf.WriteString(`,"path":"`)
			buf.WriteString(u.Path)
			buf.WriteByte('"')
		}
		if u.LockTime != 0 {
			buf.WriteString(`,"lockTime":`)
			buf.Write(strconv.AppendUint(num[:0], uint64(u.LockTime), 10))
		}
		if u.Coinbase {
			buf.WriteString(`,"coinbase":true`)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	return nil
}

// writeAmount writes a as Amount.MarshalJSON renders it (encoding/json
// writes a nil pointer as null).
func writeAmount(buf *bytes.Buffer, a *Amount) {
	if a == nil {
		buf.WriteString("null")
		return
	}
	var num [24]byte
	buf.Write(a.appendJSON(num[:0]))
}

// plainString is plainStrings of one string.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// appendConfirmedUtxos appends us, rendered, to out. The txid strings
// share one allocation, and so do the amounts (their big.Ints and their
// words): per output, the answer allocated a string, a big.Int and its
// words, three of a whale's tens of thousands of allocations.
func appendConfirmedUtxos(v *view, out []Utxo, us []db.Utxo) []Utxo {
	var txids strings.Builder
	txids.Grow(64 * len(us))
	for i := range us {
		var h [64]byte
		hex.Encode(h[:], us[i].Txid[:])
		txids.Write(h[:])
	}
	all := txids.String()
	vals := make([]uint64, len(us))
	for i := range us {
		vals[i] = us[i].Value
	}
	amounts := newAmounts(vals)
	for i := range us {
		u := &us[i]
		out = append(out, Utxo{
			Txid: all[64*i : 64*i+64], Vout: u.Vout, Value: amounts[i], Height: int64(u.Height),
			Confirmations: v.confirmations(u.Height), Coinbase: u.Coinbase,
		})
	}
	return out
}

// wordsPerUint64 is how many big.Words a uint64 takes.
const wordsPerUint64 = 64 / bits.UintSize

// newAmounts returns Amounts of vals (as NewAmount does each) whose
// big.Ints and words lie in two shared slices. The words are each
// Amount's own: nothing changes an answer's amounts after rendering.
func newAmounts(vals []uint64) []*Amount {
	ints := make([]big.Int, len(vals))
	words := make([]big.Word, wordsPerUint64*len(vals))
	out := make([]*Amount, len(vals))
	for i, v := range vals {
		w := words[wordsPerUint64*i : wordsPerUint64*(i+1) : wordsPerUint64*(i+1)]
		if wordsPerUint64 == 1 {
			w[0] = big.Word(v)
		} else {
			w[0], w[len(w)-1] = big.Word(uint32(v)), big.Word(v>>32)
		}
		ints[i].SetBits(w)
		out[i] = (*Amount)(&ints[i])
	}
	return out
}
