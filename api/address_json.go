package api

import (
	"bytes"
	"encoding/json"
)

// minSplicedTxids is the shortest txids list EncodeJSON writes itself.
const minSplicedTxids = 16

// txidsMark stands for the txids list while the rest of an Address is
// encoded: a lone NUL, which no txid holds; encoded it is markJSON.
var (
	txidsMark = []string{"\x00"}
	markJSON  = []byte(`"txids":["\u0000"]`)
)

// EncodeJSON writes a to buf exactly as a json.Encoder does (HTML
// escaping, the trailing newline). A page of a thousand txids is the
// larger part of its answer, and encoding/json looks at every byte of
// every string, through reflection per element: here the list is written
// as is when each txid needs no escaping (hex, or 0x and hex), and the
// rest of the answer by encoding/json around it.
func (a *Address) EncodeJSON(buf *bytes.Buffer) error {
	if len(a.Txids) < minSplicedTxids || !plainStrings(a.Txids) {
		return json.NewEncoder(buf).Encode(a)
	}
	c := *a
	c.Txids = txidsMark
	start := buf.Len()
	if err := json.NewEncoder(buf).Encode(&c); err != nil {
		return err
	}
	b := buf.Bytes()[start:]
	i := bytes.Index(b, markJSON)
	if i < 0 || bytes.Contains(b[i+1:], markJSON) {
		// Not where expected (a string elsewhere that encodes alike):
		// leave it all to encoding/json.
		buf.Truncate(start)
		return json.NewEncoder(buf).Encode(a)
	}
	tail := bytes.Clone(b[i+len(markJSON):])
	buf.Truncate(start + i)
	n := 0
	for _, s := range a.Txids {
		n += len(s) + 3
	}
	buf.Grow(n + len(`"txids":[]`) + len(tail))
	buf.WriteString(`"txids":[`)
	for k, s := range a.Txids {
		if k > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
	}
	buf.WriteByte(']')
	buf.Write(tail)
	return nil
}

// plainStrings reports whether encoding/json writes each of ss as it is
// between quotes: printable ASCII without the characters it escapes
// (quote, backslash, and <, >, & as HTML escaping does).
func plainStrings(ss []string) bool {
	for _, s := range ss {
		for i := 0; i < len(s); i++ {
			if !plainByte[s[i]] {
				return false
			}
		}
	}
	return true
}

// plainByte is plainStrings' test of one byte, a table: a page's 64 KB
// of txids are looked at byte by byte.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
