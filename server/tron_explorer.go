package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// chainRow is one line of a chain's own data on an explorer page.
type chainRow struct{ Key, Value string }

// chainExtraRows lays out a chainExtraData payload (Tron's resources,
// staking, votes and a tx's operation, energy and bandwidth) as sorted
// rows; nested values are flattened with dotted keys. Amounts stay in
// the node's unit (sun), as the payload carries them.
func chainExtraRows(c *api.ChainExtraData) []chainRow {
	if c == nil || len(c.Payload) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(c.Payload, &v); err != nil {
		return nil
	}
	var out []chainRow
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(strings.TrimPrefix(prefix+"."+k, "."), c)
			}
		case []any:
			if len(x) == 0 {
				out = append(out, chainRow{prefix, "none"})
			}
			for i, c := range x {
				walk(fmt.Sprintf("%s[%d]", prefix, i), c)
			}
		default:
			out = append(out, chainRow{prefix, fmt.Sprint(x)})
		}
	}
	walk("", v)
	slices.SortFunc(out, func(a, b chainRow) int { return strings.Compare(a.Key, b.Key) })
	return out
}
