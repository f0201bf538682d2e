package esplora

import (
	"encoding/json"
	"testing"
)

// Messages of the same shared parts share a key, whatever private parts
// they also hold; equal bytes in another slice are another part, and a
// message of private parts only has no key.
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
	p, okP := build(part, true)
	only := &wsMsg{}
	only.addValue("txPosition", 1)
	_, okO := only.shareKey()
	if !okA || !okB || a != b || a == c || !okP || p != a || okO {
		t.Fatalf("keys %q %q %q %q, shareable %v %v %v %v", a, b, c, p, okA, okB, okP, okO)
	}
}
