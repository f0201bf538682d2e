package esplora

import (
	"encoding/json"
	"testing"
)

// Messages of the same shared parts share a key; one with a private
// value has none, and equal bytes in another slice are another part.
func TestWSMsgShareKey(t *testing.T) {
	part := json.RawMessage(`{"index":0,"blockTransactions":[]}`)
	same := json.RawMessage(`{"index":0,"blockTransactions":[]}`)
	build := func(v json.RawMessage, private bool) (string, bool) {
		m := &wsMsg{}
		m.add("projected-block-transactions", v)
		if private {
			m.addValue("txPosition", map[string]int{"block": 0})
		}
		return m.shareKey()
	}
	a, okA := build(part, false)
	b, okB := build(part, false)
	c, _ := build(same, false)
	_, okP := build(part, true)
	if !okA || !okB || a != b || a == c || okP {
		t.Fatalf("keys %q %q %q, shareable %v %v %v", a, b, c, okA, okB, okP)
	}
}
