package server

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// The explorer's generic rendering of coinSpecific (a Bitcoin-derived coin's
// extra data on a tx or an output: a CashTokens token, a Namecoin name
// operation, a Dash special tx payload, MWEB data): the value's JSON form,
// flattened into labelled rows, nested objects' keys joined with " › ".

// specificRow is one leaf of a coinSpecific value.
type specificRow struct {
	Key   string
	Value string
	// Long values (hex payloads) are shown shortened, in full on hover.
	Short string
}

const (
	maxSpecificRows  = 40
	maxSpecificValue = 72
)

// specificRows flattens v's JSON form; nil, empty and unmarshalable values
// give no rows. Object keys are sorted, as JSON objects have no order.
func specificRows(v any) []specificRow {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var tree any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil
	}
	var rows []specificRow
	flattenSpecific("", tree, &rows)
	if len(rows) > maxSpecificRows {
		rows = append(rows[:maxSpecificRows], specificRow{Key: "…", Value: "more fields (see the API)"})
	}
	for i := range rows {
		rows[i].Short = rows[i].Value
		if len(rows[i].Value) > maxSpecificValue {
			rows[i].Short = rows[i].Value[:maxSpecificValue-20] + "…" + rows[i].Value[len(rows[i].Value)-12:]
		}
	}
	return rows
}

func flattenSpecific(key string, v any, rows *[]specificRow) {
	if len(*rows) > maxSpecificRows {
		return
	}
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + " › " + k
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flattenSpecific(join(k), t[k], rows)
		}
	case []any:
		if len(t) == 0 {
			*rows = append(*rows, specificRow{Key: key, Value: "none"})
		}
		for i, e := range t {
			flattenSpecific(join(strconv.Itoa(i)), e, rows)
		}
	case nil:
		// absent
	case string:
		if t == "" {
			t = "(empty)"
		}
		*rows = append(*rows, specificRow{Key: key, Value: t})
	case json.Number:
		*rows = append(*rows, specificRow{Key: key, Value: t.String()})
	case bool:
		*rows = append(*rows, specificRow{Key: key, Value: strconv.FormatBool(t)})
	}
}

// specificLine is the one-line form of a coinSpecific value for tx lists:
// its first rows as "key: value", joined; "" when there is nothing.
func specificLine(v any) string {
	rows := specificRows(v)
	parts := make([]string, 0, 3)
	for i, r := range rows {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, r.Key+": "+r.Short)
	}
	return strings.Join(parts, " · ")
}
