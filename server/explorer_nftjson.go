package server

import (
	"bytes"
	"encoding/json"
)

// indentBounded is the JSON document body indented for reading, or, when
// indenting would pass limit bytes, compacted. Indentation grows with the
// square of the nesting: 20 KB of nested brackets indent to 200 MB, so the
// size is worked out from the brackets before anything is written.
func indentBounded(body []byte, limit int) string {
	if indentedSize(body) <= limit {
		var b bytes.Buffer
		if json.Indent(&b, body, "", "  ") == nil {
			return b.String()
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, body) == nil {
		return b.String()
	}
	return ""
}

// indentedSize bounds the size of body indented by two spaces a level:
// every bracket and comma outside strings starts a new line indented to
// its depth.
func indentedSize(body []byte) int {
	n, depth := len(body), 0
	inString, escaped := false, false
	for _, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			n += 1 + 2*depth
		case c == ']' || c == '}':
			depth = max(depth-1, 0)
			n += 1 + 2*depth
		case c == ',':
			n += 1 + 2*depth
		}
	}
	return n
}
